"""A symlink planted in the sessions folder is not a saved state, whichever way it is looked up."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

SECRET = "outside-secret-cookie-value"


@pytest.fixture
def app(app_factory: Any) -> Any:
    return app_factory(**{"security.allowStateExport": True})


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


@pytest.fixture
def planted(app: Any, tmp_path: Path) -> Path:
    """``sessions/planted.json``: a symlink to a state-shaped file outside the state dir."""
    outside = tmp_path / "elsewhere" / "victim.json"
    outside.parent.mkdir()
    outside.write_text(json.dumps({"version": 1, "name": "victim", "savedAt": "2099-01-01T00:00:00.000Z",
                                   "cookies": [{"name": "sid", "value": SECRET, "domain": "127.0.0.1", "path": "/"}],
                                   "storage": {}, "origins": [], "metadata": {}, "encrypted": False}))
    sessions = app.extensions["pinchtab"].config.server.state_dir / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    link = sessions / "planted.json"
    os.symlink(outside, link)
    # An old timestamp, so clean would pick the link if it looked at it at all.
    os.utime(link, (1, 1), follow_symlinks=False)
    return outside


@pytest.mark.parametrize("name", ["planted", "plant", "p"])
def test_load_and_show_never_reach_through_a_planted_symlink(client, planted, name):
    r = client.post("/state/load", json={"name": name})
    assert r.status_code == 404, r.json
    assert r.json["code"] == "state_not_found"
    r = client.get(f"/state/show?name={name}&reveal=true")
    assert r.status_code == 404, r.json
    assert SECRET not in r.get_data(as_text=True)


def test_list_leaves_a_planted_symlink_out(client, planted):
    r = client.get("/state/list")
    assert r.status_code == 200, r.json
    assert [s["name"] for s in r.json["states"]] == []


def test_delete_and_clean_leave_the_link_and_its_target_alone(app, client, planted):
    link = app.extensions["pinchtab"].config.server.state_dir / "sessions" / "planted.json"
    r = client.delete("/state?name=planted")
    assert r.status_code == 404, r.json
    r = client.post("/state/clean", json={"olderThanHours": 0})
    assert r.status_code == 200, r.json
    assert r.json["removed"] == 0
    assert link.is_symlink() and planted.read_text().count(SECRET) == 1


def test_a_real_state_next_to_the_link_is_still_found_by_prefix(client, planted, site):
    r = client.post("/navigate", json={"url": site.url("storage.html")})
    assert r.status_code == 200, r.json
    r = client.post("/state/save", json={"name": "plan-b"})
    assert r.status_code == 200, r.json
    r = client.get("/state/show?name=plan")
    assert r.status_code == 200, r.json
    assert r.json["name"] == "plan-b"
    assert [s["name"] for s in client.get("/state/list").json["states"]] == ["plan-b"]
