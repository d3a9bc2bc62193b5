"""Several agents and people on one browser: tab leases (/lock, /unlock), a person's takeover
(/tabs/{id}/handoff, /resume) and the /macro pipeline that both guard."""
from __future__ import annotations

import time

import pytest
from support.agent import nav


def clicks(client, tab: str) -> str:
    return client.get(f"/text?tabId={tab}&mode=raw").json["text"].split("\n")[2]


def test_a_lease_keeps_other_owners_actions_off_the_tab(client, site):
    t = nav(client, site.url("counter.html"))["tabId"]
    r = client.post("/lock", json={"tabId": t, "owner": "alice", "timeoutSec": 60})
    assert r.status_code == 200 and r.json["locked"] is True and r.json["owner"] == "alice"
    listed = next(x for x in client.get("/tabs").json["tabs"] if x["id"] == t)
    assert listed["owner"] == "alice" and listed["lockedUntil"] == r.json["expiresAt"]
    # without the owner, or with another one: 423, and nothing was clicked
    for extra in ({}, {"owner": "bob"}):
        r = client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t, **extra})
        assert r.status_code == 423 and r.json["code"] == "tab_locked", extra
    r = client.post("/actions", json={"tabId": t, "actions": [{"kind": "click", "selector": "#inc"}]})
    assert r.json["results"][0]["code"] == "tab_locked"
    assert clicks(client, t) == "0"
    # the owner, named by body, header or query, acts
    r = client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t, "owner": "alice"})
    assert r.status_code == 200
    assert client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t},
                       headers={"X-Owner": "alice"}).status_code == 200
    assert client.post("/action?owner=alice", json={"kind": "click", "selector": "#inc", "tabId": t}).status_code == 200
    assert client.post("/actions", json={"tabId": t, "owner": "alice",
                                         "actions": [{"kind": "click", "selector": "#inc"}]}).json["successful"] == 1
    assert clicks(client, t) == "4"
    # reads are not guarded
    assert client.get(f"/snapshot?tabId={t}").status_code == 200
    # another owner cannot take or release it; its owner extends and releases it
    r = client.post(f"/tabs/{t}/lock", json={"owner": "bob"})
    assert r.status_code == 409 and r.json["code"] == "tab_locked" and r.json["details"]["owner"] == "alice"
    assert client.post("/unlock", json={"tabId": t, "owner": "bob"}).status_code == 409
    assert client.post(f"/tabs/{t}/lock", json={"owner": "alice", "timeoutSec": 120}).status_code == 200
    r = client.post("/unlock", json={"tabId": t, "owner": "alice"})
    assert r.json == {"unlocked": True, "tabId": t, "released": True}
    assert "owner" not in next(x for x in client.get("/tabs").json["tabs"] if x["id"] == t)
    assert client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t}).status_code == 200


def test_a_lease_expires(app_factory, site):
    app = app_factory()
    client = app.test_client()
    t = nav(client, site.url("counter.html"))["tabId"]
    guards = app.extensions["pinchtab"].guards
    now = [time.time()]
    guards._clock = lambda: now[0]  # the lease's clock: a fake, so nothing waits for it to run out
    client.post("/lock", json={"tabId": t, "owner": "alice", "timeoutSec": 5})
    assert client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t}).status_code == 423
    now[0] += 6
    assert client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t}).status_code == 200
    assert client.post("/lock", json={"tabId": t, "owner": "bob"}).status_code == 200


def test_uploads_and_downloads_need_the_owner_of_a_leased_tab(app_factory, site):
    client = app_factory(**{"security.allowUpload": True, "security.allowDownload": True}).test_client()
    t = nav(client, site.url("upload.html"))["tabId"]
    client.post("/lock", json={"tabId": t, "owner": "alice"})
    file = {"files": ["data:text/plain;base64,aGk="], "selector": "input[type=file]"}
    r = client.post(f"/upload?tabId={t}", json=file)
    assert r.status_code == 423 and r.json["code"] == "tab_locked"
    assert client.post(f"/upload?tabId={t}", json=file, headers={"X-Owner": "alice"}).status_code == 200
    r = client.get(f"/download?tabId={t}&url={site.url('counter.html')}")
    assert r.status_code == 423


def test_lock_needs_an_owner_and_a_real_tab(client, site):
    t = nav(client, site.url("counter.html"))["tabId"]
    r = client.post("/lock", json={"tabId": t})
    assert r.status_code == 400 and r.json["details"]["field"] == "owner"
    r = client.post("/lock", json={"tabId": t, "owner": "a", "timeoutSec": -1})
    assert r.status_code == 400 and r.json["details"]["field"] == "timeoutSec"
    assert client.post("/lock", json={"tabId": "NOPE", "owner": "a"}).status_code == 404


def test_a_handoff_pauses_agents_until_a_person_resumes(client, site):
    t = nav(client, site.url("counter.html"))["tabId"]
    assert client.get(f"/tabs/{t}/handoff").json == {"tabId": t, "status": "active"}
    r = client.post(f"/tabs/{t}/handoff", json={"reason": "captcha"})
    assert r.status_code == 200 and r.json["status"] == "paused_handoff" and r.json["handoffReason"] == "captcha"
    assert r.json["reason"] == "captcha"
    shown = client.get(f"/tabs/{t}/handoff").json
    assert shown["status"] == "paused_handoff" and shown["reason"] == shown["handoffReason"] == "captcha"
    listed = next(x for x in client.get("/tabs").json["tabs"] if x["id"] == t)
    assert listed["status"] == "paused_handoff" and listed["handoffReason"] == "captcha" and listed["pausedAt"]
    r = client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t})
    assert r.status_code == 409 and r.json["code"] == "tab_paused_handoff"
    r = client.post("/actions", json={"tabId": t, "actions": [{"kind": "click", "selector": "#inc"}]})
    assert r.status_code == 200 and r.json["failed"] == 1
    assert r.json["results"][0]["code"] == "tab_paused_handoff"
    assert "paused for human handoff (captcha)" in r.json["results"][0]["error"]  # the original's words
    assert clicks(client, t) == "0"  # the agent still reads while it waits
    r = client.post(f"/tabs/{t}/resume", json={"status": "solved", "resolvedData": {"token": "x1"}})
    assert r.status_code == 200 and r.json["resolution"]["resolvedData"] == {"token": "x1"}
    state = client.get(f"/tabs/{t}/handoff").json
    assert state["status"] == "active" and state["lastResolution"]["status"] == "solved"
    assert client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t}).status_code == 200
    r = client.post(f"/tabs/{t}/resume", json={})
    assert r.status_code == 409 and r.json["code"] == "tab_not_paused"
    assert client.post("/tabs/NOPE/handoff", json={}).status_code == 404


def test_a_handoff_with_a_timeout_ends_by_itself(app_factory, site):
    app = app_factory()
    client = app.test_client()
    t = nav(client, site.url("counter.html"))["tabId"]
    guards = app.extensions["pinchtab"].guards
    now = [time.time()]
    guards._clock = lambda: now[0]
    r = client.post(f"/tabs/{t}/handoff", json={"reason": "2fa", "timeoutMs": 30000})
    assert r.json["expiresAt"]
    assert client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t}).status_code == 409
    now[0] += 31
    assert client.get(f"/tabs/{t}/handoff").json["lastResolution"]["status"] == "timeout"
    assert client.post("/action", json={"kind": "click", "selector": "#inc", "tabId": t}).status_code == 200


def test_macro_is_off_until_allowed(client):
    r = client.post("/macro", json={"steps": [{"kind": "click", "selector": "#inc"}]})
    assert r.status_code == 403 and r.json["code"] == "macro_disabled"
    assert r.json["details"]["setting"] == "security.allowMacro"


@pytest.fixture
def macro_client(app_factory):
    return app_factory(**{"security.allowMacro": True}).test_client()


def test_macro_runs_steps_in_order_and_stops_at_the_first_failure(macro_client, site):
    client = macro_client
    t = nav(client, site.url("counter.html"))["tabId"]
    r = client.post("/macro", json={"tabId": t, "steps": [
        {"kind": "click", "selector": "#inc"}, {"kind": "click", "selector": "#missing"},
        {"kind": "click", "selector": "#inc"}]})
    assert r.status_code == 200 and r.json["kind"] == "macro"
    assert (r.json["total"], r.json["successful"], r.json["failed"]) == (3, 1, 2)
    assert [x["index"] for x in r.json["results"]] == [0, 1]
    assert clicks(client, t) == "1"
    r = client.post("/macro", json={"tabId": t, "stopOnError": False, "steps": [
        {"kind": "click", "selector": "#missing"}, {"kind": "dblclick", "selector": "#inc"}]})
    assert r.json["successful"] == 1 and clicks(client, t) == "3"
    # a leased tab needs its owner; a paused one runs nothing
    client.post("/lock", json={"tabId": t, "owner": "alice"})
    steps = [{"kind": "click", "selector": "#inc"}]
    assert client.post("/macro", json={"tabId": t, "steps": steps}).json["results"][0]["code"] == "tab_locked"
    assert client.post("/macro", json={"tabId": t, "owner": "alice", "steps": steps}).json["successful"] == 1
    client.post(f"/tabs/{t}/handoff", json={})
    r = client.post("/macro", json={"tabId": t, "owner": "alice", "steps": steps})
    assert r.json["results"][0]["code"] == "tab_paused_handoff"
    for bad in ({}, {"steps": []}, {"steps": [{"kind": "fly"}]}, {"steps": steps, "stepTimeout": 600}):
        r = client.post("/macro", json={"tabId": t, **bad})
        assert r.status_code in (200, 400), bad
        assert r.status_code == 400 or r.json["results"][0]["code"] == "bad_request"
