"""Noticing that an HTTP client went away while its request waits for a tab.

Under gunicorn a request's thread blocks in ``Tab.run`` until the tab's worker answers; a client
that drops its connection meanwhile is noticed by nobody, and its work would still run, ahead of
the next caller's. Each request sets ``cdp.tab_worker.caller_gone`` to a check of its own socket, which
``Tab.run`` asks while it waits: the job of a client that left is skipped (or stopped).
"""
from __future__ import annotations

import socket
from typing import Any

from flask import Flask, g, request

from cdp.tab_worker import caller_gone

from ..web.connections import connection_closed


def register(app: Flask) -> None:
    """Give every request of ``app`` served over a real socket a ``caller_gone`` check."""

    @app.before_request
    def watch_client() -> None:
        sock: Any = request.environ.get("gunicorn.socket")
        if isinstance(sock, socket.socket):
            g.caller_gone_token = caller_gone.set(lambda: connection_closed(sock))

    @app.teardown_request
    def unwatch_client(_exc: BaseException | None) -> None:
        token = g.pop("caller_gone_token", None)
        if token is not None:
            caller_gone.reset(token)
