"""Starting the local server for ``pinchtab nav`` when none answers, as the original does.

Only for a loopback address (a remote server is not ours to start), only when nothing listens on
the port, and bounded: the server gets :data:`START_TIMEOUT_S` to report its default instance
running. It runs detached (its own session, output to ``<stateDir>/logs/server.log``) so it outlives
the command that started it; ``POST /shutdown`` or ``pinchtab daemon stop`` ends it.
"""
from __future__ import annotations

import socket
import subprocess
import sys
import time
from typing import Any
from urllib.parse import urlsplit

from .rest import Client, ClientError

__all__ = ["START_TIMEOUT_S", "ensure_server", "listening"]

START_TIMEOUT_S = 60.0
_POLL_S = 0.25


def listening(host: str, port: int, timeout_s: float = 0.3) -> bool:
    """True if something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def _ready(doc: Any) -> bool:
    if not isinstance(doc, dict):
        return False
    default = doc.get("defaultInstance")
    if isinstance(default, dict):
        return default.get("status") == "running"
    return doc.get("status") == "ok"


def ensure_server(client: Client) -> None:
    """Start ``pinchtab server`` on the client's loopback port if nothing listens there, and wait."""
    parts = urlsplit(client.base_url)
    host, port = parts.hostname or "", parts.port or (443 if parts.scheme == "https" else 80)
    if listening(host, port):  # the usual case, answered before the config (and its schemas) loads
        return
    from ..config import is_loopback, load_config

    if not is_loopback(host):
        return
    state_dir = load_config().server.state_dir
    log_dir = state_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(log_dir / "server.log", "ab") as log:
        proc = subprocess.Popen([sys.executable, "-m", "app.clients.cli", "server", "--port", str(port)],
                                stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    print(f"Started pinchtab server on {host}:{port} (pid {proc.pid}); waiting for it...", file=sys.stderr)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ClientError(f"the pinchtab server exited at start (status {proc.returncode}); see "
                              f"{log_dir / 'server.log'}", code="server_start_failed")
        try:
            if _ready(client.get("/health")):
                return
        except ClientError:
            pass
        time.sleep(_POLL_S)
    raise ClientError(f"the pinchtab server did not become ready within {START_TIMEOUT_S:g} s; see "
                      f"{log_dir / 'server.log'}", code="timeout")
