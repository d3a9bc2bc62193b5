"""A client of the daemon's Unix socket: write command lines, read the answers, matched by requestId."""
from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

from .commands import Answer
from .errors import ExtensionError, NoDaemon


class NoAnswer(ExtensionError):
    """The daemon did not answer within the wait."""


class DaemonClient:
    """One connection to the daemon; :meth:`call` sends a command and returns its answer."""

    def __init__(self, path: Path, *, connect_timeout_s: float = 5.0) -> None:
        self.path = Path(path)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.settimeout(connect_timeout_s)
        try:
            self._sock.connect(str(self.path))
        except (FileNotFoundError, ConnectionRefusedError):
            self._sock.close()
            raise NoDaemon(f"no daemon at {self.path}: start it with pinchtab ext daemon") from None
        except OSError as exc:
            self._sock.close()
            raise NoDaemon(f"cannot reach the daemon at {self.path}: {exc.strerror or exc}") from None
        self._buffer = b""
        self._early: dict[Any, Answer] = {}  # answers read while waiting for another

    def call(self, command: dict[str, Any], timeout_s: float) -> Answer:
        """Send ``command``; return the answer with its requestId. Raises :class:`NoAnswer` after
        ``timeout_s`` or when the daemon closes the connection first."""
        self._sock.settimeout(timeout_s)
        self._sock.sendall(json.dumps(command, ensure_ascii=False).encode() + b"\n")
        return self.read(command["requestId"], timeout_s)

    def read(self, request_id: Any, timeout_s: float) -> Answer:
        deadline = time.monotonic() + timeout_s
        while True:
            if request_id in self._early:
                return self._early.pop(request_id)
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                try:
                    answer = json.loads(line) if line.strip() else None
                except ValueError:
                    continue
                if isinstance(answer, dict):
                    self._early[answer.get("requestId")] = answer
                if request_id in self._early:
                    return self._early.pop(request_id)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise NoAnswer(f"no answer from the daemon at {self.path} within {timeout_s:g} s")
            self._sock.settimeout(remaining)
            try:
                chunk = self._sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                raise NoAnswer(f"the daemon at {self.path} closed the connection without answering")
            self._buffer += chunk

    def close(self) -> None:
        self._sock.close()

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
