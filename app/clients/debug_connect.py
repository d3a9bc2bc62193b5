"""``pinchtab debug connect``: a drop-in for the original ``debug-bridge connect``. It serves the
WebSocket ``/debug`` for one session (:class:`~app.debug.standalone.StandaloneServer`, in this process)
and is that session's local agent, on the terminal of :mod:`app.clients.debug_terminal`.
"""
from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from typing import Any

from ..config import load_config
from . import debug_console as console
from .debug_console import dumps
from .debug_terminal import CLOSE_WAIT_S, IDLE_WAKE_S, Console, Exit, Output, agent_terminal

__all__ = ["run_connect"]


def run_connect(args: argparse.Namespace) -> int:
    """``pinchtab debug connect``: serve one session and be its local agent.

    Without ``--session`` the session id is a new random one (printed in the first line): the id is
    what admits an app, and the original's ``default`` is the first one any page would try.
    """
    from ..debug.hub import new_session_id, queued_peer
    from ..debug.standalone import StandaloneServer

    as_json = bool(getattr(args, "json", False))
    logging.getLogger("werkzeug").setLevel(logging.WARNING)   # a request line per connection is noise here
    config = load_config()
    session_id: str = args.session or new_session_id()
    try:
        server = StandaloneServer(config, args.host, args.port, session_id)
    except OSError as exc:
        print(f"pinchtab: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    out = Output.for_stdout(as_json)
    exit = Exit()
    wake = threading.Event()
    done = threading.Event()
    hub, session = server.hub, server.session
    # Never cut loose: this agent is the process itself. Its outbox stays bounded (the oldest go and
    # the printer says how many), and at shutdown the process ends anyway.
    peer = queued_peer("agent", "cli", wake.set, lambda code, reason: None, {"kind": "cli"},
                       max_bytes=hub.outbox_bytes)
    assert peer.outbox is not None
    box = peer.outbox
    term = Console(out, session_id, lambda cmd: hub.from_agent(session, peer, dumps(cmd)))

    def print_loop() -> None:
        try:
            while not done.is_set():
                wake.wait(IDLE_WAKE_S)
                wake.clear()
                items, lost = box.take()
                if lost:
                    out.emit(console.dropped(lost, box.total_dropped))
                for text in items:
                    term.handle_message(text)
            for text in box.take()[0]:   # what came in just before the end
                term.handle_message(text)
        except OSError:   # stdout is gone (the agent closed the pipe): nobody is listening
            exit.halt(1)

    printer = threading.Thread(target=print_loop, name="debug-printer", daemon=True)
    with agent_terminal(exit, as_json) as repl:
        try:
            hub.join(session, peer)   # first: whoever connects after server_started finds us there
            server.start()
            out.emit(console.server_started(server.url, session_id))
            printer.start()
            term.start_stdin(repl, exit)
            exit.wait()
        finally:
            hub.leave(session, peer)
            _close_all(server)
            done.set()
            wake.set()
            if printer.is_alive():
                printer.join(IDLE_WAKE_S)
    return exit.code


def _close_all(server: Any) -> None:
    """Close every connection (each gets a close frame, or loses its socket after a second), then stop."""
    server.hub.close_all()
    deadline = time.monotonic() + CLOSE_WAIT_S
    while server.hub.connections and time.monotonic() < deadline:
        time.sleep(0.02)
    server.stop()

