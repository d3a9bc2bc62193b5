"""The cap on long-lived connections: one class for every WebSocket and event stream.

A WebSocket or an event stream holds a request thread for as long as it lasts (gunicorn's gthread
worker has a fixed number of them), so each takes a place under a cap before it starts, and past
the cap the answer is 503 ``too_many_connections`` with Retry-After. The bridge and the server each
have one :class:`Limiter` of ``debug.maxConnections``, shared by their debug sockets, screencasts and
event streams; app sockets (a page joins with a session id alone) may hold only :func:`app_share`
of it, so a page opening sockets in a loop cannot lock out the agents and streams that would debug
it. At shutdown the limiter refuses new places and ends every open one (each :class:`Hold` says
how), so no connection holds up the worker's graceful stop.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from flask import current_app

from ..web.errors import Unavailable

log = logging.getLogger(__name__)

RETRY_AFTER_S = 5
KEY = "pinchtab.sockets.limiter"   # app.extensions: the app's shared limiter


def app_share(max_connections: int) -> int:
    """How many of ``max_connections`` app sockets may hold: a quarter (at least one) is kept for
    agents, event streams and screencasts. With a cap of 1 there is nothing to split: the one place
    is anyone's."""
    if max_connections < 2:
        return max_connections
    return max_connections - max(1, max_connections // 4)


def _nothing() -> None:
    return None


@dataclass(eq=False)
class Hold:
    """One connection's place under the cap. ``close`` ends the connection from another thread (the
    limiter's :meth:`Limiter.close_all`); give the place back with :meth:`release` (twice is fine)."""

    limiter: Limiter
    app: bool = False
    close: Callable[[], None] = field(default=_nothing)

    def on_close(self, close: Callable[[], None]) -> None:
        """How to end this connection at shutdown; at once when the shutdown has already begun (it
        came between the place being taken and the connection starting)."""
        self.close = close
        if self.limiter.closing:
            close()

    def release(self) -> None:
        self.limiter.release(self)


class Limiter:
    """At most ``max_connections`` places at once, an app's only within :func:`app_share`.

    ``what`` and ``code`` name the cap in the refusal (``debug.maxConnections`` for the shared one).
    """

    def __init__(self, max_connections: int, *, what: str = "long-lived connections (debug.maxConnections)",
                 code: str = "too_many_connections") -> None:
        self.max_connections = max_connections
        self.max_app_connections = app_share(max_connections)
        self.what = what
        self.code = code
        self.closing = False
        self._open: set[Hold] = set()
        self._apps = 0
        self._lock = threading.Lock()

    def acquire(self, *, app: bool = False) -> Hold:
        """A place (an app's within its share), or :class:`Unavailable` (503 with Retry-After)."""
        with self._lock:
            full = self.closing or len(self._open) >= self.max_connections
            apps_full = app and self._apps >= self.max_app_connections
            if not full and not apps_full:
                hold = Hold(self, app)
                self._open.add(hold)
                self._apps += app
                return hold
        if apps_full and not full:
            message = (f"too many app connections: apps may hold {self.max_app_connections} of "
                       f"debug.maxConnections ({self.max_connections}), the rest are kept for agents and event "
                       "streams; try again later")
        else:
            message = f"too many {self.what}; try again later"
        raise Unavailable(message, code=self.code, headers={"Retry-After": str(RETRY_AFTER_S)})

    def release(self, hold: Hold) -> None:
        with self._lock:
            if hold in self._open:
                self._open.discard(hold)
                self._apps -= hold.app

    @property
    def connections(self) -> int:
        return len(self._open)

    @property
    def app_connections(self) -> int:
        return self._apps

    def describe(self) -> dict[str, int]:
        """The counts ``GET /debug/sessions`` shows."""
        return {"connections": self.connections, "maxConnections": self.max_connections,
                "appConnections": self.app_connections, "maxAppConnections": self.max_app_connections}

    def close_all(self) -> None:
        """Shutdown: refuse new places and end every open connection."""
        with self._lock:
            self.closing = True
            holds = list(self._open)
        for hold in holds:
            try:
                hold.close()
            except Exception:  # one that cannot be closed must not keep the others open
                log.exception("closing a long-lived connection failed")


def install(app: Any, limiter: Limiter) -> Limiter:
    """Make ``limiter`` the cap every long-lived connection of ``app`` takes a place under."""
    app.extensions[KEY] = limiter
    return limiter


def current() -> Limiter:
    """The current app's limiter."""
    return current_app.extensions[KEY]
