"""app/serving/worker.py under real gunicorn: a thread stays on a connection whose client comes straight
back, and idle kept-alive connections never hold the pool's threads."""
from __future__ import annotations

import socket
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from gunicorn.config import Config
from support.servers import worker_gunicorn

from app.serving.worker import _Settled

APP = textwrap.dedent('''
    import threading

    def app(environ, start_response):
        body = str(threading.get_ident()).encode()
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
        return [body]
''')


@pytest.fixture
def server(tmp_path: Path) -> Iterator[int]:
    """A ``WorkerGunicorn``'s port (our worker serving APP)."""
    with worker_gunicorn(tmp_path, APP, "tinyapp") as port:
        yield port


class Conn:
    """A raw HTTP/1.1 keep-alive connection (so the test controls exactly what is sent when)."""

    def __init__(self, port: int) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        self.buf = b""

    def send(self, *paths: str) -> None:
        self.sock.sendall(b"".join(f"GET {p} HTTP/1.1\r\nHost: t\r\n\r\n".encode() for p in paths))

    def answer(self) -> str:
        while b"\r\n\r\n" not in self.buf:
            self.buf += self._recv()
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")))
        while len(rest) < length:
            rest += self._recv()
        self.buf = rest[length:]
        assert head.startswith(b"HTTP/1.1 200"), head
        return rest[:length].decode()

    def _recv(self) -> bytes:
        data = self.sock.recv(65536)
        assert data, "connection closed"
        return data

    def close(self) -> None:
        self.sock.close()


def test_a_client_that_comes_straight_back_keeps_its_thread(server):
    c = Conn(server)
    threads = set()
    for _ in range(20):
        c.send("/")
        threads.add(c.answer())
    c.close()
    # In plain gthread each request goes back through the poller to whichever pool thread is next.
    assert len(threads) == 1


def test_pipelined_requests_are_answered_in_order(server):
    c = Conn(server)
    c.send("/a", "/b", "/c")
    answers = [c.answer() for _ in range(3)]
    assert len(answers) == 3 and all(a.isdigit() for a in answers)
    c.close()


def test_idle_kept_alive_connections_do_not_hold_the_threads(server):
    # More kept-alive connections than threads, each answered once and then left idle.
    idle = [Conn(server) for _ in range(8)]
    for c in idle:
        c.send("/")
        c.answer()
    late = Conn(server)
    started = time.monotonic()
    late.send("/")
    late.answer()
    assert time.monotonic() - started < 1.0  # (gunicorn's keep-alive here is 30 s)
    for c in idle:  # and the idle ones are still served when they come back
        c.send("/")
        assert c.answer().isdigit()
        c.close()
    late.close()


def test_the_workers_settings_are_read_once_each_and_a_change_through_them_is_seen():
    cfg = Config()
    settled = _Settled(cfg)
    assert settled.keepalive == 2 and settled.forwarded_allow_networks() == cfg.forwarded_allow_networks()
    cfg.set("keepalive", 7)  # behind its back: what was read stays (a running worker's settings do not change)
    assert settled.keepalive == 2
    settled.set("keepalive", 9)
    assert settled.keepalive == 9 and cfg.keepalive == 9
