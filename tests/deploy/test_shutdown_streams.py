"""SIGTERM to a real ``pinchtab server`` ends its open ``GET /api/events`` streams at once: the
server does not sit out its graceful timeout behind them."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest
import requests
from support.waits import wait_until

pytestmark = pytest.mark.timeout(120)


def test_sigterm_ends_event_streams_and_the_server_exits_promptly(server_process):
    server = server_process(config={"multiInstance": {"strategy": "explicit"}})
    server.wait_ready(default_instance=False)
    stream = server.get("/api/events", stream=True, timeout=(5, 60))
    assert stream.status_code == 200
    lines = stream.iter_lines(decode_unicode=True)
    assert next(lines).startswith("retry:")  # the stream is open and flowing
    ended: dict[str, float] = {}

    def read_to_end() -> None:
        try:
            for _ in lines:
                pass
        except requests.RequestException:  # closed or reset: the stream is over either way
            pass
        ended["stream"] = time.monotonic()

    threading.Thread(target=read_to_end, daemon=True).start()
    sent = time.monotonic()
    os.killpg(server.proc.pid, signal.SIGTERM)
    wait_until(lambda: "stream" in ended, 15)
    server.proc.wait(15)
    exited = time.monotonic()
    assert ended["stream"] - sent < 1.0, f"the stream ended {ended['stream'] - sent:.1f} s after SIGTERM"
    assert exited - sent < 2.5, f"the server exited {exited - sent:.1f} s after SIGTERM"
