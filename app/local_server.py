"""A Flask app served by werkzeug's threaded server on a thread of this process.

For the small servers that live beside something else in one process: ``pinchtab debug connect``
(whose agent is this process's terminal), the extension daemon (beside its Unix socket) and the
bridge's extension port (beside the bridge's browser). They speak HTTP/1.1 with keep-alive, so a
client that polls (the extension) reuses its connection instead of paying a connect and a thread
per request; ``quiet`` keeps successful requests out of the log (an extension polls all day).
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Self

from flask import Flask
from werkzeug.serving import BaseWSGIServer, WSGIRequestHandler, make_server

log = logging.getLogger(__name__)


class _Handler(WSGIRequestHandler):
    protocol_version = "HTTP/1.1"   # keep-alive: werkzeug's default is 1.0, a connection per request


class _QuietHandler(_Handler):
    def log_request(self, code: int | str = "-", size: int | str = "-") -> None:
        if isinstance(code, int) and code >= 400:
            super().log_request(code, size)


class LocalServer:
    """``app`` on ``host:port`` (0: a free port), serving on a daemon thread from :meth:`start`.

    Raises OSError when the port cannot be bound.
    """

    def __init__(self, app: Flask, host: str, port: int, *, name: str, quiet: bool = False) -> None:
        self.host = host
        self.server: BaseWSGIServer = make_server(host, port, app, threaded=True,
                                                  request_handler=_QuietHandler if quiet else _Handler)
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
