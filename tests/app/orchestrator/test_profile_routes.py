"""The profile routes of server mode (``app/blueprints/profiles.py``) over HTTP, with Flask's test client.

No browser and no orchestrator: the app under test is the profiles blueprint with the error
mapping, auth and the activity log around it, as the server app wires them. Profile dirs are
built in the shapes Chrome writes (``tests/support/chrome_shapes.py``).
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from support.chrome_shapes import info_cache_entry, local_state, make_user_data_dir, preferences, write_json
from support.config import make_config

# The keys every entry of GET /profiles carries (reference §6).
LIST_KEYS = {"id", "name", "path", "pathExists", "created", "lastUsed", "diskUsage", "sizeMB", "running",
             "source", "chromeProfileName", "accountEmail", "accountName", "hasAccount", "useWhen", "description"}
TOKEN = "t0ken-for-tests"


def expected_id(name: str) -> str:
    return "prof_" + hashlib.sha256(name.encode()).hexdigest()[:8]


def build_blueprint_app(config: Any, token: str = "") -> Flask:
    """The profiles blueprint wired the way the server app wires it."""
    from app.access import auth
    from app.orchestrator.routes import profiles
    from app.web import activity, errors

    app = Flask("pinchtab-profiles-test")
    app.config["MAX_CONTENT_LENGTH"] = config.server.max_body_bytes
    errors.register(app)
    auth.register(app, token)
    app.extensions["pinchtab.config"] = config
    activity.register(app, config)
    app.register_blueprint(profiles.bp)
    app.testing = True
    return app


def build_server_app(config: Any, token: str = "") -> Flask:
    from app.serving.apps import server_app as create_server_app

    app = create_server_app(config, start_watch=False)  # never the manager's watcher in these tests
    app.testing = True
    return app


BUILDERS = {"blueprint": build_blueprint_app, "server_app": build_server_app}


@pytest.fixture(params=sorted(BUILDERS))
def build(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[..., Flask]]:
    """Build the app under test: ``build(token=..., **config_overrides)``."""
    built: list[Flask] = []

    def make(token: str = "", **overrides: Any) -> Flask:
        if token:
            overrides["server.token"] = token
        config = make_config(tmp_path, **overrides)
        app = BUILDERS[request.param](config, token)
        built.append(app)
        return app

    yield make
    for app in built:
        store = app.extensions.get("pinchtab.profiles")
        if store is not None:
            store.close()
        log = app.extensions.get("pinchtab.activity")
        if log is not None:
            log.close()


@pytest.fixture
def app(build: Callable[..., Flask]) -> Flask:
    return build()


@pytest.fixture
def client(app: Flask) -> Any:
    return app.test_client()


@pytest.fixture
def base_dir(app: Flask) -> Path:
    return Path(app.extensions["pinchtab.config"].profiles.base_dir)


def store_of(app: Flask) -> Any:
    from app.orchestrator.routes.profiles import store

    with app.app_context():
        return store()


def assert_error(resp: Any, status: int, code: str) -> dict[str, Any]:
    assert resp.status_code == status, (resp.status_code, resp.get_data(as_text=True))
    body = resp.get_json()
    assert body["code"] == code, body
    assert isinstance(body["error"], str) and body["error"], body
    return body


def create(client: Any, name: str, **extra: Any) -> dict[str, Any]:
    resp = client.post("/profiles", json={"name": name, **extra})
    assert resp.status_code == 201, resp.get_json()
    return resp.get_json()


# --- list ------------------------------------------------------------------------------------------
def test_list_is_empty_on_a_new_store(client: Any) -> None:
    resp = client.get("/profiles")
    assert resp.status_code == 200
    assert resp.get_json() == []


def test_list_entries_carry_every_key(client: Any) -> None:
    create(client, "plain", description="for tests", useWhen="always")
    [entry] = client.get("/profiles").get_json()
    assert LIST_KEYS <= set(entry), LIST_KEYS - set(entry)
    assert entry["id"] == expected_id("plain")
    assert entry["name"] == "plain"
    assert entry["description"] == "for tests"
    assert entry["useWhen"] == "always"
    assert entry["source"] == "created"
    assert entry["pathExists"] is True
    assert entry["running"] is False
    assert entry["hasAccount"] is False
    assert entry["accountEmail"] is None and entry["accountName"] is None
    assert Path(entry["path"]).name == "plain"


def test_list_sizes_agree_after_refresh(client: Any, base_dir: Path) -> None:
    make_user_data_dir(base_dir / "sized", singleton=None)
    [entry] = client.get("/profiles?refresh=true").get_json()
    assert isinstance(entry["diskUsage"], int) and entry["diskUsage"] > 10_000
    assert entry["sizeMB"] == pytest.approx(entry["diskUsage"] / (1024 * 1024), abs=0.01)


def test_list_reads_identity_from_chrome_shaped_files(client: Any, base_dir: Path) -> None:
    # Preferences and Local State disagree: Preferences wins.
    make_user_data_dir(base_dir / "both", prefs=preferences(email="ada@example.com", full_name="Ada Lovelace",
                                                            profile_name="Person 1"),
                       state=local_state({"Default": info_cache_entry(user_name="bob@example.com",
                                                                      gaia_name="Bob Babbage", name="Work")}))
    # Only Local State knows the account (Preferences has none); a non-Default entry is used.
    make_user_data_dir(base_dir / "state-only", prefs=preferences(email=None, profile_name=""),
                       state=local_state({"Profile 1": info_cache_entry(user_name="cy@example.com",
                                                                        gaia_name="Cy Young", name="Home")}))
    # A profile whose Chrome files are corrupt has no identity, and the list still answers.
    broken = base_dir / "broken"
    (broken / "Default").mkdir(parents=True)
    (broken / "Default" / "Preferences").write_text('{"account_info": [')
    (broken / "Local State").write_text("not json")

    resp = client.get("/profiles")
    assert resp.status_code == 200
    by_name = {p["name"]: p for p in resp.get_json()}
    assert set(by_name) == {"both", "state-only", "broken"}
    for entry in by_name.values():
        assert LIST_KEYS <= set(entry), (entry["name"], LIST_KEYS - set(entry))

    both = by_name["both"]
    assert (both["accountEmail"], both["accountName"], both["hasAccount"]) == ("ada@example.com", "Ada Lovelace", True)
    assert both["chromeProfileName"] == "Person 1"

    state_only = by_name["state-only"]
    assert (state_only["accountEmail"], state_only["accountName"]) == ("cy@example.com", "Cy Young")
    assert state_only["hasAccount"] is True
    assert state_only["chromeProfileName"] == "Home"

    assert by_name["broken"]["hasAccount"] is False
    assert by_name["broken"]["accountEmail"] is None
    assert by_name["broken"]["chromeProfileName"] is None


def test_list_hides_temporary_instance_profiles_unless_all(client: Any, base_dir: Path) -> None:
    create(client, "kept")
    make_user_data_dir(base_dir / "instance-1767225600000", singleton=None)

    names = [p["name"] for p in client.get("/profiles").get_json()]
    assert names == ["kept"]

    resp = client.get("/profiles?all=true")
    assert resp.status_code == 200
    everything = {p["name"]: p for p in resp.get_json()}
    assert set(everything) == {"kept", "instance-1767225600000"}
    assert everything["instance-1767225600000"]["temporary"] is True
    assert everything["instance-1767225600000"]["id"] == expected_id("instance-1767225600000")
    assert not everything["kept"].get("temporary", False)
    # The raw records leave empty fields out.
    assert "description" not in everything["kept"]
    assert all(v is not None and v != "" for p in everything.values() for v in p.values())


def test_temporary_profile_is_still_reachable_by_name(client: Any, base_dir: Path) -> None:
    make_user_data_dir(base_dir / "instance-42", singleton=None)
    resp = client.get("/profiles/instance-42")
    assert resp.status_code == 200
    assert resp.get_json()["name"] == "instance-42"


# --- create --------------------------------------------------------------------------------------------
def test_create_answers_201_with_id_and_name(client: Any, base_dir: Path) -> None:
    resp = client.post("/profiles", json={"name": "Work Mail", "description": "inbox", "useWhen": "email"})
    assert resp.status_code == 201
    assert resp.get_json() == {"status": "created", "id": expected_id("Work Mail"), "name": "Work Mail"}
    assert (base_dir / "Work Mail").is_dir()
    meta = json.loads((base_dir / "Work Mail" / "profile.json").read_text())
    assert (meta["description"], meta["useWhen"]) == ("inbox", "email")


def test_create_through_the_legacy_path(client: Any) -> None:
    resp = client.post("/profiles/create", json={"name": "legacy"})
    assert resp.status_code == 201
    assert resp.get_json()["id"] == expected_id("legacy")
    assert client.get("/profiles/legacy").status_code == 200


def test_create_duplicate_is_409(client: Any) -> None:
    create(client, "dup")
    assert_error(client.post("/profiles", json={"name": "dup"}), 409, "profile_exists")
    # Names differing only in case would collide on macOS and Windows.
    assert_error(client.post("/profiles", json={"name": "DUP"}), 409, "profile_exists")
    assert [p["name"] for p in client.get("/profiles").get_json()] == ["dup"]


BAD_NAMES = ["../x", "a/b", " x", "x ", "..", ".hidden", "a\\b", "x" * 65, "", "caf\u00e9", "trailing."]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_create_refuses_bad_names(client: Any, base_dir: Path, name: str) -> None:
    assert_error(client.post("/profiles", json={"name": name}), 400, "bad_profile")
    assert client.get("/profiles").get_json() == []
    assert not (base_dir.parent / "x").exists()


@pytest.mark.parametrize("body", [{}, {"name": 7}, {"name": "ok", "colour": "red"}, {"name": "ok", "description": 1}])
def test_create_refuses_malformed_bodies(client: Any, body: dict[str, Any]) -> None:
    assert_error(client.post("/profiles", json=body), 400, "bad_request")
    assert client.get("/profiles").get_json() == []


def test_create_refuses_a_body_that_is_not_json(client: Any) -> None:
    resp = client.post("/profiles", data="name=x", content_type="application/x-www-form-urlencoded")
    assert_error(resp, 400, "bad_json")


# --- get ---------------------------------------------------------------------------------------------
def test_get_by_id_and_by_name(client: Any) -> None:
    made = create(client, "fetch me", description="d")
    by_name = client.get("/profiles/fetch me")
    by_id = client.get(f"/profiles/{made['id']}")
    assert by_name.status_code == by_id.status_code == 200
    assert by_name.get_json()["id"] == by_id.get_json()["id"] == made["id"]
    assert by_id.get_json()["name"] == "fetch me"
    assert by_id.get_json()["description"] == "d"
    assert LIST_KEYS <= set(by_id.get_json())


def test_get_unknown_profile_is_404(client: Any) -> None:
    assert_error(client.get("/profiles/nobody"), 404, "profile_not_found")
    assert_error(client.get(f"/profiles/{expected_id('nobody')}"), 404, "profile_not_found")


def test_get_with_an_unsafe_name_is_400(client: Any) -> None:
    assert_error(client.get("/profiles/ x"), 400, "bad_profile")
    assert_error(client.get("/profiles/..x"), 400, "bad_profile")
    assert_error(client.delete("/profiles/a%5Cb"), 400, "bad_profile")


# --- update --------------------------------------------------------------------------------------------
def test_patch_changes_description_and_use_when(client: Any) -> None:
    create(client, "meta-target", description="old", useWhen="never")
    resp = client.patch(f"/profiles/{expected_id('meta-target')}", json={"description": "new"})
    assert resp.status_code == 200
    assert resp.get_json()["description"] == "new"
    assert resp.get_json()["useWhen"] == "never"
    got = client.get("/profiles/meta-target").get_json()
    assert (got["description"], got["useWhen"]) == ("new", "never")

    resp = client.patch(f"/profiles/{expected_id('meta-target')}", json={"useWhen": "sometimes"})
    assert resp.status_code == 200
    assert client.get("/profiles/meta-target").get_json()["useWhen"] == "sometimes"


def test_patch_renames_and_the_id_follows(client: Any, base_dir: Path) -> None:
    create(client, "before", description="kept")
    resp = client.patch(f"/profiles/{expected_id('before')}", json={"name": "after"})
    assert resp.status_code == 200
    body = resp.get_json()
    assert (body["name"], body["id"], body["description"]) == ("after", expected_id("after"), "kept")
    assert_error(client.get("/profiles/before"), 404, "profile_not_found")
    assert_error(client.get(f"/profiles/{expected_id('before')}"), 404, "profile_not_found")
    assert client.get(f"/profiles/{expected_id('after')}").get_json()["description"] == "kept"
    assert not (base_dir / "before").exists() and (base_dir / "after").is_dir()


def test_changing_deleting_or_resetting_takes_the_id_not_the_name(client: Any, base_dir: Path) -> None:
    made = create(client, "by-name", description="kept")
    for resp in (client.patch("/profiles/by-name", json={"name": "new-name"}),
                 client.patch("/profiles/by-name", json={"description": "changed"}),
                 client.delete("/profiles/by-name"),
                 client.post("/profiles/by-name/reset")):
        body = assert_error(resp, 404, "profile_not_found")
        assert "not its name" in body["error"] and body["details"]["id"] == made["id"]
    assert (base_dir / "by-name").is_dir()
    assert client.get("/profiles/by-name").get_json()["description"] == "kept"  # reads take either
    assert client.get(f"/profiles/{made['id']}/logs").status_code == 200
    assert client.delete(f"/profiles/{made['id']}").status_code == 200


def test_patch_with_nothing_to_change_is_400(client: Any) -> None:
    create(client, "unchanged", description="same")
    assert_error(client.patch("/profiles/unchanged", json={}), 400, "bad_request")
    assert_error(client.patch("/profiles/unchanged", data=""), 400, "bad_request")
    assert_error(client.patch("/profiles/unchanged", json={"colour": "red"}), 400, "bad_request")
    assert_error(client.patch("/profiles/unchanged", json={"name": None}), 400, "bad_request")
    assert client.get("/profiles/unchanged").get_json()["description"] == "same"


def test_patch_errors(client: Any) -> None:
    create(client, "one")
    create(client, "two")
    one = expected_id("one")
    assert_error(client.patch(f"/profiles/{one}", json={"name": "two"}), 409, "profile_exists")
    assert_error(client.patch(f"/profiles/{one}", json={"name": "../escape"}), 400, "bad_profile")
    assert_error(client.patch("/profiles/ghost", json={"description": "x"}), 404, "profile_not_found")
    assert sorted(p["name"] for p in client.get("/profiles").get_json()) == ["one", "two"]


def test_patch_meta_updates_the_named_profile(client: Any) -> None:
    create(client, "by-body", description="old")
    resp = client.patch("/profiles/meta", json={"name": "by-body", "useWhen": "for mail"})
    assert resp.status_code == 200
    assert resp.get_json()["name"] == "by-body"
    got = client.get("/profiles/by-body").get_json()
    assert (got["description"], got["useWhen"]) == ("old", "for mail")
    assert_error(client.patch("/profiles/meta", json={"useWhen": "x"}), 400, "bad_request")
    assert_error(client.patch("/profiles/meta", json={"name": "ghost", "useWhen": "x"}), 404, "profile_not_found")


# --- delete --------------------------------------------------------------------------------------------
def test_delete_removes_the_profile(client: Any, base_dir: Path) -> None:
    made = create(client, "doomed")
    create(client, "survivor")
    resp = client.delete(f"/profiles/{made['id']}")
    assert resp.status_code == 200
    assert resp.get_json() == {"status": "deleted", "id": made["id"], "name": "doomed"}
    assert not (base_dir / "doomed").exists()
    assert [p["name"] for p in client.get("/profiles").get_json()] == ["survivor"]
    assert_error(client.get("/profiles/doomed"), 404, "profile_not_found")
    assert_error(client.delete("/profiles/doomed"), 404, "profile_not_found")


def test_delete_of_a_locked_profile_is_409(app: Flask, client: Any, base_dir: Path) -> None:
    create(client, "busy")
    with store_of(app).lock("busy", "bridge:9868"):
        body = assert_error(client.delete(f"/profiles/{expected_id('busy')}"), 409, "profile_in_use")
        assert "bridge:9868" in body["details"]["holder"]
        listed = client.get("/profiles/busy").get_json()
        assert listed["running"] is True
        assert (base_dir / "busy").is_dir()
        assert_error(client.patch(f"/profiles/{expected_id('busy')}", json={"name": "moved"}), 409, "profile_in_use")
    assert client.delete(f"/profiles/{expected_id('busy')}").status_code == 200
    assert not (base_dir / "busy").exists()


# --- reset ---------------------------------------------------------------------------------------------
RESET_GONE = ("Default/Cookies", "Default/History", "Default/Sessions", "Default/Cache", "Default/Code Cache",
              "Default/GPUCache", "Default/Local Storage")
RESET_KEPT = ("Default/Preferences", "Default/Login Data", "Default/Bookmarks", "Local State", "profile.json")


def test_reset_removes_browsing_state_and_keeps_the_profile(client: Any, base_dir: Path) -> None:
    create(client, "resettable", description="kept", useWhen="kept too")
    make_user_data_dir(base_dir / "resettable", singleton=None)
    for rel in RESET_GONE:
        assert (base_dir / "resettable" / rel).exists(), rel

    resp = client.post(f"/profiles/{expected_id('resettable')}/reset")
    assert resp.status_code == 200
    assert resp.get_json() == {"status": "reset", "id": expected_id("resettable"), "name": "resettable"}
    for rel in RESET_GONE:
        assert not (base_dir / "resettable" / rel).exists(), rel
    for rel in RESET_KEPT:
        assert (base_dir / "resettable" / rel).exists(), rel
    got = client.get(f"/profiles/{expected_id('resettable')}").get_json()
    assert (got["description"], got["useWhen"]) == ("kept", "kept too")
    assert got["accountEmail"] == "ada@example.com"  # the identity survives a reset


def test_reset_errors(app: Flask, client: Any, base_dir: Path) -> None:
    assert_error(client.post("/profiles/ghost/reset"), 404, "profile_not_found")
    create(client, "held")
    make_user_data_dir(base_dir / "held", singleton=None)
    with store_of(app).lock("held", "bridge:9869"):
        assert_error(client.post(f"/profiles/{expected_id('held')}/reset"), 409, "profile_in_use")
        assert (base_dir / "held" / "Default" / "Cookies").exists()


# --- import --------------------------------------------------------------------------------------------
def test_import_copies_a_user_data_dir(client: Any, base_dir: Path, tmp_path: Path) -> None:
    source = make_user_data_dir(tmp_path / "chrome-src", prefs=preferences(email="imp@example.com",
                                                                           full_name="Imp Orted"))
    resp = client.post("/profiles/import", json={"name": "imported", "sourcePath": str(source),
                                                 "description": "from chrome", "useWhen": "legacy sites"})
    assert resp.status_code == 201, resp.get_json()
    assert resp.get_json() == {"status": "imported", "id": expected_id("imported"), "name": "imported"}
    assert (base_dir / "imported" / "Default" / "Preferences").is_file()
    assert (source / "Default" / "Preferences").is_file()  # the source is copied, not moved

    got = client.get("/profiles/imported").get_json()
    assert got["source"] == "imported"
    assert (got["accountEmail"], got["accountName"], got["hasAccount"]) == ("imp@example.com", "Imp Orted", True)
    assert (got["description"], got["useWhen"]) == ("from chrome", "legacy sites")
    assert_error(client.post("/profiles/import", json={"name": "imported", "sourcePath": str(source)}),
                 409, "profile_exists")


def test_import_refuses_a_source_that_is_not_a_user_data_dir(client: Any, tmp_path: Path) -> None:
    plain = tmp_path / "just-a-dir"
    (plain / "sub").mkdir(parents=True)
    (plain / "notes.txt").write_text("hello")
    one_profile = tmp_path / "one-profile"
    write_json(one_profile / "Preferences", preferences())
    for source in (str(plain), str(one_profile), str(tmp_path / "missing"), "relative/path", str(plain / "notes.txt")):
        assert_error(client.post("/profiles/import", json={"name": "nope", "sourcePath": source}), 400, "bad_profile")
    assert_error(client.post("/profiles/import", json={"name": "nope"}), 400, "bad_request")
    assert_error(client.post("/profiles/import", json={"name": "../nope", "sourcePath": str(plain)}),
                 400, "bad_profile")
    assert client.get("/profiles?all=true").get_json() == []


# --- activity: logs, analytics, /api/activity ------------------------------------------------------------------
class Clock:
    """A settable clock for an activity log, so event times are chosen by the test."""

    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


def clocked_log(app: Flask) -> tuple[Any, Clock]:
    """Swap the app's activity log for one on the same dir whose clock the test sets."""
    from profiles import ActivityLog

    current = app.extensions["pinchtab.activity"]
    clock = Clock()
    log = ActivityLog(current.dir, current.retention_days, clock=clock)
    app.extensions["pinchtab.activity"] = log
    return log, clock


def stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def test_profile_logs_and_analytics(app: Flask, client: Any) -> None:
    create(client, "worker")
    create(client, "other")
    log, clock = clocked_log(app)
    now = clock.now
    events = [
        (now - timedelta(days=2), {"path": "/navigate", "url": "https://old.example.org/a", "tabId": "t1"}),
        (now - timedelta(hours=3), {"path": "/navigate", "url": "https://shop.example.com/", "tabId": "t1"}),
        (now - timedelta(hours=2), {"path": "/action", "url": "https://shop.example.com/cart", "tabId": "t1",
                                    "action": "click"}),
        (now - timedelta(hours=1), {"path": "/snapshot", "tabId": "t2"}),
    ]
    for moment, fields in events:
        clock.now = moment
        app.extensions["pinchtab.activity"].record({"method": "POST", "status": 200, "durationMs": 12.5,
                                                    "agentId": "agent-a", "profileName": "worker", **fields})
    clock.now = now - timedelta(minutes=30)
    app.extensions["pinchtab.activity"].record({"method": "GET", "path": "/text", "profileName": "other",
                                                "url": "https://elsewhere.example.net/"})
    clock.now = now

    resp = client.get(f"/profiles/{expected_id('worker')}/logs")
    assert resp.status_code == 200
    logs = resp.get_json()
    assert [e["endpoint"] for e in logs] == ["/snapshot", "/action", "/navigate", "/navigate"]  # newest first
    assert {"timestamp", "method", "endpoint", "url", "tabId", "durationMs", "status"} <= set(logs[0])
    assert logs[1]["url"] == "https://shop.example.com/cart"
    assert (logs[1]["tabId"], logs[1]["status"], logs[1]["durationMs"], logs[1]["method"]) == ("t1", 200, 12.5, "POST")
    assert logs[0]["timestamp"] == stamp(now - timedelta(hours=1))

    limited = client.get("/profiles/worker/logs?limit=2").get_json()
    assert [e["endpoint"] for e in limited] == ["/snapshot", "/action"]
    assert_error(client.get("/profiles/worker/logs?limit=0"), 400, "bad_request")
    assert_error(client.get("/profiles/ghost/logs"), 404, "profile_not_found")

    resp = client.get("/profiles/worker/analytics")
    assert resp.status_code == 200
    stats = resp.get_json()
    assert stats["totalActions"] == 4
    assert stats["last24h"] == 3
    assert stats["commonHosts"] == {"shop.example.com": 2, "old.example.org": 1}
    assert stats["topEndpoints"] == {"/navigate": 2, "/action": 1, "/snapshot": 1}
    assert sum(stats["byDay"].values()) == 4  # the dashboard's chart of the profile's use over days
    assert client.get("/profiles/other/analytics").get_json()["totalActions"] == 1
    assert_error(client.get("/profiles/ghost/analytics"), 404, "profile_not_found")
    log.close()


def test_api_activity_filters(app: Flask, client: Any) -> None:
    log, clock = clocked_log(app)
    start = clock.now - timedelta(hours=4)
    rows = [("a1", "t1", 0), ("a1", "t2", 1), ("a2", "t1", 2), ("a1", "t1", 3)]
    for agent, tab, hour in rows:
        clock.now = start + timedelta(hours=hour)
        app.extensions["pinchtab.activity"].record({"agentId": agent, "tabId": tab, "method": "POST",
                                                    "path": f"/step{hour}", "profileName": "p",
                                                    "instanceId": f"inst_{hour % 2}"})
    clock.now = start + timedelta(hours=4)

    def paths(query: str) -> list[str]:
        resp = client.get(f"/api/activity?{query}")
        assert resp.status_code == 200, resp.get_json()
        body = resp.get_json()
        assert body["count"] == len(body["events"])
        return [e["path"] for e in body["events"]]

    assert paths("agentId=a1") == ["/step3", "/step1", "/step0"]
    assert paths("agentId=a2") == ["/step2"]
    assert paths("agentId=a1&tabId=t1") == ["/step3", "/step0"]
    assert paths("tabId=t2") == ["/step1"]
    assert paths("profile=p&limit=2") == ["/step3", "/step2"]
    since = (start + timedelta(minutes=30)).isoformat().replace("+00:00", "Z")
    until = (start + timedelta(hours=2, minutes=30)).isoformat().replace("+00:00", "Z")
    assert paths(f"agentId=a1&since={since}") == ["/step3", "/step1"]
    assert paths(f"agentId=a1&until={until}") == ["/step1", "/step0"]
    assert paths(f"since={since}&until={until}&profile=p") == ["/step2", "/step1"]
    naive = (start + timedelta(hours=2, minutes=30)).strftime("%Y-%m-%dT%H:%M:%S")  # naive means UTC
    assert paths(f"profile=p&since={naive}") == ["/step3"]
    assert paths("agentId=nobody") == []
    assert paths("instanceId=inst_1") == ["/step3", "/step1"]
    assert paths("instanceId=inst_0&agentId=a1") == ["/step0"]
    assert paths("path=/step2") == ["/step2"] and paths("path=/step") == []
    log.close()


@pytest.mark.parametrize("query", ["since=yesterday", "until=2024-13-01", "since=0001-01-01T00:00:00%2B01:00",
                                   "until=9999-12-31T23:59:59-01:00"])
def test_api_activity_bad_time_filter_is_400(client: Any, query: str) -> None:
    assert_error(client.get(f"/api/activity?{query}"), 400, "bad_filter")


def test_api_activity_bad_limit_is_400(client: Any) -> None:
    assert_error(client.get("/api/activity?limit=lots"), 400, "bad_request")
    assert_error(client.get("/api/activity?limit=100000"), 400, "bad_request")


def test_activity_routes_are_403_when_the_log_is_off(build: Callable[..., Flask]) -> None:
    client = build(**{"observability.activity.enabled": False}).test_client()
    assert_error(client.get("/api/activity"), 403, "activity_disabled")
    create(client, "quiet")
    assert_error(client.get("/profiles/quiet/logs"), 403, "activity_disabled")
    assert_error(client.get("/profiles/quiet/analytics"), 403, "activity_disabled")
    assert client.get("/profiles/quiet").status_code == 200


# --- auth ----------------------------------------------------------------------------------------------
def test_token_is_required_when_configured(build: Callable[..., Flask]) -> None:
    client = build(token=TOKEN).test_client()
    assert_error(client.get("/profiles"), 401, "missing_token")
    assert_error(client.post("/profiles", json={"name": "sneaky"}), 401, "missing_token")
    assert_error(client.get("/api/activity"), 401, "missing_token")
    assert_error(client.get("/profiles", headers={"Authorization": "Bearer wrong"}), 401, "bad_token")
    good = {"Authorization": f"Bearer {TOKEN}"}
    assert client.get("/profiles", headers=good).get_json() == []
    assert client.post("/profiles", json={"name": "allowed"}, headers=good).status_code == 201
    assert [p["name"] for p in client.get("/profiles", headers=good).get_json()] == ["allowed"]
