"""A caller of the server who leaves takes its forwarded request with it.

The server's request thread waits on the instance for the answer's first byte; a client that drops
its connection meanwhile is noticed by nobody, so the bridge would run its work ahead of the next
caller's. One watcher thread looks at every waiting caller's socket ten times a second; when one
has gone, it shuts the upstream connection of that request,
which the bridge sees as its own caller leaving: the work is skipped, or stopped.

The upstream socket is learned from the connection urllib3 uses for the request
(:class:`WatchedConnection`), through a context variable set around ``urlopen``.
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import socket
import threading
from collections.abc import Iterator
from typing import Any

from urllib3.connection import HTTPConnection
from urllib3.connectionpool import HTTPConnectionPool

from ..web.connections import connection_closed

log = logging.getLogger(__name__)

POLL_S = 0.1


class Waiting:
    """One forwarded request whose caller is watched: the caller's socket and, once known, the
    socket of the connection to the instance."""

    def __init__(self, client: socket.socket) -> None:
        self.client = client
        self.upstream: socket.socket | None = None
        self.abandoned = False

    def cut(self) -> None:
        self.abandoned = True
        sock = self.upstream
        if sock is not None:
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


_current: contextvars.ContextVar[Waiting | None] = contextvars.ContextVar("pinchtab_forwarded", default=None)


class WatchedConnection(HTTPConnection):
    """urllib3's connection, telling the request being watched which socket carries it."""

    def request(self, *args: Any, **kwargs: Any) -> None:
        waiting = _current.get()
        if waiting is not None and self.sock is None:
            self.connect()   # now, so the socket is known before the request waits for its answer
        if waiting is not None:
            waiting.upstream = self.sock
        super().request(*args, **kwargs)


class WatchedPool(HTTPConnectionPool):
    ConnectionCls = WatchedConnection


class CallerWatch:
    """The watcher thread and the requests it watches."""

    def __init__(self) -> None:
        self._waiting: set[Waiting] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    @contextlib.contextmanager
    def watching(self, client: Any) -> Iterator[Waiting | None]:
        """Watch ``client`` (the caller's socket; anything else is not watched) for the block's time."""
        if not isinstance(client, socket.socket):
            yield None
            return
        waiting = Waiting(client)
        token = _current.set(waiting)
        with self._lock:
            idle = not self._waiting   # the watcher sleeps until there is something to watch
            self._waiting.add(waiting)
            if self._thread is None:
                self._thread = threading.Thread(target=self._watch_loop, name="caller-watch", daemon=True)
                self._thread.start()
        if idle:
            self._wake.set()
        try:
            yield waiting
        finally:
            _current.reset(token)
            with self._lock:
                self._waiting.discard(waiting)

    def _watch_loop(self) -> None:
        while True:
            with self._lock:
                waiting = list(self._waiting)
            if not waiting:
                self._wake.wait()
                self._wake.clear()
                continue
            for w in waiting:
                if not w.abandoned and connection_closed(w.client):
                    log.info("a caller left while its request waited on an instance; cutting it off")
                    w.cut()
            self._wake.wait(POLL_S)
            self._wake.clear()
