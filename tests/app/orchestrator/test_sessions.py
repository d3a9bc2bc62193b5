"""Agent sessions: a revocable token that acts as one agent (``Authorization: Session <token>``),
through a real ``pinchtab server`` and its bridge, and on a bridge alone; expiry with a clock we move
(pure logic)."""
from __future__ import annotations

import json
import secrets
from typing import Any

import pytest
import requests
from support.config import make_config
from support.servers import ServerProcess
from support.waits import wait_until

from app.access.agent_sessions import AgentSessions
from app.config import ConfigError

IDLE_S, MAX_AGE_S = 1800.0, 86400.0  # sessions.agent's defaults


@pytest.fixture
def server(shared_server: ServerProcess) -> ServerProcess:
    return shared_server


def as_session(server: ServerProcess, token: str, method: str, path: str, **kwargs: Any) -> requests.Response:
    headers = {"Authorization": f"Session {token}", **kwargs.pop("headers", {})}
    return requests.request(method, server.base + path, headers=headers, timeout=60, **kwargs)


@pytest.mark.e2e
def test_a_session_acts_as_its_agent_only_and_stops_working_when_revoked(server, site):
    agent = f"alice-{secrets.token_hex(3)}"
    other = f"mallory-{secrets.token_hex(3)}"
    r = server.post("/sessions", json={"agentId": agent, "label": "nightly run"})
    assert r.status_code == 201, r.text
    made = r.json()
    token = made["sessionToken"]
    assert made["agentId"] == agent and made["id"].startswith("ses_") and token.startswith("pts_")
    assert made["status"] == "active" and made["label"] == "nightly run" and made["token"] == token
    listed = server.get("/sessions").json()
    assert made["id"] in {s["id"] for s in listed} and token not in str(listed)
    # It navigates as its agent, whatever X-Agent-Id it sends.
    nav = as_session(server, token, "POST", "/navigate", json={"url": site.url("counter.html")},
                     headers={"X-Agent-Id": other})
    assert nav.status_code == 200, nav.text
    tab = nav.json()["tabId"]
    # Its current tab is the agent's: the session and the agent read the same tab without naming it.
    assert as_session(server, token, "GET", "/title").json()["title"] == nav.json()["title"]
    same = server.get("/url", headers={"X-Agent-Id": agent}).json()
    assert same["url"] == site.url("counter.html")
    assert server.get("/url", headers={"X-Agent-Id": other}).json()["code"] == "no_current_tab"

    def logged() -> list[dict[str, Any]] | None:
        events = server.get(f"/api/activity?tabId={tab}").json()["events"]
        return events or None

    assert {e["agentId"] for e in wait_until(logged, 10, 0.1)} == {agent}
    # A session is not the operator: it makes no sessions, changes no config, stops nothing.
    for method, path, body in (("POST", "/sessions", {"agentId": "x"}), ("PUT", "/api/config", {}),
                               ("POST", "/shutdown", None), ("GET", "/sessions", None), ("GET", "/api/config", None),
                               ("GET", "/api/metrics", None), ("GET", f"/sessions/{made['id']}", None)):
        r = as_session(server, token, method, path, json=body)
        assert r.status_code == 403 and r.json()["code"] == "session_forbidden", (path, r.text)
    # Revoked: refused at once.
    assert server.request("DELETE", f"/sessions/{made['id']}").json() == {"status": "revoked", "id": made["id"]}
    r = as_session(server, token, "GET", "/tabs")
    assert r.status_code == 401 and r.json()["code"] == "bad_session"
    assert server.get(f"/sessions/{made['id']}").json()["code"] == "session_not_found"


@pytest.mark.e2e
def test_a_session_reads_itself_and_revokes_itself_only(server):
    first = server.post("/sessions", json={"agentId": "e2e-agent", "label": "e2e-run"}).json()
    second = server.post("/sessions", json={"agentId": "e2e-agent-2", "label": "scope-check"}).json()
    mine, theirs = first["sessionToken"], second["sessionToken"]
    me = as_session(server, mine, "GET", "/sessions/me")
    assert me.status_code == 200 and me.json()["agentId"] == "e2e-agent" and me.json()["status"] == "active"
    assert me.json()["id"] == first["id"] and "sessionToken" not in me.json()
    # /sessions/me is a session's own: the bearer token there is refused, as in the original.
    bearer = server.get("/sessions/me")
    assert bearer.status_code == 401 and bearer.json()["code"] == "session_auth_required"
    assert as_session(server, "pts_invalid", "GET", "/sessions/me").status_code == 401
    # Scope refusals are 403, not 401: the session is known, the route is not its.
    r = as_session(server, mine, "POST", f"/sessions/{second['id']}/revoke")
    assert r.status_code == 403 and r.json()["code"] == "session_forbidden"
    assert as_session(server, mine, "DELETE", f"/sessions/{second['id']}").status_code == 403
    assert as_session(server, theirs, "GET", "/sessions/me").status_code == 200   # untouched
    # Its own: revoked at once, then refused.
    r = as_session(server, mine, "POST", f"/sessions/{first['id']}/revoke")
    assert r.status_code == 200 and r.json() == {"status": "ok"}
    gone = as_session(server, mine, "GET", "/sessions/me")
    assert gone.status_code == 401 and gone.json()["code"] == "bad_session"
    # The operator revokes any, by the original's route too; an unknown one is a 404.
    assert server.post(f"/sessions/{second['id']}/revoke").json() == {"status": "ok"}
    assert server.post("/sessions/ses_doesnotexist000/revoke").status_code == 404


@pytest.mark.e2e
def test_bad_session_tokens_and_requests_are_clear_4xx(server):
    assert as_session(server, "pts_forged", "GET", "/tabs").json()["code"] == "bad_session"
    assert as_session(server, "", "GET", "/tabs").status_code == 401
    for body in ({}, {"agentId": ""}, {"agentId": "a b"}, {"agentId": "a", "ttlSec": 5}, {"agentId": "a", "x": 1}):
        r = server.post("/sessions", json=body)
        assert r.status_code == 400, (body, r.text)
    assert server.request("DELETE", "/sessions/ses_000000000000").status_code == 404


def test_sessions_lapse_when_idle_or_too_old():
    now = [1000.0]
    table = AgentSessions(idle_s=IDLE_S, max_age_s=MAX_AGE_S, clock=lambda: now[0])
    idle, token = table.create("a")
    assert table.resolve(token) == "a"
    now[0] += IDLE_S - 1
    assert table.resolve(token) == "a"  # each use keeps it alive
    now[0] += IDLE_S
    assert table.resolve(token) is None and table.get(idle.id) is None
    _, old = table.create("b", ttl_s=120)
    for _ in range(3):
        now[0] += 50
        table.resolve(old)
    assert table.resolve(old) is None  # 150 s > its 120 s, however busy
    _, capped = table.create("c", ttl_s=10 * MAX_AGE_S)
    assert table.list()[-1].expires == now[0] + MAX_AGE_S
    assert table.resolve(capped) == "c" and table.resolve("pts_" + capped[4:][::-1]) is None


def test_sessions_outlive_a_restart_in_a_file_that_keeps_no_token(tmp_path):
    now = [1000.0]
    path = tmp_path / "agent-sessions-9867.json"
    table = AgentSessions(idle_s=IDLE_S, max_age_s=MAX_AGE_S, path=path, clock=lambda: now[0])
    kept, token = table.create("keeper", "nightly")
    gone, gone_token = table.create("leaver")
    table.revoke(gone.id)
    assert token not in path.read_text() and oct(path.stat().st_mode & 0o777) == "0o600"
    now[0] += 600
    again = AgentSessions(idle_s=IDLE_S, max_age_s=MAX_AGE_S, path=path, clock=lambda: now[0])
    assert again.resolve(token) == "keeper" and again.resolve(gone_token) is None
    (back,) = again.list()
    assert back.record() == {**kept.record(), "lastSeenAt": back.record()["lastSeenAt"]}
    # A tighter config after the restart ends what it no longer allows.
    assert AgentSessions(idle_s=IDLE_S, max_age_s=300, path=path, clock=lambda: now[0]).resolve(token) is None
    # A file that is not ours is set aside, not fatal.
    path.write_text("{not json")
    assert AgentSessions(idle_s=IDLE_S, max_age_s=MAX_AGE_S, path=path).list() == []
    assert path.with_name(path.name + ".bad").exists()


def test_session_limits_and_the_off_switch_come_from_the_config(app_factory, tmp_path):
    limits = {"sessions.agent.maxLifetimeSec": 3600, "sessions.agent.idleTimeoutSec": 600}
    client = app_factory(**limits).test_client()
    made = client.post("/sessions", json={"agentId": "short", "ttlSec": 86400, "idleSec": 86400}).get_json()
    assert made["idleTimeoutSec"] == 600, made
    as_agent = {"Authorization": f"Session {made['sessionToken']}"}
    assert app_factory(**limits).test_client().get("/tabs", headers=as_agent).status_code == 200  # a restart keeps it
    for off in ({"sessions.agent.enabled": False}, {"sessions.agent.mode": "off"}):
        client = app_factory(**off).test_client()
        r = client.post("/sessions", json={"agentId": "a"})
        assert r.status_code == 403 and r.get_json()["code"] == "sessions_disabled", off
        r = client.get("/tabs", headers=as_agent)
        assert r.status_code == 401 and r.get_json()["code"] == "sessions_disabled", off
    # "required" would promise session-only access that the bearer token would still get around.
    with pytest.raises(ConfigError, match="required is not supported"):
        make_config(tmp_path, **{"sessions.agent.mode": "required"})


def test_a_bridge_on_its_own_accepts_sessions_too(app_factory, site):
    token = "bridge-t0ken"
    client = app_factory(**{"server.token": token}).test_client()
    bearer = {"Authorization": f"Bearer {token}"}
    made = client.post("/sessions", json={"agentId": "solo"}, headers=bearer).get_json()
    session = {"Authorization": f"Session {made['sessionToken']}", "X-Agent-Id": "someone-else"}
    nav = client.post("/navigate", json={"url": site.url("counter.html")}, headers=session)
    assert nav.status_code == 200, nav.get_json()
    # Its current tab is the agent's own.
    assert client.get("/url", headers={**bearer, "X-Agent-Id": "solo"}).get_json()["url"] == site.url("counter.html")
    assert client.get("/url", headers={**bearer, "X-Agent-Id": "someone-else"}).status_code == 409
    assert client.post("/sessions", json={"agentId": "x"}, headers=session).get_json()["code"] == "session_forbidden"
    assert client.delete(f"/sessions/{made['id']}", headers=bearer).status_code == 200
    assert client.get("/tabs", headers=session).get_json()["code"] == "bad_session"


def test_without_a_token_a_session_still_names_its_agent_and_a_revoked_one_is_refused(app_factory, site, tmp_path):
    client = app_factory().test_client()   # loopback, no token: open to local callers
    made = client.post("/sessions", json={"agentId": "tokenless"}).get_json()
    session = {"Authorization": f"Session {made['sessionToken']}", "X-Agent-Id": "pretender"}
    r = client.post("/navigate", json={"url": site.url("counter.html")}, headers=session)
    assert r.status_code == 200
    r.close()  # the activity line is written once the answer is out
    logged = [json.loads(line) for p in (tmp_path / ".pinchtab" / "activity").glob("events-*.jsonl")
              for line in p.read_text().splitlines()]
    assert [e["agentId"] for e in logged if e["path"] == "/navigate"] == ["tokenless"]
    assert client.get("/url", headers={"X-Agent-Id": "tokenless"}).get_json()["url"] == site.url("counter.html")
    assert client.delete(f"/sessions/{made['id']}").status_code == 200
    assert client.get("/tabs", headers=session).get_json()["code"] == "bad_session"
    assert client.get("/tabs").status_code == 200   # no credentials at all: still open


def test_the_token_store_keeps_hashes_lapses_bounds_and_revokes():
    """``app.access.tokens``, which agent sessions and dashboard logins both keep their tokens in."""
    from app.access.tokens import Held, TokenLimit, TokenStore, new_token

    now = [1000.0]
    written: list[list[Held]] = []

    def held(digest: bytes, idle_s: float = 60, max_age_s: float = 600) -> Held:
        return Held(digest=digest, created=now[0], last_seen=now[0], expires=now[0] + max_age_s, idle_s=idle_s)

    store: TokenStore[Held] = TokenStore(limit=2, kind="things", clock=lambda: now[0],
                                         persist=lambda live: written.append(live) or True, seen_save_s=30)
    one, one_digest = new_token("x_")
    two, two_digest = new_token("x_")
    store.add(held(one_digest))
    store.add(held(two_digest, idle_s=10))
    assert one not in repr(written[-1]) and len(written[-1]) == 2  # hashes only, written on each change
    with pytest.raises(TokenLimit, match="at most 2 live things"):
        store.add(held(new_token()[1]))
    assert store.lookup(one) is not None and store.lookup("x_" + one[2:][::-1]) is None
    writes = len(written)
    now[0] += 5
    store.lookup(one)
    assert len(written) == writes  # a use is written at most every seen_save_s
    now[0] += 30
    assert store.lookup(two) is None  # idle past its 10 s
    assert [h.digest for h in store.live()] == [one_digest]
    now[0] += 600
    assert store.lookup(one) is None and store.live() == []  # past its maximum age, however busy
    three, three_digest = new_token()
    store.add(held(three_digest))
    assert store.revoke(three) and not store.revoke(three) and store.lookup(three) is None

    # evict_oldest: past the limit the least recently used one goes (a browser signs in again).
    logins: TokenStore[Held] = TokenStore(limit=2, evict_oldest=True, clock=lambda: now[0])
    tokens = []
    for _ in range(3):
        token, digest = new_token()
        logins.add(held(digest))
        tokens.append(token)
        now[0] += 1
        logins.lookup(tokens[0])  # the first stays in use
    assert logins.lookup(tokens[0]) is not None and logins.lookup(tokens[1]) is None
    assert logins.lookup(tokens[2]) is not None
