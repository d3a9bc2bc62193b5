"""Servers in subprocesses, run the way users run them: start, wait until healthy, stop.

The bench scripts and the tests both start servers this way (``pinchtab bridge``, ``pinchtab
server``, plain gunicorn, nginx), so the one copy lives here; tests import it like ``wait_for``.
Nothing here depends on pytest: a miss raises ``TimeoutError`` or ``ServerExited``.
"""
from __future__ import annotations

import os
import signal
import socket
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import IO

import requests

from bench.common import wait_for

# After SIGKILL only the kernel has work left; this bounds the wait for it.
KILL_WAIT_S = 5.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now (another process may still take it before
    the caller's server binds it: rare enough for tests and benchmarks)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


class ServerExited(RuntimeError):
    """The server process ended while it was being waited on."""


class ServerSubprocess:
    """A server in a subprocess, started at once in a session of its own so that a stop reaches
    everything it started (gunicorn's workers, a bridge's Chrome).

    ``argv``, ``env`` and ``cwd`` are the command; ``port`` is where it was told to listen (the
    caller passes it in the command or environment). Its stdout and stderr go to ``log_path``
    (discarded without one). ``name`` says which server in failure messages. ``stop_timeout_s``
    bounds a graceful stop before SIGKILL.
    """

    def __init__(self, argv: Sequence[str], *, port: int, env: Mapping[str, str], cwd: Path | None = None,
                 log_path: Path | None = None, name: str = "server", stop_timeout_s: float = 20.0) -> None:
        self.name = name
        self.port = port
        self.base = f"http://127.0.0.1:{port}"
        self.log_path = log_path
        self.stop_timeout_s = stop_timeout_s
        self.log: IO[bytes] | None = open(log_path, "w+b") if log_path is not None else None
        out: IO[bytes] | int = self.log if self.log is not None else subprocess.DEVNULL
        try:
            self.proc = subprocess.Popen(list(argv), cwd=None if cwd is None else str(cwd), env=dict(env),
                                         stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        except OSError:
            if self.log is not None:
                self.log.close()
            raise

    def healthy(self) -> bool:
        """Whether ``GET /health`` answers ``{"status": "ok"}`` now."""
        try:
            return bool(requests.get(self.base + "/health", timeout=1).json().get("status") == "ok")
        except (requests.RequestException, ValueError):  # not listening yet, or not JSON yet
            return False

    def raise_if_exited(self) -> None:
        """Raise ``ServerExited``, with the server's output, if the process has ended."""
        code = self.proc.poll()
        if code is not None:
            raise ServerExited(f"{self.name} exited: {self.output() or f'status {code}, output not kept'}")

    def wait_healthy(self, timeout_s: float = 30.0, interval_s: float = 0.05) -> None:
        """Poll ``healthy()`` until it is true. Raises ``ServerExited`` if the process ends first and
        ``TimeoutError`` at the deadline."""
        def ready() -> bool:
            self.raise_if_exited()
            return self.healthy()

        wait_for(ready, timeout_s, interval_s)

    def output(self) -> str:
        """What the server has written so far ("" when its output is discarded)."""
        if self.log_path is None:
            return ""
        return self.log_path.read_bytes().decode(errors="replace")

    def stop(self) -> None:
        """SIGTERM to the process group, SIGKILL to it if the server has not ended within
        ``stop_timeout_s``; then close the log. A server that has already ended is left as it is."""
        if self.proc.poll() is None:
            # The group, not the pid: a server's children (workers, browsers) must not outlive it.
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=self.stop_timeout_s)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=KILL_WAIT_S)
        if self.log is not None:
            self.log.close()
