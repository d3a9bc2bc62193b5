"""What one page can cost the debug bridge, on a real server (the standalone one) with real clients:
a session's memory is capped in bytes, and app sockets leave room for agents and event streams."""
from __future__ import annotations

import json
import queue
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import websocket
from support.config import make_config
from support.debug_pages import recv_until, stream_events
from support.waits import wait_until

from app.debug import protocol
from app.debug.standalone import StandaloneServer

SESSION = "limits-session"
MIB = 1024 * 1024


def ws_connect(srv: StandaloneServer, role: str = "app", **params: str) -> websocket.WebSocket:
    query = "".join(f"&{k}={v}" for k, v in params.items())
    return websocket.create_connection(f"{srv.url}?role={role}&sessionId={SESSION}{query}", timeout=10,
                                       skip_utf8_validation=True)


def console(text: str) -> str:
    return json.dumps(protocol.envelope(SESSION, "console", level="log", args=[text]))


def retained(srv: StandaloneServer) -> int:
    """The record's size measured afresh from what it holds, not from the session's own count."""
    return sum(sys.getsizeof(text) for _, _, text in list(srv.session.history))


def next_event(events: queue.Queue, pred: Callable[[dict[str, Any]], bool], timeout_s: float = 10.0) -> dict[str, Any]:
    """The first streamed message ``pred`` accepts (others are skipped), within the deadline."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            msg = events.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise AssertionError(f"no such event within {timeout_s} s") from None
        if pred(msg):
            return msg


@pytest.fixture
def small_budget(tmp_path: Path) -> Iterator[StandaloneServer]:
    with StandaloneServer(make_config(tmp_path, **{"debug.maxSessionBytes": 4 * MIB}), "127.0.0.1", 0,
                          SESSION) as srv:
        yield srv


def test_forty_large_frames_leave_the_session_within_its_byte_budget(small_budget: StandaloneServer) -> None:
    srv = small_budget
    agent = ws_connect(srv, "agent")
    app = ws_connect(srv, appId="flood")
    recv_until(agent, lambda m: m.get("event") == "app_connected")
    for i in range(40):   # ~1 MB each, 40 MB in all; each reaches the agent whole, live
        app.send(console(f"{i:02d}" + "x" * (MIB - 200)))
        got = recv_until(agent, lambda m: m.get("type") == "console")
        assert got["args"][0][:2] == f"{i:02d}" and len(got["args"][0]) == MIB - 198
    app.close()
    wait_until(lambda: not srv.session.apps)
    # The app is gone; what the session still holds is under its budget, oldest dropped first.
    info = requests.get(f"http://127.0.0.1:{srv.port}/debug/sessions/{SESSION}", timeout=5).json()
    assert info["maxBytes"] == 4 * MIB and 0 < info["retainedBytes"] <= 4 * MIB
    assert srv.session.history_bytes <= 4 * MIB and retained(srv) <= 4 * MIB
    assert 2 <= info["retained"] < 8, info
    kept = [json.loads(text)["args"][0][:2] for _, kind, text in srv.session.history if kind == "console"]
    assert kept == [f"{i:02d}" for i in range(40 - len(kept), 40)]   # the newest, in order
    # A subscriber resuming from before them is told how many it missed, as with the message cap.
    first_kept = srv.session.history[0][0]
    with requests.get(f"http://127.0.0.1:{srv.port}/events", params={"sessionId": SESSION},
                      headers={"Last-Event-ID": "1"}, stream=True, timeout=(5, 10)) as r:
        events = stream_events(r)
        notice = events.get(timeout=10)
        events.close()
    assert notice["type"] == "dropped" and notice["count"] == first_kept - 2
    agent.close()


def test_a_frame_larger_than_the_budget_goes_out_live_but_is_not_kept(tmp_path: Path) -> None:
    budget = 64 * 1024
    cfg = make_config(tmp_path, **{"debug.maxSessionBytes": budget})
    with StandaloneServer(cfg, "127.0.0.1", 0, SESSION) as srv:
        agent = ws_connect(srv, "agent")
        events = requests.get(f"http://127.0.0.1:{srv.port}/events", params={"sessionId": SESSION}, stream=True,
                              timeout=(5, 10))
        streamed = stream_events(events)
        app = ws_connect(srv)
        recv_until(agent, lambda m: m.get("event") == "app_connected")
        app.send(console("big" + "y" * (2 * budget)))
        app.send(console("small"))
        live = recv_until(agent, lambda m: m.get("type") == "console")
        assert live["args"][0].startswith("big") and len(live["args"][0]) == 2 * budget + 3   # whole, live
        # The event stream gets a notice in its place: its type and size, not its text.
        notice = next_event(streamed, lambda m: m["type"] in ("dropped", "console"))
        assert notice["type"] == "dropped" and notice["messageType"] == "console" and notice["count"] == 1
        assert notice["bytes"] > budget
        assert recv_until(agent, lambda m: m.get("type") == "console")["args"] == ["small"]
        wait_until(lambda: srv.session.messages >= 2)
        assert srv.session.history_bytes <= budget and retained(srv) <= budget
        assert all("y" * 1000 not in text for _, _, text in srv.session.history)
        assert srv.session.describe()["tooLarge"] == 1
        app.close()
        agent.close()
    events.close()   # after the server ended the stream: its reader thread is no longer inside a read


def test_app_sockets_leave_room_for_agents_and_event_streams(tmp_path: Path) -> None:
    with StandaloneServer(make_config(tmp_path, **{"debug.maxConnections": 8}), "127.0.0.1", 0, SESSION) as srv:
        apps: list[websocket.WebSocket] = []
        held: list[Any] = []
        try:
            refused: websocket.WebSocketBadStatusException | None = None
            for i in range(9):   # a page opening sockets in a loop: it is stopped before the cap
                try:
                    apps.append(ws_connect(srv, appId=f"tab-{i}"))
                except websocket.WebSocketBadStatusException as exc:
                    refused = exc
                    break
            assert refused is not None and refused.status_code == 503
            assert json.loads(refused.resp_body)["code"] == "too_many_connections"
            assert refused.resp_headers.get("retry-after") == "5"
            assert len(apps) == srv.hub.limiter.max_app_connections < 8
            listed = requests.get(f"http://127.0.0.1:{srv.port}/debug/sessions", timeout=5).json()
            assert listed["appConnections"] == len(apps) and listed["maxAppConnections"] == len(apps)
            # What the apps cannot take: an event stream and an agent still get in.
            events = requests.get(f"http://127.0.0.1:{srv.port}/events", params={"sessionId": SESSION},
                                  stream=True, timeout=(5, 10))
            held.append(events)
            assert events.status_code == 200
            agent = ws_connect(srv, "agent")
            held.append(agent)
            recv_until(agent, lambda m: m.get("event") == "app_connected")   # it hears the apps
            # The whole cap still holds for everyone.
            r = requests.get(f"http://127.0.0.1:{srv.port}/events", params={"sessionId": SESSION}, timeout=5)
            assert r.status_code == 503 and r.json()["code"] == "too_many_connections"
            # A closed app gives its place back to the next app.
            apps.pop().close()
            wait_until(lambda: srv.hub.limiter.app_connections == srv.hub.limiter.max_app_connections - 1)
            apps.append(ws_connect(srv, appId="late"))
        finally:
            for c in apps + held:
                c.close()
        wait_until(lambda: srv.hub.connections == 0)
