"""The debug WebSocket and its HTTP routes on a real server (the standalone one), with real clients."""
from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import websocket
from support.config import make_config
from support.debug_pages import recv_until
from support.waits import wait_until

from app.debug import hub as hub_module
from app.debug import protocol
from app.debug.standalone import StandaloneServer

SESSION = "s1"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[StandaloneServer]:
    with StandaloneServer(make_config(tmp_path), "127.0.0.1", 0, SESSION) as srv:
        yield srv


def ws_connect(srv: StandaloneServer, role: str = "app", session: str = SESSION, **kw: Any) -> websocket.WebSocket:
    return websocket.create_connection(f"{srv.url}?role={role}&sessionId={session}", timeout=5,
                                       skip_utf8_validation=True, **kw)


def send(ws: websocket.WebSocket, type: str, **fields: Any) -> None:
    ws.send(json.dumps(protocol.envelope(SESSION, type, **fields)))


def test_the_original_closes_a_wrong_session_with_4000(server: StandaloneServer) -> None:
    ws = ws_connect(server, session="nope")
    opcode, data = ws.recv_data()
    assert opcode == websocket.ABNF.OPCODE_CLOSE
    assert int.from_bytes(data[:2], "big") == 4000 and b"Invalid session" in data


def test_app_and_agent_talk_through_the_server(server: StandaloneServer) -> None:
    agent = ws_connect(server, "agent")
    app = ws_connect(server, "app")
    recv_until(agent, lambda m: m.get("event") == "app_connected")
    send(app, "console", level="warn", args=["careful"])
    got = recv_until(agent, lambda m: m["type"] == "console")
    assert got["level"] == "warn" and got["args"] == ["careful"]
    send(agent, "click", requestId="c1", target={"stableId": "buy"})
    cmd = recv_until(app, lambda m: m["type"] == "click")
    assert cmd["target"] == {"stableId": "buy"}
    send(app, "command_result", requestId="c1", requestType="click", success=True, duration=2)
    assert recv_until(agent, lambda m: m["type"] == "command_result")["requestId"] == "c1"
    app.close()
    recv_until(agent, lambda m: m.get("event") == "app_disconnected")


def test_an_invalid_command_is_answered_and_the_connection_lives(server: StandaloneServer) -> None:
    agent = ws_connect(server, "agent")
    agent.send("{not json")
    send(agent, "type", requestId="t1", target={"stableId": "q"})   # no text
    res = recv_until(agent, lambda m: m["type"] == "command_result")
    assert res["error"]["code"] == "INVALID_COMMAND" and res["requestId"] == "t1"
    send(agent, "click", requestId="t2", target={"stableId": "q"})  # still served: no app
    assert recv_until(agent, lambda m: m["type"] == "command_result")["requestId"] == "t2"
    assert server.session.invalid == 2


def test_an_oversized_frame_closes_with_1009(tmp_path: Path) -> None:
    with StandaloneServer(make_config(tmp_path, **{"debug.maxFrameBytes": 1000}), "127.0.0.1", 0, SESSION) as srv:
        app = ws_connect(srv)
        app.send("x" * 5000)
        opcode, data = app.recv_data()
        assert opcode == websocket.ABNF.OPCODE_CLOSE and int.from_bytes(data[:2], "big") == 1009


def test_connections_are_capped_with_503_and_retry_after(tmp_path: Path) -> None:
    with StandaloneServer(make_config(tmp_path, **{"debug.maxConnections": 2}), "127.0.0.1", 0, SESSION) as srv:
        held = [ws_connect(srv), ws_connect(srv, "agent")]
        with pytest.raises(websocket.WebSocketBadStatusException) as err:
            ws_connect(srv)
        assert err.value.status_code == 503
        assert err.value.resp_headers.get("retry-after") == "5"
        held[0].close()
        wait_until(lambda: srv.hub.connections == 1)
        ws_connect(srv).close()


def test_a_bad_query_is_a_400_json_answer_before_the_upgrade(server: StandaloneServer) -> None:
    with pytest.raises(websocket.WebSocketBadStatusException) as err:
        ws_connect(server, "boss")
    assert err.value.status_code == 400
    refused = json.loads(err.value.resp_body)
    assert refused["code"] == "bad_request" and refused["details"] == {"field": "role"} and refused["error"]
    assert server.hub.connections == 0   # refused before it took a place


def test_agents_need_the_token_apps_need_the_session_id(tmp_path: Path) -> None:
    with StandaloneServer(make_config(tmp_path, **{"server.token": "sekrit"}), "127.0.0.1", 0, SESSION) as srv:
        with pytest.raises(websocket.WebSocketBadStatusException) as err:
            ws_connect(srv, "agent")
        assert err.value.status_code == 401
        ws_connect(srv, "agent", header=["Authorization: Bearer sekrit"]).close()
        ws_connect(srv, "app").close()   # a page cannot send a token: the id admits it
        assert requests.get(f"http://127.0.0.1:{srv.port}/debug/sdk.js", timeout=5).status_code == 200
        assert requests.get(f"http://127.0.0.1:{srv.port}/debug/sessions", timeout=5).status_code == 401


def test_allowed_origins_limit_which_pages_join(tmp_path: Path) -> None:
    cfg = make_config(tmp_path, **{"debug.allowedOrigins": ["http://good.test"]})
    with StandaloneServer(cfg, "127.0.0.1", 0, SESSION) as srv:
        with pytest.raises(websocket.WebSocketBadStatusException) as err:
            ws_connect(srv, origin="http://evil.test")
        assert err.value.status_code == 403
        ws_connect(srv, origin="http://good.test").close()


def test_a_stalled_agent_is_cut_loose_and_others_keep_up(server: StandaloneServer, monkeypatch: Any) -> None:
    monkeypatch.setattr(hub_module, "SLOW_S", 0.5)
    stalled = ws_connect(server, "agent")
    stalled.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)   # and it never reads
    good = ws_connect(server, "agent")
    app = ws_connect(server, "app")
    recv_until(good, lambda m: m.get("event") == "app_connected")
    big = "y" * 2000
    stop = threading.Event()
    seen: list[int] = []

    def read_good() -> None:
        while not stop.is_set():
            try:
                m = json.loads(good.recv())
            except Exception:
                return
            if m["type"] == "console":
                seen.append(int(m["args"][0]))

    reader = threading.Thread(target=read_good, daemon=True)
    reader.start()
    deadline = time.monotonic() + 20
    i = 0
    while len(server.session.agents) == 2 and time.monotonic() < deadline:
        send(app, "console", level="log", args=[str(i), big])
        i += 1
    assert len(server.session.agents) == 1, "the stalled agent was never cut loose"
    send(app, "console", level="log", args=["-1", "last"])
    wait_until(lambda: -1 in seen)
    stop.set()


def test_the_rest_command_route_waits_for_the_apps_answer(server: StandaloneServer) -> None:
    app = ws_connect(server)
    wait_until(lambda: server.session.apps)   # the handshake answers before the server has joined it
    base = f"http://127.0.0.1:{server.port}"

    def answer() -> None:
        cmd = recv_until(app, lambda m: m["type"] == "request_ui_tree")
        send(app, "ui_tree", requestId=cmd["requestId"], items=[])

    t = threading.Thread(target=answer)
    t.start()
    r = requests.post(f"{base}/debug/sessions/{SESSION}/commands", json={"type": "request_ui_tree"}, timeout=10)
    t.join()
    assert r.status_code == 200 and r.json()["type"] == "ui_tree"
    app.close()
    wait_until(lambda: not server.session.apps)
    r = requests.post(f"{base}/debug/sessions/{SESSION}/commands", json={"type": "request_ui_tree"}, timeout=10)
    assert r.status_code == 409 and r.json()["code"] == "no_app"
    r = requests.post(f"{base}/debug/sessions/{SESSION}/commands", json={"type": "fly"}, timeout=10)
    assert r.status_code == 400


def test_a_commands_fields_are_read_whatever_the_content_type(server: StandaloneServer) -> None:
    app = ws_connect(server)
    wait_until(lambda: server.session.apps)
    got: list[dict[str, Any]] = []

    def answer() -> None:
        cmd = recv_until(app, lambda m: m["type"] == "type")
        got.append(cmd)
        send(app, "command_result", requestId=cmd["requestId"], requestType="type", success=True, duration=1)

    t = threading.Thread(target=answer)
    t.start()
    body = json.dumps({"type": "type", "target": {"stableId": "q"}, "text": "hi", "timeout": 10})
    # No Content-Type at all (data= of a string): the body is JSON all the same.
    r = requests.post(f"http://127.0.0.1:{server.port}/debug/sessions/{SESSION}/commands", data=body, timeout=15)
    t.join(15)
    assert "Content-Type" not in r.request.headers
    assert r.status_code == 200 and r.json()["success"] is True, r.text
    assert got and got[0]["target"] == {"stableId": "q"} and got[0]["text"] == "hi" and "timeout" not in got[0]
    r = requests.post(f"http://127.0.0.1:{server.port}/debug/sessions/{SESSION}/commands", data="[1]",
                      headers={"Content-Type": "text/plain"}, timeout=15)
    assert r.status_code == 400 and r.json()["code"] == "bad_json"
    app.close()


def test_events_stream_with_ids_and_resume(server: StandaloneServer) -> None:
    base = f"http://127.0.0.1:{server.port}"
    app = ws_connect(server)
    for i in range(3):
        send(app, "console", level="log", args=[str(i)])
    wait_until(lambda: server.session.messages >= 3)
    with requests.get(f"{base}/events", params={"sessionId": SESSION, "types": "console"},
                      headers={"Last-Event-ID": "1"}, stream=True, timeout=5) as r:
        assert r.headers["Content-Type"].startswith("text/event-stream")
        lines = r.iter_lines(decode_unicode=True)
        events: list[tuple[int, dict[str, Any]]] = []
        current = 0
        for line in lines:
            if line.startswith("id: "):
                current = int(line[4:])
            elif line.startswith("data: "):
                events.append((current, json.loads(line[6:])))
                if len(events) == 3:
                    break
    assert [e[1]["args"] for e in events] == [["0"], ["1"], ["2"]]
    assert [e[0] for e in events] == sorted(e[0] for e in events) and events[0][0] > 1


def test_shutdown_ends_every_stream_within_a_second(tmp_path: Path) -> None:
    srv = StandaloneServer(make_config(tmp_path), "127.0.0.1", 0, SESSION).start()
    agent = ws_connect(srv, "agent")
    resp = requests.get(f"http://127.0.0.1:{srv.port}/events", params={"sessionId": SESSION}, stream=True, timeout=5)
    started = time.monotonic()
    srv.hub.close_all()
    opcode, data = agent.recv_data()
    assert opcode == websocket.ABNF.OPCODE_CLOSE and int.from_bytes(data[:2], "big") == 1001
    assert list(resp.iter_lines()) is not None  # the stream ends (the iterator finishes)
    assert time.monotonic() - started < 1.0
    srv.stop()
