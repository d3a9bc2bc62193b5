"""``browsers.providers`` and ``instanceDefaults.provider`` as the config file states them."""
from __future__ import annotations

import json

import pytest

from app.config import ConfigError, load_config


def load(tmp_path, cfg):  # type: ignore[no-untyped-def]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    return load_config(env={"HOME": str(tmp_path), "PINCHTAB_CONFIG": str(path)})


def test_no_providers_means_this_machine_alone(tmp_path) -> None:
    fleet = load(tmp_path, {}).browsers.fleet
    assert [(p.name, p.kind) for p in fleet] == [("local", "local")]


def test_providers_load_and_every_secret_is_masked_in_the_public_view(tmp_path) -> None:
    config = load(tmp_path, {"browsers": {"providers": [
        {"name": "east", "kind": "cdp", "capacity": 4, "url": "ws://10.0.0.5:3000/chromium?token=abc"},
        {"name": "grid", "kind": "webdriver", "url": "http://grid:4444/wd/hub",
         "capabilities": {"browserName": "chrome"}, "headers": {"Authorization": "Basic dXNlcjpwYXNz"}},
        {"name": "here", "kind": "local", "capacity": 2}]},
        "instanceDefaults": {"provider": "east"}})
    assert [(p.name, p.capacity) for p in config.browsers.fleet] == [("east", 4), ("grid", 10), ("here", 2)]
    shown = json.dumps(config.public_dict()["browsers"])
    assert "abc" not in shown and "dXNlcjpwYXNz" not in shown and "token=***" in shown
    assert "abc" not in repr(config)


@pytest.mark.parametrize("cfg, message", [
    ({"browsers": {"providers": [{"name": "a", "kind": "cdp"}]}}, "browsers.providers[0].url: a cdp provider needs"),
    ({"browsers": {"providers": [{"name": "a", "kind": "local", "url": "ws://x"}]}}, "takes no url"),
    ({"browsers": {"providers": [{"name": "a", "kind": "webdriver", "url": "ws://x"}]}}, "http(s)://"),
    ({"browsers": {"providers": [{"name": "a", "kind": "ftp"}]}}, "browsers.providers[0].kind"),
    ({"browsers": {"providers": [{"name": "a"}, {"name": "a"}]}}, "provider names must differ: a"),
    ({"instanceDefaults": {"provider": "nowhere"}}, "no provider named 'nowhere'"),
])
def test_a_provider_the_server_could_not_use_stops_the_start_naming_the_key(tmp_path, cfg, message) -> None:
    with pytest.raises(ConfigError) as refused:
        load(tmp_path, cfg)
    assert message in str(refused.value)
