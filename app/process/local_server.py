"""A Flask app served by werkzeug's threaded server on a thread of this process.

For the small servers that live beside something else in one process: ``pinchtab debug connect``
(whose agent is this process's terminal), the extension daemon (beside its Unix socket) and the
bridge's extension port (beside the bridge's browser). They speak HTTP/1.1 with keep-alive, so a
client that polls (the extension) reuses its connection instead of paying a connect and a thread
per request; ``quiet`` keeps successful requests out of the log (an extension polls all day).

``same_user_only`` closes, before reading a byte, every connection that another user of the machine
makes (see :mod:`app.access.peer_uid`): loopback keeps other machines out, not other users, and the servers
that hand out a person's browser commands must serve that person only.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Self

from flask import Flask
from werkzeug.serving import BaseWSGIServer, ThreadedWSGIServer, WSGIRequestHandler, make_server

from ..access.peer_uid import SameUserGate

log = logging.getLogger(__name__)


class _Handler(WSGIRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive: werkzeug's default is 1.0, a connection per request


class _QuietHandler(_Handler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if isinstance(code, int) and code >= 400:
            super().log_request(code, size)


class SameUserServer(ThreadedWSGIServer):
    """werkzeug's threaded server, admitting only connections of this process's user (and root).

    A refused connection is closed with no answer (socketserver's ``shutdown_request``) and nothing it
    sent is read: another user learns nothing, not even that an HTTP server listens. The check runs
    once per accepted connection, first thing on the connection's own thread (socketserver's
    ``verify_request`` would run it on the accepting thread: reading the kernel's socket table takes a
    few milliseconds on a machine with a large connection hash, and one user's connections must not
    hold up another's accept); a keep-alive connection would pay it once for all its requests.
    """

    def __init__(self, host: str, port: int, app: Flask, handler: type[WSGIRequestHandler], *,
                 gate: SameUserGate) -> None:
        super().__init__(host, port, app, handler)
        self.gate = gate

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            admitted = self.gate.admits(request, client_address)
        except Exception:   # a fault in the check neither lets the connection in nor leaves it open
            log.exception("%s: checking a connection's user failed; refused", self.gate.name)
            admitted = False
        if not admitted:
            self.shutdown_request(request)
            return
        super().process_request_thread(request, client_address)


class LocalServer:
    """``app`` on ``host:port`` (0: a free port), serving on a daemon thread from :meth:`start`.

    With ``same_user_only``, connections from other users of the machine are closed unanswered
    (:class:`SameUserServer`). Raises OSError when the port cannot be bound.
    """

    def __init__(self, app: Flask, host: str, port: int, *, name: str, quiet: bool = False,
                 same_user_only: bool = False) -> None:
        self.host = host
        self.same_user_only = same_user_only
        handler = _QuietHandler if quiet else _Handler
        self.server: BaseWSGIServer = (
            SameUserServer(host, port, app, handler, gate=SameUserGate(name)) if same_user_only
            else make_server(host, port, app, threaded=True, request_handler=handler))
        self.port: int = self.server.server_port
        self._thread = threading.Thread(target=self.server.serve_forever, name=name, daemon=True)

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()
