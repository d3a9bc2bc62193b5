"""The manager's wire format: JSON lines over a Unix socket in a 0700 runtime dir.

A request is one line ``{"op": "<name>", "args": {...}}``; the answer is one line, either
``{"ok": true, "result": ...}`` or ``{"ok": false, "error": {"status", "code", "message",
"details"}}``. A connection may carry several requests, one after another. Every read and write
has a deadline. The operations and their arguments are declared once, in :mod:`.control`; the
server is the process kit's (:mod:`app.process.line_server`); here are the framing of the
client's end and where the socket lives.
"""
from __future__ import annotations

import contextlib
import json
import os
import socket
import stat
import time
from pathlib import Path
from typing import Any

from ..process.line_server import encode, unix_address

__all__ = ["MAX_LINE", "SOCKET_NAME", "LineChannel", "ProtocolError", "encode", "ensure_private_dir", "runtime_dir",
           "unix_address"]

MAX_LINE = 4 * 1024 * 1024  # a logs answer is the largest; anything longer is a broken peer
SOCKET_NAME = "manager.sock"


class ProtocolError(Exception):
    """The peer sent something that is not a JSON line, or closed mid-line."""


def runtime_dir(state_dir: Path) -> Path:
    """Where the socket, the pidfiles and the manager's lock live: ``<stateDir>/run``."""
    return Path(state_dir) / "run"


def ensure_private_dir(path: Path) -> Path:
    """Create ``path`` as a 0700 dir of ours; refuse a symlink or a dir someone else owns."""
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode):
        raise OSError(f"{path} is not a directory")
    if st.st_uid != os.getuid():
        raise OSError(f"{path} belongs to another user")
    if stat.S_IMODE(st.st_mode) != 0o700:
        os.chmod(path, 0o700)  # the socket's only guard is this dir's mode
    return path


class LineChannel:
    """One end of a connection: write a JSON line, read a JSON line, each before a deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._buf = b""

    def send(self, obj: Any, timeout_s: float) -> None:
        """Write one JSON line; raises ``TimeoutError`` or ``OSError``."""
        self.sock.settimeout(max(0.001, timeout_s))
        self.sock.sendall(encode(obj))

    def receive(self, timeout_s: float) -> Any | None:
        """The next JSON value, or None when the peer closed cleanly between lines.

        Raises ``TimeoutError`` at the deadline and :class:`ProtocolError` for garbage.
        """
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer before the deadline")
            self.sock.settimeout(left)
            chunk = self.sock.recv(65536)
            if not chunk:
                if self._buf:
                    raise ProtocolError("connection closed mid-line")
                return None
            self._buf += chunk
            if len(self._buf) > MAX_LINE:
                raise ProtocolError("line too long")
        line, _, self._buf = self._buf.partition(b"\n")
        try:
            return json.loads(line)
        except ValueError as exc:
            raise ProtocolError(f"not JSON: {exc}") from None

    def close(self) -> None:
        """Close the socket (idempotent)."""
        with contextlib.suppress(OSError):
            self.sock.close()
