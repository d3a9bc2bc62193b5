"""Tests for app.config: sources, precedence, validation messages, redaction.

Every test passes an explicit env mapping with HOME pointing into tmp_path, so
neither the real home directory nor the real environment is ever read.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import pickle
from pathlib import Path
from typing import Any

import pytest

from app.config import Config, ConfigError, config_path, is_loopback, load_config


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fake home directory with no config file in it."""
    path = tmp_path / "home"
    path.mkdir()
    return path


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {"HOME": str(home), **extra}


def _write(tmp_path: Path, data: Any, name: str = "config.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _with_file(tmp_path: Path, home: Path, data: Any, **extra: str) -> dict[str, str]:
    return _env(home, PINCHTAB_CONFIG=str(_write(tmp_path, data)), **extra)


def _error(env: dict[str, str], overrides: dict[str, object] | None = None) -> ConfigError:
    with pytest.raises(ConfigError) as info:
        load_config(env=env, overrides=overrides)
    return info.value


# ---------------------------------------------------------------- defaults


def test_defaults_without_any_file(home: Path) -> None:
    config = load_config(env=_env(home))

    assert config.server.port == 9867
    assert config.server.bind == "127.0.0.1"
    assert config.server.token == ""
    assert config.server.state_dir == home / ".pinchtab"
    assert isinstance(config.server.state_dir, Path)
    assert config.server.max_body_bytes == 10 * 1024 * 1024
    assert config.browser.extra_flags == ()
    assert config.browser.cdp_url == ""
    assert config.instance_defaults.mode == "headless"
    assert config.instance_defaults.headless is True
    assert config.instance_defaults.max_tabs == 20
    assert config.instance_defaults.stealth_level == "light"
    assert config.security.allow_evaluate is False
    assert config.security.allow_file_scheme is False
    assert config.security.allowed_domains == ("*",)  # navigation open; strict IDPI needs a list
    assert config.security.download_max_bytes == 20 * 1024 * 1024
    assert config.security.upload_max_files == 8
    assert config.security.enable_action_guards is True
    assert config.security.attach.enabled is False
    assert config.security.attach.allow_schemes == ("ws", "wss", "http", "https")
    assert config.profiles.base_dir == home / ".pinchtab" / "profiles"
    assert config.profiles.default_profile == "default"
    assert config.multi_instance.strategy == "always-on"
    assert (config.multi_instance.instance_port_start, config.multi_instance.instance_port_end) == (9868, 9968)
    assert config.multi_instance.restart.max_restarts == 20
    assert config.multi_instance.restart.stable_after_sec == 300
    assert config.timeouts.navigate_sec == 60
    assert config.timeouts.wait_nav_ms == 1000
    assert config.observability.activity.enabled is True
    assert config.observability.activity.retention_days == 30


def test_default_file_location_is_read(home: Path) -> None:
    (home / ".pinchtab").mkdir()
    (home / ".pinchtab" / "config.json").write_text('{"server": {"port": 9000}}', encoding="utf-8")

    assert load_config(env=_env(home)).server.port == 9000


def test_config_is_immutable(home: Path) -> None:
    config = load_config(env=_env(home))

    with pytest.raises(dataclasses.FrozenInstanceError):
        config.server.port = 1  # type: ignore[misc]


# ---------------------------------------------------------------- file


def test_file_values(tmp_path: Path, home: Path) -> None:
    data = {
        "server": {"port": "9100", "bind": "0.0.0.0", "token": "s3cret", "stateDir": "~/state"},
        "browser": {"extraFlags": ["--lang=fr"], "cdpUrl": "ws://127.0.0.1:9222/devtools/browser/x"},
        "instanceDefaults": {"mode": "headed", "stealthLevel": "full", "profile": "work"},
        "security": {"allowEvaluate": True, "attach": {"enabled": True, "allowHosts": ["10.0.0.2"]}},
        "profiles": {"baseDir": str(tmp_path / "profiles")},
        "multiInstance": {"strategy": "explicit", "restart": {"maxRestarts": 3}},
        "timeouts": {"actionSec": 5},
        "observability": {"activity": {"enabled": False}},
    }
    config = load_config(env=_with_file(tmp_path, home, data))

    assert config.server.port == 9100  # numeric string accepted for the port
    assert config.server.bind == "0.0.0.0"
    assert config.server.token == "s3cret"
    assert config.server.state_dir == home / "state"
    assert config.browser.extra_flags == ("--lang=fr",)
    assert config.browser.cdp_url == "ws://127.0.0.1:9222/devtools/browser/x"
    assert config.instance_defaults.mode == "headed"
    assert config.instance_defaults.headless is False
    assert config.instance_defaults.stealth_level == "full"
    assert config.instance_defaults.profile == "work"
    assert config.security.allow_evaluate is True
    assert config.security.allow_cookies is False
    assert config.security.attach.enabled is True
    assert config.security.attach.allow_hosts == ("10.0.0.2",)
    assert config.security.attach.allow_schemes == ("ws", "wss", "http", "https")
    assert config.profiles.base_dir == tmp_path / "profiles"
    assert config.multi_instance.strategy == "explicit"
    assert config.multi_instance.restart.max_restarts == 3
    assert config.multi_instance.restart.max_backoff_sec == 60
    assert config.timeouts.action_sec == 5
    assert config.observability.activity.enabled is False


def test_to_dict_round_trips(tmp_path: Path, home: Path) -> None:
    data = {"server": {"token": "tok", "port": 9200}, "browser": {"extraFlags": ["--mute-audio"]}}
    config = load_config(env=_with_file(tmp_path, home, data))

    dumped = config.to_dict()
    assert dumped["server"]["token"] == "tok"
    assert dumped["server"]["stateDir"] == str(home / ".pinchtab")
    assert dumped["multiInstance"]["restart"]["maxRestarts"] == 20
    child = tmp_path / "child.json"
    child.write_text(json.dumps(dumped), encoding="utf-8")
    assert load_config(env=_env(home, PINCHTAB_CONFIG=str(child))) == config


# ---------------------------------------------------------------- environment


def test_env_overrides_file(tmp_path: Path, home: Path) -> None:
    env = _with_file(
        tmp_path,
        home,
        {"server": {"port": 9100, "bind": "127.0.0.1"}, "browser": {"binary": "/from/file"}},
        PINCHTAB_PORT="9300",
        BRIDGE_BIND="0.0.0.0",
        PINCHTAB_STATE_DIR="~/elsewhere",
        CHROME_BINARY="/usr/bin/chromium",
        CDP_URL="http://127.0.0.1:9222",
        BRIDGE_HEADLESS="false",
    )
    config = load_config(env=env)

    assert config.server.port == 9300
    assert config.server.bind == "0.0.0.0"
    assert config.server.state_dir == home / "elsewhere"
    assert config.profiles.base_dir == home / "elsewhere" / "profiles"
    assert config.browser.binary == "/usr/bin/chromium"
    assert config.browser.cdp_url == "http://127.0.0.1:9222"
    assert config.instance_defaults.mode == "headed"


def test_token_precedence(tmp_path: Path, home: Path) -> None:
    file_only = _with_file(tmp_path, home, {"server": {"token": "file"}})
    assert load_config(env=file_only).server.token == "file"
    assert load_config(env={**file_only, "BRIDGE_TOKEN": "bridge"}).server.token == "bridge"
    both = {**file_only, "BRIDGE_TOKEN": "bridge", "PINCHTAB_TOKEN": "pinchtab"}
    assert load_config(env=both).server.token == "pinchtab"


def test_first_env_var_wins_and_empty_counts_as_unset(home: Path) -> None:
    assert load_config(env=_env(home, CHROME_BIN="/a", CHROME_BINARY="/b")).browser.binary == "/a"
    assert load_config(env=_env(home, PINCHTAB_PORT="", BRIDGE_PORT="9400")).server.port == 9400


@pytest.mark.parametrize(("value", "mode"), [("0", "headed"), ("False", "headed"), ("true", "headless"), ("1", "headless")])
def test_bridge_headless(home: Path, value: str, mode: str) -> None:
    env = _env(home, BRIDGE_HEADLESS=value)
    assert load_config(env=env).instance_defaults.mode == mode


def test_bad_bridge_headless_names_the_variable(home: Path) -> None:
    assert _error(_env(home, BRIDGE_HEADLESS="maybe")).key == "BRIDGE_HEADLESS"


def test_bad_env_value_names_the_variable(home: Path) -> None:
    err = _error(_env(home, PINCHTAB_PORT="abc"))

    assert err.key == "PINCHTAB_PORT"
    assert "server.port" in err.reason
    assert str(err).startswith("PINCHTAB_PORT: ")


def test_bad_env_cdp_url_names_the_variable(home: Path) -> None:
    assert _error(_env(home, CDP_URL="file:///etc/passwd")).key == "CDP_URL"


# ---------------------------------------------------------------- command line


def test_cli_overrides_beat_env(tmp_path: Path, home: Path) -> None:
    env = _with_file(tmp_path, home, {"server": {"port": 9100}}, PINCHTAB_PORT="9300", CDP_URL="ws://a:1")
    config = load_config(
        env=env,
        overrides={"server.port": 9999, "browser.cdpUrl": "ws://b:2", "security.attach.enabled": True},
    )

    assert config.server.port == 9999
    assert config.browser.cdp_url == "ws://b:2"
    assert config.security.attach.enabled is True


def test_cli_none_means_not_given(home: Path) -> None:
    config = load_config(env=_env(home, PINCHTAB_PORT="9300"), overrides={"server.port": None})
    assert config.server.port == 9300


def test_bad_cli_value_names_its_dotted_key_not_the_env_var(home: Path) -> None:
    err = _error(_env(home, PINCHTAB_PORT="9300"), overrides={"server.port": 0})
    assert err.key == "server.port"


@pytest.mark.parametrize("key", ["server.prot", "nosuch.port", "server", "server.port.x"])
def test_unknown_cli_key_is_an_error(home: Path, key: str) -> None:
    assert _error(_env(home), overrides={key: 1}).key == key


# ---------------------------------------------------------------- file errors


def test_invalid_json_names_file_and_line(tmp_path: Path, home: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{\n  "server": {\n    "port": 9867,\n  }\n}\n', encoding="utf-8")

    err = _error(_env(home, PINCHTAB_CONFIG=str(path)))

    assert err.key == str(path)
    assert "line 4" in err.reason
    assert "column" in err.reason


def test_top_level_must_be_an_object(tmp_path: Path, home: Path) -> None:
    err = _error(_with_file(tmp_path, home, [1, 2]))
    assert err.key == str(tmp_path / "config.json")


def test_missing_named_config_file_is_an_error(tmp_path: Path, home: Path) -> None:
    missing = tmp_path / "nope.json"

    err = _error(_env(home, PINCHTAB_CONFIG=str(missing)))

    assert err.key == "PINCHTAB_CONFIG"
    assert str(missing) in err.reason


def test_the_config_file_is_the_named_one_else_the_default_under_home(tmp_path: Path, home: Path) -> None:
    named = tmp_path / "named.json"
    assert config_path(_env(home, PINCHTAB_CONFIG=str(named))) == named
    assert config_path(_env(home)) == home / ".pinchtab" / "config.json"
    assert config_path(_env(home, PINCHTAB_CONFIG="~/elsewhere.json")) == home / "elsewhere.json"


def test_section_of_wrong_type_names_the_section(tmp_path: Path, home: Path) -> None:
    err = _error(_with_file(tmp_path, home, {"server": 5}, PINCHTAB_PORT="9000"))
    assert err.key == "server"


# ---------------------------------------------------------------- bad values


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"server": {"port": "abc"}}, "server.port"),
        ({"server": {"port": True}}, "server.port"),
        ({"server": {"port": 9867.5}}, "server.port"),
        ({"server": {"port": 0}}, "server.port"),
        ({"server": {"port": 70000}}, "server.port"),
        ({"instanceDefaults": {"mode": "invisible"}}, "instanceDefaults.mode"),
        ({"instanceDefaults": {"stealthLevel": "max"}}, "instanceDefaults.stealthLevel"),
        ({"instanceDefaults": {"maxTabs": 0}}, "instanceDefaults.maxTabs"),
        ({"instanceDefaults": {"profile": "../escape"}}, "instanceDefaults.profile"),
        ({"instanceDefaults": {"userAgent": "x\r\nX-Evil: 1"}}, "instanceDefaults.userAgent"),
        ({"browser": {"cdpUrl": "file:///run/chrome.sock"}}, "browser.cdpUrl"),
        ({"browser": {"cdpUrl": "ftp://host:21"}}, "browser.cdpUrl"),
        ({"browser": {"extraFlags": "--mute-audio"}}, "browser.extraFlags"),
        ({"multiInstance": {"instancePortStart": 10000, "instancePortEnd": 9000}}, "multiInstance.instancePortStart"),
        ({"multiInstance": {"strategy": "sometimes"}}, "multiInstance.strategy"),
        ({"multiInstance": {"restart": {"initBackoffSec": 10, "maxBackoffSec": 5}}}, "multiInstance.restart.maxBackoffSec"),
        ({"timeouts": {"navigateSec": 0}}, "timeouts.navigateSec"),
        ({"security": {"attach": {"allowSchemes": ["ws", "file"]}}}, "security.attach.allowSchemes[1]"),
    ],
)
def test_bad_value_names_its_dotted_key(tmp_path: Path, home: Path, data: dict[str, Any], key: str) -> None:
    err = _error(_with_file(tmp_path, home, data))

    assert err.key == key
    assert err.reason
    assert str(err) == f"{key}: {err.reason}"


@pytest.mark.parametrize(
    "flag",
    [
        "--remote-debugging-port=9222",
        "--remote-debugging-port",
        "-remote-debugging-port=1",
        "--user-data-dir=/srv/profile",
        "--USER-DATA-DIR=/srv/profile",
        "--disable-web-security",
    ],
)
def test_forbidden_extra_flag(tmp_path: Path, home: Path, flag: str) -> None:
    err = _error(_with_file(tmp_path, home, {"browser": {"extraFlags": ["--mute-audio", flag]}}))

    assert err.key == "browser.extraFlags[1]"
    assert "not allowed" in err.reason


def test_allowed_extra_flags_pass(tmp_path: Path, home: Path) -> None:
    flags = ["--no-sandbox", "--window-size=1280,800", "--disable-gpu"]
    config = load_config(env=_with_file(tmp_path, home, {"browser": {"extraFlags": flags}}))
    assert config.browser.extra_flags == tuple(flags)


def test_first_problem_in_schema_order_is_reported(tmp_path: Path, home: Path) -> None:
    data = {"timeouts": {"actionSec": 0}, "server": {"port": "abc"}}
    assert _error(_with_file(tmp_path, home, data)).key == "server.port"


# ---------------------------------------------------------------- unknown keys


def test_unknown_keys_warn_but_load(tmp_path: Path, home: Path, caplog: pytest.LogCaptureFixture) -> None:
    data = {
        "server": {"port": 9100, "trustProxy": True},
        "autoSolver": {"enabled": True},
        "security": {"attach": {"enabled": False, "weird": 1}, "idpi": {"enabled": True, "odd": 2}},
    }
    with caplog.at_level(logging.WARNING, logger="app.config"):
        config = load_config(env=_with_file(tmp_path, home, data))

    assert config.server.port == 9100
    messages = "\n".join(r.getMessage() for r in caplog.records if r.levelno == logging.WARNING)
    for key in ("server.trustProxy", "autoSolver", "security.attach.weird", "security.idpi.odd"):
        assert repr(key) in messages
    # Keys of an unknown section are not listed one by one; known keys are not warned about.
    assert "autoSolver.enabled" not in messages
    assert "'security.idpi.enabled'" not in messages


# ---------------------------------------------------------------- secrets


def test_public_dict_hides_token(tmp_path: Path, home: Path, caplog: pytest.LogCaptureFixture) -> None:
    config = load_config(env=_env(home, PINCHTAB_TOKEN="hunter2", CDP_URL="wss://u:pw@cdp.example/x?token=abc&v=1"))

    public = config.public_dict()
    assert public["server"]["token"] == "***"
    assert "hunter2" not in json.dumps(public)
    assert "pw" not in public["browser"]["cdpUrl"] and "abc" not in public["browser"]["cdpUrl"]
    assert public["browser"]["cdpUrl"].startswith("wss://u:***@cdp.example/x?")
    assert "hunter2" not in repr(config)
    assert config.to_dict()["server"]["token"] == "hunter2"


def test_public_dict_leaves_empty_token_empty(home: Path) -> None:
    assert load_config(env=_env(home)).public_dict()["server"]["token"] == ""


# ---------------------------------------------------------------- helpers


def test_config_error_shape_and_pickling() -> None:
    err = ConfigError("server.port", "Not a valid integer.")

    assert (err.key, err.reason, str(err)) == ("server.port", "Not a valid integer.", "server.port: Not a valid integer.")
    again = pickle.loads(pickle.dumps(err))
    assert (again.key, again.reason) == (err.key, err.reason)


@pytest.mark.parametrize(
    ("bind", "expected"),
    [
        ("127.0.0.1", True),
        ("127.1.2.3", True),
        ("::1", True),
        ("[::1]", True),
        ("localhost", True),
        ("LocalHost", True),
        ("::ffff:127.0.0.1", True),
        ("0.0.0.0", False),
        ("", False),
        ("::", False),
        ("192.168.1.5", False),
        ("example.com", False),
    ],
)
def test_is_loopback(bind: str, expected: bool) -> None:
    assert is_loopback(bind) is expected


def test_load_config_returns_config(home: Path) -> None:
    assert isinstance(load_config(env=_env(home)), Config)
