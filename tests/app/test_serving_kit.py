"""The process kit of app/serving: signals that only queue, and the JSON-lines Unix socket server
that the instance manager and the extension daemon share. Real sockets and real signals."""
from __future__ import annotations

import json
import os
import signal
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from app.process.line_server import NO_REQUEST, LineServer
from app.process.signals import SignalQueue


# --- signals --------------------------------------------------------------------------------------
def test_a_signal_only_queues_and_wakes_the_loop_which_acts():
    before = signal.getsignal(signal.SIGUSR1)
    queue = SignalQueue((signal.SIGUSR1,)).install()
    acted: list[int] = []
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        # The handler has run (the interpreter runs it before the next bytecode): it queued, nothing more.
        assert list(queue.pending) == [signal.SIGUSR1] and acted == []
        t0 = time.monotonic()
        assert queue.wait(5.0) == []  # woken by the pipe at once, not by the timeout
        assert time.monotonic() - t0 < 1.0
        while (sig := queue.pop()) is not None:  # the loop's side: it acts, on its own time
            acted.append(sig)
        assert acted == [signal.SIGUSR1] and queue.pop() is None
        t0 = time.monotonic()
        assert queue.wait(0.05) == []  # the pipe was drained: nothing wakes it now
        assert time.monotonic() - t0 >= 0.05
    finally:
        queue.restore()
        queue.close()
    assert signal.getsignal(signal.SIGUSR1) == before


def test_the_wait_returns_the_other_fds_that_are_ready():
    queue = SignalQueue(()).install()
    r, w = os.pipe()
    try:
        os.write(w, b"x")
        assert queue.wait(5.0, [r]) == [r]
    finally:
        queue.restore()
        queue.close()
        os.close(r)
        os.close(w)


# --- the line server ------------------------------------------------------------------------------
def _error(message: str, code: str, request: Any) -> dict[str, Any]:
    return {"error": message, "code": code, "had_request": request is not NO_REQUEST}


def _exchange(sock: socket.socket, line: bytes) -> Any:
    sock.sendall(line)
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = sock.recv(65536)
        if not chunk:
            return None
        buf += chunk
    return json.loads(buf)


@pytest.fixture
def served(tmp_path: Path):
    def run(request: Any) -> Any:
        if request == "boom":
            raise RuntimeError("a bug")
        if request == "late-boom":
            def fail() -> Any:
                raise RuntimeError("a later bug")
            return fail
        return lambda: {"echo": request}

    server = LineServer(tmp_path / "run" / "s.sock", run, _error, name="test", max_line_bytes=64,
                        max_connections=1).start()
    yield server
    server.stop()


def _connect(path: Path) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(5)
    sock.connect(str(path))
    return sock


def test_requests_answers_and_the_one_error_shape(served: LineServer, caplog: pytest.LogCaptureFixture):
    assert oct(os.stat(served.path).st_mode & 0o777) == "0o600"
    assert oct(os.stat(served.path.parent).st_mode & 0o777) == "0o700"
    # Bound and listening under a name of its own, then moved to its path: nothing else is left there.
    assert [p.name for p in served.path.parent.iterdir()] == ["s.sock"]
    with _connect(served.path) as s:
        assert _exchange(s, b'{"a": 1}\n') == {"echo": {"a": 1}}
        assert _exchange(s, b"{nope\n")["code"] == "bad_json"
        assert _exchange(s, b'"boom"\n') == {"error": "internal error", "code": "internal", "had_request": True}
        assert _exchange(s, b'"late-boom"\n')["error"] == "internal error: RuntimeError"
        assert _exchange(s, b"[2]\n") == {"echo": [2]}  # the connection goes on after each error
        # A bug in a request is logged, not dropped.
        assert sum("a request failed" in r.getMessage() for r in caplog.records) == 2
        assert _exchange(s, b"1" * 100) == {"error": "line longer than 64 bytes", "code": "line_too_long",
                                            "had_request": False}
        assert s.recv(10) == b""  # and that one ends the connection


def test_a_connection_too_many_is_answered_then_closed(served: LineServer):
    with _connect(served.path) as first:
        assert _exchange(first, b"1\n") == {"echo": 1}
        with _connect(served.path) as second:
            answer = json.loads(second.recv(65536))
            assert answer == {"error": "too many connections (1)", "code": "too_many_connections",
                              "had_request": False}


def test_a_live_socket_is_refused_and_a_stale_one_replaced(served: LineServer, tmp_path: Path):
    from app.process.line_server import SocketInUse

    with pytest.raises(SocketInUse):
        LineServer(served.path, lambda r: lambda: r, _error, name="second", max_line_bytes=64).start()
    stale = tmp_path / "stale.sock"
    dead = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    dead.bind(str(stale))
    dead.close()  # its file stays, with nobody behind it
    server = LineServer(stale, lambda r: lambda: r, _error, name="third", max_line_bytes=64).start()
    try:
        with _connect(stale) as s:
            assert _exchange(s, b"3\n") == 3
    finally:
        server.stop()
    assert not stale.exists()


def test_stop_lets_an_owed_answer_out_within_its_wait(tmp_path: Path):
    taken, release = threading.Event(), threading.Event()

    def slow(request: Any) -> Any:
        taken.set()
        return lambda: release.wait(5) and {"late": request}

    server = LineServer(tmp_path / "slow.sock", slow, _error, name="slow", max_line_bytes=64).start()
    with _connect(server.path) as s:
        s.sendall(b"7\n")
        assert taken.wait(5)
        threading.Timer(0.05, release.set).start()
        server.stop(wait_s=5.0)
        assert json.loads(s.recv(65536)) == {"late": 7}
