"""Stalled clients never freeze the server: a real ``pinchtab bridge`` and a real ``pinchtab server``
under a flood of connections that send part of a request and stop keep answering ``/health`` and
snapshots at once, and close the stalled connections when their read timeouts run out."""
from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
import requests
from support.waits import wait_until

pytestmark = pytest.mark.timeout(180)

STALLED = 100
TIMEOUT_S = 2  # server.headerTimeoutSec and server.bodyTimeoutSec in the tests' config
CONFIG = {"server": {"headerTimeoutSec": TIMEOUT_S, "bodyTimeoutSec": TIMEOUT_S}}
HALF_HEAD = b"GET /health HTTP/1.1\r\nHost: 127.0.0.1"  # no end of line, no empty line: the head never ends
HALF_BODY = (b"POST /navigate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
             b"Content-Length: 100\r\n\r\n{\"u")


def closed_by_server(sock: socket.socket) -> bool:
    """Whether the server closed ``sock`` (reading gets an end of file or a reset; never blocks)."""
    sock.setblocking(False)
    try:
        return sock.recv(4096) == b""
    except BlockingIOError:
        return False
    except OSError:
        return True


@contextmanager
def stalled_clients(port: int) -> Iterator[tuple[list[socket.socket], float]]:
    """STALLED connections that each send part of a request and stop (half of them mid-head, half
    mid-body), and when they were sent; all closed afterwards."""
    socks = []
    try:
        for i in range(STALLED):
            sock = socket.create_connection(("127.0.0.1", port), timeout=5)
            sock.sendall(HALF_HEAD if i % 2 == 0 else HALF_BODY)
            socks.append(sock)
        yield socks, time.monotonic()
    finally:
        for sock in socks:
            sock.close()


def answers_within_a_second(method: str, url: str, **kwargs: Any) -> requests.Response:
    started = time.monotonic()
    r = requests.request(method, url, timeout=5, **kwargs)
    assert time.monotonic() - started < 1.0, f"{method} {url} took {time.monotonic() - started:.1f} s"
    return r


def assert_stalled_ones_closed_in_time(socks: list[socket.socket], sent: float) -> None:
    wait_until(lambda: all(closed_by_server(s) for s in socks), TIMEOUT_S + 10, 0.05)
    # A second's slack: the server looks for expired connections every so often, not at the instant.
    assert time.monotonic() - sent < TIMEOUT_S + 1.5


def test_bridge_answers_under_a_flood_of_stalled_clients_and_closes_them(bridge_process, site, tmp_path):
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    bp = bridge_process(env={"PINCHTAB_CONFIG": str(config)})
    bp.wait_healthy()
    r = requests.post(bp.base + "/navigate", json={"url": site.url("form.html")}, timeout=30)
    assert r.status_code == 200
    tab_id = r.json()["tabId"]

    with stalled_clients(bp.port) as (socks, sent):
        assert answers_within_a_second("GET", bp.base + "/health").status_code == 200
        snap = answers_within_a_second("GET", bp.base + "/snapshot", params={"tabId": tab_id})
        assert snap.status_code == 200 and "Username" in snap.text
        assert_stalled_ones_closed_in_time(socks, sent)
    assert answers_within_a_second("GET", bp.base + "/health").status_code == 200


def test_a_big_body_that_stalls_is_answered_408(bridge_process, tmp_path):
    # Too big for the poller to gather: the request's thread reads it, each read bounded.
    config = tmp_path / "config.json"
    config.write_text(json.dumps(CONFIG))
    bp = bridge_process(env={"PINCHTAB_CONFIG": str(config)})
    bp.wait_healthy()
    sock = socket.create_connection(("127.0.0.1", bp.port), timeout=TIMEOUT_S + 10)
    sock.sendall(b"POST /navigate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: 2000000\r\n\r\n{\"url\": \"")
    sent = time.monotonic()
    answer = b""
    while b"\r\n\r\n" not in answer or not answer.endswith(b"}\n"):
        data = sock.recv(65536)
        if not data:
            break
        answer += data
    sock.close()
    assert time.monotonic() - sent < TIMEOUT_S + 1.5
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 408"), head
    assert json.loads(body)["code"] == "request_timeout"


def test_server_answers_under_a_flood_of_stalled_clients_and_closes_them(server_process):
    server = server_process(config=CONFIG)
    server.wait_ready()
    assert server.get("/snapshot").status_code == 200  # the default instance's first tab, opened before
    with stalled_clients(server.port) as (socks, sent):
        assert answers_within_a_second("GET", server.base + "/health").status_code == 200
        snap = answers_within_a_second("GET", server.base + "/snapshot")
        assert snap.status_code == 200
        assert_stalled_ones_closed_in_time(socks, sent)
