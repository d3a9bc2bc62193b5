"""The clients' side of the daemon: a Unix socket speaking newline-delimited JSON both ways.

The original CLI's protocol: a client writes command lines ``{type, data, requestId}`` and reads
answer lines, matched by requestId and written in the order they finish (several commands may share
a connection). An unparsable line answers ``{success: false, error: "<parse error>"}``. When the
client ends its side, the answers still owed are written (each within its deadline), then the
connection is closed: the original CLI reads one line and closes, others end their side first and
read after.

The server itself is the process kit's (:mod:`app.process.line_server`); what is the daemon's is here:
where the socket lives, the answer shape of an error, and what a taken path means to a person.
The socket lives where the original's does (:func:`default_socket_path`), but in a 0700 folder and
with mode 0600, not world-writable: whoever can write to it drives the person's browser.
"""
from __future__ import annotations

import logging
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..process.line_server import NO_REQUEST, LineServer, SocketInUse, SocketPathError
from ..web import untrusted_json
from .commands import Answer
from .errors import DaemonRunning, ExtensionError

log = logging.getLogger(__name__)

SOCKET_NAME = "browser.sock"
MAX_CONNECTIONS = 64
MAX_LINE_BYTES = 16 * 1024 * 1024
OWED_GRACE_S = 5.0         # beyond the commands' own deadline, when waiting for owed answers

# Starts a command (on the connection's reader thread, so commands queue in the order their lines
# came) and returns what waits for its answer (called on a thread of its own).
Runner = Callable[[Any], Callable[[], Answer]]


def default_socket_path(env: Mapping[str, str] | None = None) -> Path:
    """The original's socket path: ``$SAK_BROWSER_SKILL_DIR/browser.sock``, else
    ``$SAK_HOME/browser/browser.sock``, ``SAK_HOME`` defaulting to ``~/.sovereign-ai``."""
    env = os.environ if env is None else env
    skill_dir = env.get("SAK_BROWSER_SKILL_DIR")
    if skill_dir:
        return Path(skill_dir) / SOCKET_NAME
    sak_home = env.get("SAK_HOME") or os.path.join(os.path.expanduser("~"), ".sovereign-ai")
    return Path(sak_home) / "browser" / SOCKET_NAME


def parse_line(line: bytes) -> Any:
    """The JSON value of a command line; raises ValueError (with the parser's message)."""
    return untrusted_json.loads(line)


def error_answer(message: str, _code: str, command: Any) -> Answer:
    """The original's error line: ``{requestId, success: false, error}``; no requestId when the line
    was no command at all (not JSON, too long, a connection too many)."""
    if command is NO_REQUEST:
        return {"success": False, "error": message}
    rid = command.get("requestId") if isinstance(command, dict) else None
    return {"requestId": rid, "success": False, "error": message}


def new_server(path: Path, run: Runner, *, command_timeout_s: float) -> LineServer:
    """The daemon's socket server on ``path``, not yet listening (:func:`start`)."""
    return LineServer(path, run, error_answer, name="extension daemon", max_line_bytes=MAX_LINE_BYTES,
                      max_connections=MAX_CONNECTIONS, owed_wait_s=command_timeout_s + OWED_GRACE_S,
                      # this user, and root (who can open a 0600 socket anyway), as the HTTP side admits
                      peer_uids={os.getuid(), os.geteuid(), 0})


def start(server: LineServer) -> LineServer:
    """Claim the server's path (removing a stale socket, refusing a live one) and start serving
    clients. Raises :class:`DaemonRunning` or :class:`ExtensionError`."""
    try:
        server.start()
    except SocketInUse:
        raise DaemonRunning(f"another daemon is running at {server.path}") from None
    except SocketPathError as exc:
        hint = ": remove it or choose another --socket" if "not a socket" in str(exc) else ""
        raise ExtensionError(f"{exc}{hint}") from None
    log.info("extension daemon: clients connect to %s", server.path)
    return server
