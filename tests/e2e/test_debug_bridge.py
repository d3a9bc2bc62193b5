"""Debug sessions on a real ``pinchtab bridge`` (gunicorn): streams end on SIGTERM, sessions outlive
a restart, long-lived connections never take the threads ordinary requests need."""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
import requests
import websocket
from support.waits import wait_until

pytestmark = pytest.mark.e2e

TOKEN = "debug-e2e-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def start(bridge_process, tmp_path: Path, config: dict | None = None):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(config or {}))
    bp = bridge_process(env={"PINCHTAB_TOKEN": TOKEN, "PINCHTAB_CONFIG": str(cfg)})
    bp.wait_healthy(60)
    return bp


def ws_url(bp, session: str, role: str) -> str:
    return bp.base.replace("http://", "ws://") + f"/debug?role={role}&sessionId={session}"


def new_session(bp) -> str:
    r = requests.post(bp.base + "/debug/sessions", headers=AUTH, timeout=10)
    assert r.status_code == 201, r.text
    return r.json()["sessionId"]


def test_sigterm_ends_every_socket_and_event_stream_within_a_second(bridge_process, tmp_path):
    bp = start(bridge_process, tmp_path)
    sid = new_session(bp)
    agent = websocket.create_connection(ws_url(bp, sid, "agent"), header=[f"Authorization: Bearer {TOKEN}"],
                                        timeout=10)
    app = websocket.create_connection(ws_url(bp, sid, "app"), timeout=10)
    events = requests.get(bp.base + f"/events?sessionId={sid}", headers=AUTH, stream=True, timeout=10)
    assert events.status_code == 200
    ended: dict[str, float] = {}

    def read_until_closed(name: str, read) -> None:
        try:
            while read():
                pass
        except Exception:  # closed, reset or timed out: the stream is over either way
            pass
        ended[name] = time.monotonic()

    lines = events.iter_lines()
    readers = [threading.Thread(target=read_until_closed, args=("agent", agent.recv), daemon=True),
               threading.Thread(target=read_until_closed, args=("app", app.recv), daemon=True),
               threading.Thread(target=read_until_closed, args=("events", lambda: next(lines, None) is not None),
                                daemon=True)]
    for t in readers:
        t.start()
    wait_until(lambda: requests.get(bp.base + f"/debug/sessions/{sid}", headers=AUTH, timeout=5)
               .json()["agents"], 10)
    sent = time.monotonic()
    os.killpg(bp.proc.pid, signal.SIGTERM)
    wait_until(lambda: len(ended) == 3, 5)
    assert max(ended.values()) - sent < 1.0, ended
    bp.proc.wait(20)


def test_a_made_session_outlives_a_bridge_restart(bridge_process, tmp_path):
    bp = start(bridge_process, tmp_path)
    sid = new_session(bp)
    bp.stop()
    again = start(bridge_process, tmp_path)
    app = websocket.create_connection(ws_url(again, sid, "app"), timeout=10)
    try:
        info = wait_until(lambda: requests.get(again.base + f"/debug/sessions/{sid}", headers=AUTH, timeout=5)
                          .json()["apps"], 10)
        assert len(info) == 1
    finally:
        app.close()


def test_the_connection_cap_leaves_threads_for_ordinary_requests(bridge_process, tmp_path):
    bp = start(bridge_process, tmp_path, {"debug": {"maxConnections": 4}})
    sid = new_session(bp)
    # Apps may take three of the four (distinct appIds: the same one again replaces the first); the
    # last place is an agent's.
    held = [websocket.create_connection(ws_url(bp, sid, "app") + f"&appId=app-{i}", timeout=10) for i in range(3)]
    held.append(websocket.create_connection(ws_url(bp, sid, "agent"), header=[f"Authorization: Bearer {TOKEN}"],
                                            timeout=10))
    try:
        for role in ("app", "agent"):
            with pytest.raises(websocket.WebSocketBadStatusException) as refused:
                websocket.create_connection(ws_url(bp, sid, role), header=[f"Authorization: Bearer {TOKEN}"],
                                            timeout=10)
            assert refused.value.status_code == 503
            assert refused.value.resp_headers.get("retry-after") == "5"
        t0 = time.monotonic()
        assert requests.get(bp.base + "/tabs", headers=AUTH, timeout=5).status_code == 200
        assert requests.get(bp.base + "/health", timeout=5).status_code == 200
        assert time.monotonic() - t0 < 2
    finally:
        for ws in held:
            ws.close()
    # A closed connection gives its slot back.
    wait_until(lambda: requests.get(bp.base + "/debug/sessions", headers=AUTH, timeout=5).json()["connections"] == 0,
               10)
