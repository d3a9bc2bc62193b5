"""``pinchtab debug connect`` and ``pinchtab debug attach``: an agent's terminal on a debug session.

``connect`` is a drop-in for the original ``debug-bridge connect``: it serves the WebSocket
``/debug`` for one session (:class:`~app.debug.standalone.StandaloneServer`, in this process) and is
that session's local agent. ``attach`` joins a session hosted by a running bridge as an agent over
its WebSocket. Both print what the app sends on stdout (one JSON object per line with ``--json``,
readable text otherwise, a REPL with a terminal) and take commands on stdin (JSON objects or the
REPL's words); the wording is :mod:`app.clients.debug_console`'s, the I/O
:mod:`app.clients.debug_terminal`'s.

Lifetime: stdin's end does not stop them (an agent may only listen), SIGINT or SIGTERM ends them
with status 0, closing every connection within a second. ``attach`` whose connection drops tries
again with backoff for up to ``RECONNECT_FOR_S`` while stdin is open (a bridge restarting, a
proxy's idle cut); it gives up at once when the session is gone (404) or the token is refused,
and when stdin has ended, since no one could send it anything more. Giving up exits with 1.

The commands live in :mod:`app.clients.debug_connect` and :mod:`app.clients.debug_attach`; this
module declares the verb.
"""
from __future__ import annotations

import argparse

from .debug_attach import run_attach
from .debug_connect import run_connect

__all__ = ["add_parser"]


def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a port: {port} (0 picks a free one)")
    return port


def _session_id(text: str) -> str:
    """``--session``'s value: any id but an empty one or one that reads as an option."""
    if not text or text.startswith("-"):
        raise argparse.ArgumentTypeError(f"not a session id: {text!r} (leave --session out for a random one)")
    return text


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``pinchtab debug connect|attach``."""
    p = sub.add_parser("debug", help="live telemetry and commands between a web app and an agent",
                       description="Debug a web app live: its console, errors, network, DOM and state as they "
                                   "happen, and commands to it (the debug bridge protocol).")
    dsub = p.add_subparsers(dest="debug_command", metavar="COMMAND", required=True)
    json_help = "one JSON object per line on stdout (for agents); commands as JSON objects or REPL words on stdin"

    c = dsub.add_parser("connect", help="serve one debug session here and be its agent (no browser needed)",
                        description="A drop-in for `debug-bridge connect`: a WebSocket server at /debug for one "
                                    "session; apps join with ws://HOST:PORT/debug?role=app&sessionId=SESSION. "
                                    "Beyond loopback it needs a token (agents send it; apps are admitted by the "
                                    "session id, which must then be long and random).")
    c.add_argument("-s", "--session", type=_session_id, default=None,
                   help="the session id apps join (default: a new random one, printed at start)")
    c.add_argument("-p", "--port", type=_port, default=4000, help="port to listen on (default 4000; 0 picks one)")
    c.add_argument("--host", default="localhost", help="address to listen on (default localhost)")
    c.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=json_help)
    c.set_defaults(run=run_connect)

    a = dsub.add_parser("attach", help="join a debug session of a running bridge as an agent",
                        description="Join a bridge-hosted session (POST /debug/sessions) as an agent, with the "
                                    "same stdin and stdout as `pinchtab debug connect`.")
    a.add_argument("-s", "--session", required=True, help="the session id (from POST /debug/sessions)")
    a.add_argument("--server", metavar="URL", default=argparse.SUPPRESS,
                   help="the pinchtab server (default: $PINCHTAB_SERVER, else 127.0.0.1 and the config's port); "
                        "the token comes from PINCHTAB_TOKEN or the config")
    a.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=json_help)
    a.set_defaults(run=run_attach)
