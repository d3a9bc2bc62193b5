"""Whether the client at the other end of a connection is still there, without blocking.

The bridge asks it while a request waits for a tab (``app.api.caller_gone``); the server asks it
while a forwarded request waits for its instance (``app.orchestrator.upstream``).
"""
from __future__ import annotations

import select
import socket

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
