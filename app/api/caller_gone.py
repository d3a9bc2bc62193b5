"""Noticing that an HTTP client went away while its request waits for a tab.

Under gunicorn a request's thread blocks in ``Tab.run`` until the tab's worker answers; a client
that drops its connection meanwhile is noticed by nobody, and its work would still run, ahead of
the next caller's. Each request sets ``cdp.tab.caller_gone`` to a check of its own socket, which
``Tab.run`` asks while it waits: the job of a client that left is skipped (or stopped).
"""
from __future__ import annotations

import select
import socket
from typing import Any

from flask import Flask, g, request

from cdp.tab import caller_gone

# POLLRDHUP (Linux): the peer closed its side, told apart from bytes waiting (a pipelined request).
_RDHUP = getattr(select, "POLLRDHUP", 0)
_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL | _RDHUP


def connection_closed(sock: socket.socket) -> bool:
    """Whether the peer of ``sock`` has closed (or reset) the connection; never blocks."""
    try:
        fd = sock.fileno()
    except (OSError, ValueError):
        return True
    if fd < 0:
        return True
    poller = select.poll()
    poller.register(fd, select.POLLIN | _RDHUP)
    events = poller.poll(0)
    if not events:
        return False
    revents = events[0][1]
    if revents & _GONE:
        return True
    if _RDHUP:
        return False  # readable only: the client sent more (its next request), it is still there
    try:  # no POLLRDHUP here: readable with nothing to read is an end of file
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) == b""
    except (BlockingIOError, InterruptedError, ValueError):  # ValueError: TLS sockets take no flags
        return False
    except OSError:
        return True


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
