"""Debug sessions through ``pinchtab server``: sessions made, joined and streamed on the server's own
port, the instance behind it. One real server (gunicorn, its manager, a bridge with Chromium) for
the module; the app and the agent are real WebSocket clients. Nothing sleeps: every wait polls with
a deadline or reads with a timeout."""
from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import websocket
from support.debug_pages import recv_until, stream_events
from support.servers import ServerProcess
from support.waits import wait_until

from app.debug import protocol

pytestmark = pytest.mark.e2e

TOKEN = "dbg-t0ken-for-tests"
MAX_CONNECTIONS = 4
MAX_FRAME = 64 * 1024


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    home = tmp_path_factory.mktemp("debug-server-home")
    sp = ServerProcess(home, {"debug": {"maxConnections": MAX_CONNECTIONS, "maxFrameBytes": MAX_FRAME}}, token=TOKEN)
    try:
        sp.wait_ready()
        yield sp
    finally:
        sp.stop()
    assert TOKEN not in sp.output()


@pytest.fixture
def session(server: ServerProcess) -> Iterator[dict[str, Any]]:
    r = server.post("/debug/sessions")
    assert r.status_code == 201, r.text
    yield r.json()
    server.request("DELETE", f"/debug/sessions/{r.json()['sessionId']}")
    # The next test starts with every relayed connection gone (they count against the cap).
    wait_until(lambda: server.get("/debug/sessions").json()["connections"] == 0, 10)


def connect(url: str, token: str | None = None, **kw: Any) -> websocket.WebSocket:
    header = [f"Authorization: Bearer {token}"] if token else []
    return websocket.create_connection(url, timeout=10, header=header, skip_utf8_validation=True, **kw)


def recv_close(ws: websocket.WebSocket, timeout_s: float = 10.0) -> tuple[int, str]:
    """The close frame's code and reason (other frames before it are skipped)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ws.settimeout(max(0.01, deadline - time.monotonic()))
        opcode, data = ws.recv_data(control_frame=True)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return int.from_bytes(data[:2], "big"), data[2:].decode()
    raise AssertionError("no close in time")


def send(ws: websocket.WebSocket, session_id: str, type: str, **fields: Any) -> None:
    ws.send(json.dumps(protocol.envelope(session_id, type, **fields)))


def refusal(url: str, token: str | None = None) -> websocket.WebSocketBadStatusException:
    with pytest.raises(websocket.WebSocketBadStatusException) as err:
        connect(url, token)
    return err.value


def test_a_session_made_through_the_server_is_reached_on_the_servers_port(server, session):
    sid = session["sessionId"]
    default = server.health()["defaultInstance"]["id"]
    assert session["instanceId"] == default
    assert session["appUrl"] == f"ws://127.0.0.1:{server.port}/debug?role=app&sessionId={sid}"
    assert session["agentUrl"] == f"ws://127.0.0.1:{server.port}/debug?role=agent&sessionId={sid}"
    assert session["sdkUrl"].startswith(f"http://127.0.0.1:{server.port}/debug/sdk.js")
    listed = server.get("/debug/sessions").json()
    assert {"sessionId": sid, "instanceId": default}.items() <= next(
        s for s in listed["sessions"] if s["sessionId"] == sid).items()
    assert listed["maxConnections"] == MAX_CONNECTIONS
    r = server.get(f"/debug/sessions/{sid}")
    assert r.status_code == 200 and r.json()["sessionId"] == sid
    assert r.headers["X-PinchTab-Instance-Id"] == default
    sdk = requests.get(f"{server.base}/debug/sdk.js", timeout=10)   # public, like the bridge's
    assert sdk.status_code == 200 and "javascript" in sdk.headers["Content-Type"]


def test_app_and_agent_talk_through_the_servers_websocket(server, session):
    sid = session["sessionId"]
    agent = connect(session["agentUrl"], TOKEN)
    app = connect(session["appUrl"])                      # a page has no token: the id admits it
    try:
        recv_until(agent, lambda m: m.get("event") == "app_connected")
        send(app, sid, "console", level="warn", args=["through the server"])
        got = recv_until(agent, lambda m: m["type"] == "console")
        assert got["args"] == ["through the server"]
        send(agent, sid, "click", requestId="c1", target={"stableId": "buy"})
        assert recv_until(app, lambda m: m["type"] == "click")["target"] == {"stableId": "buy"}
        send(app, sid, "command_result", requestId="c1", requestType="click", success=True, duration=3)
        assert recv_until(agent, lambda m: m["type"] == "command_result")["requestId"] == "c1"
        # A REST caller's command reaches the same app, and its answer comes back to the caller.
        answered = queue.Queue()
        threading.Thread(target=lambda: answered.put(server.post(
            f"/debug/sessions/{sid}/commands", json={"type": "focus", "target": {"stableId": "q"}, "timeout": 10})),
            daemon=True).start()
        cmd = recv_until(app, lambda m: m["type"] == "focus")
        send(app, sid, "command_result", requestId=cmd["requestId"], requestType="focus", success=True, duration=1)
        r = answered.get(timeout=15)
        assert r.status_code == 200 and r.json()["type"] == "command_result", r.text
        assert r.json()["requestId"] == cmd["requestId"] and r.json()["success"] is True
        described = server.get(f"/debug/sessions/{sid}").json()
        assert len(described["apps"]) == 1 and len(described["agents"]) == 1
    finally:
        app.close()
        agent.close()


def test_events_stream_through_the_server_as_they_happen(server, session):
    sid = session["sessionId"]
    stream = server.get(f"/events?sessionId={sid}", stream=True, timeout=(5, 30))
    assert stream.status_code == 200 and stream.headers["Content-Type"].startswith("text/event-stream")
    lines = stream_events(stream)
    app = connect(session["appUrl"])
    try:
        send(app, sid, "console", level="log", args=["streamed"])
        # Promptly: well before the 15 s heartbeat would push a buffered chunk out.
        deadline = time.monotonic() + 5
        while True:
            msg = lines.get(timeout=max(0.01, deadline - time.monotonic()))
            if msg.get("type") == "console":
                break
        assert msg["args"] == ["streamed"]
        assert server.get("/debug/sessions").json()["connections"] == 2   # the stream and the app
    finally:
        app.close()
        lines.close()


def test_refusals_come_as_http_answers_before_the_upgrade(server, session):
    base = f"ws://127.0.0.1:{server.port}/debug"
    err = refusal(f"{base}?role=app&sessionId=no-such-session")
    assert err.status_code == 404 and json.loads(err.resp_body)["code"] == "session_not_found"
    err = refusal(session["agentUrl"])
    assert err.status_code == 401 and json.loads(err.resp_body)["code"] == "missing_token"
    assert refusal(session["agentUrl"], "wrong").status_code == 401
    assert refusal(f"{base}?role=boss&sessionId={session['sessionId']}").status_code == 400
    r = server.get("/events?sessionId=no-such-session")
    assert r.status_code == 404 and r.json()["code"] == "session_not_found"
    r = server.request("DELETE", "/debug/sessions/no-such-session")
    assert r.status_code == 404 and r.json()["code"] == "session_not_found"


def test_close_codes_pass_through_both_ways(server, session):
    sid = session["sessionId"]
    agent = connect(session["agentUrl"], TOKEN)
    app = connect(session["appUrl"])
    recv_until(agent, lambda m: m.get("event") == "app_connected")
    app.send("x" * (MAX_FRAME + 1))                        # too large: the app is closed with 1009
    assert recv_close(app)[0] == 1009
    # and the instance knows at once (not at the relay's next idle wake, 5 s on)
    recv_until(agent, lambda m: m.get("event") == "app_disconnected", 2)
    app = connect(session["appUrl"])
    recv_until(agent, lambda m: m.get("event") == "app_connected")
    assert server.request("DELETE", f"/debug/sessions/{sid}").status_code == 200
    # The instance ends the session: both relayed connections close with its code and reason.
    assert recv_close(app) == (1000, "session ended")
    assert recv_close(agent) == (1000, "session ended")
    assert server.get(f"/debug/sessions/{sid}").status_code == 404


def test_the_server_caps_relayed_connections_with_503(server, session):
    listed = server.get("/debug/sessions").json()
    apps_max = listed["maxAppConnections"]
    assert apps_max == MAX_CONNECTIONS - 1   # a quarter of the cap, at least one, is kept for agents and streams
    # Distinct appIds: a second connection with the same one replaces the first.
    held = [connect(f"{session['appUrl']}&appId=held-{i}") for i in range(apps_max)]
    streams = []
    try:
        err = refusal(session["appUrl"])            # apps have taken their share
        assert err.status_code == 503 and err.resp_headers.get("retry-after") == "5"
        assert json.loads(err.resp_body)["code"] == "too_many_connections"
        assert server.get("/debug/sessions").json()["appConnections"] == apps_max
        stream = server.get(f"/events?sessionId={session['sessionId']}", stream=True, timeout=(5, 30))
        streams.append(stream)
        assert stream.status_code == 200            # the reserve: an event stream still gets in
        r = server.get(f"/events?sessionId={session['sessionId']}", timeout=10)
        assert r.status_code == 503 and r.json()["code"] == "too_many_connections"   # the whole cap holds
        stream.close()
        held.pop().close()

        def admitted() -> websocket.WebSocket | None:
            try:
                return connect(f"{session['appUrl']}&appId=late")
            except websocket.WebSocketBadStatusException as e:
                assert e.status_code == 503
                return None

        held.append(wait_until(admitted, 10, 0.1))
    finally:
        for ws in held:
            ws.close()
        for stream in streams:
            stream.close()


def test_a_tab_debugged_through_the_server(server, site):
    tab = server.post("/navigate", json={"url": site.url("counter.html")}).json()["tabId"]
    try:
        r = server.post(f"/tabs/{tab}/debug", json={})
        assert r.status_code == 201, r.text
        attached = r.json()
        assert attached["tabId"] == tab and attached["agentUrl"].startswith(f"ws://127.0.0.1:{server.port}/")
        agent = connect(attached["agentUrl"], TOKEN)
        try:
            # The tab is the session's app: a late agent hears who is there.
            recv_until(agent, lambda m: m.get("event") == "app_connected")
            assert server.get(f"/debug/sessions/{attached['sessionId']}").json()["tabId"] == tab
            events = server.get(f"/events?tabId={tab}", stream=True, timeout=(5, 30))
            assert events.status_code == 200
            events.close()
        finally:
            agent.close()
        assert server.request("DELETE", f"/tabs/{tab}/debug").status_code == 200
    finally:
        server.post(f"/tabs/{tab}/close")
        wait_until(lambda: server.get("/debug/sessions").json()["connections"] == 0, 10)


def test_sessions_route_to_the_instance_that_holds_them(server, session, site):
    r = server.post("/instances/start", json={})
    assert r.status_code == 201, r.text
    other = server.wait_status(r.json()["id"], "running")["id"]
    try:
        made = server.post(f"/debug/sessions?instanceId={other}")
        assert made.status_code == 201 and made.json()["instanceId"] == other, made.text
        theirs = made.json()
        assert theirs["appUrl"].startswith(f"ws://127.0.0.1:{server.port}/debug?")
        r = server.post("/debug/sessions", json={"instanceId": "inst_nope"})
        assert r.status_code == 404 and r.json()["code"] == "instance_not_found"
        listed = {s["sessionId"]: s["instanceId"] for s in server.get("/debug/sessions").json()["sessions"]}
        assert listed[theirs["sessionId"]] == other and listed[session["sessionId"]] == session["instanceId"]
        r = server.get(f"/debug/sessions/{theirs['sessionId']}")
        assert r.status_code == 200 and r.headers["X-PinchTab-Instance-Id"] == other
        agent = connect(theirs["agentUrl"], TOKEN)
        app = connect(theirs["appUrl"])
        recv_until(agent, lambda m: m.get("event") == "app_connected")
        send(app, theirs["sessionId"], "console", level="log", args=["from the other instance"])
        assert recv_until(agent, lambda m: m["type"] == "console")["args"] == ["from the other instance"]
        # A tab of the default instance cannot join a session held by the other one.
        tab = server.post("/navigate", json={"url": site.url("counter.html")}).json()["tabId"]
        r = server.post(f"/tabs/{tab}/debug", json={"sessionId": theirs["sessionId"]})
        assert r.status_code == 409 and r.json()["code"] == "session_elsewhere", r.text
        server.post(f"/tabs/{tab}/close")
        # The instance stops: its sessions end, and the relayed connections close with its code.
        assert server.post(f"/instances/{other}/stop").status_code == 200
        assert recv_close(app, 15)[0] == 1001 and recv_close(agent, 15)[0] == 1001
    finally:
        server.post(f"/instances/{other}/stop")
    r = server.get(f"/debug/sessions/{theirs['sessionId']}")
    assert r.status_code == 404 and r.json()["code"] == "session_not_found"
