"""Ports for instances: a range, the ones we reserved, and a test bind for everyone else's."""
from __future__ import annotations

import socket
import threading
from collections.abc import Callable

from .errors import PortUnavailable


def can_bind(port: int, host: str = "127.0.0.1") -> bool:
    """True when nothing listens on ``host:port`` now (a foreign server, or a bridge of ours)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        # SO_REUSEADDR as gunicorn sets it: a port in TIME_WAIT from a stopped bridge is usable.
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
        except OSError:
            return False
    return True


class PortAllocator:
    """Hands out ports in ``start..end``: never one we reserved, never one that fails a test bind.

    A rotating cursor spreads successive instances over the range, so a port a stopped instance
    just gave up is not handed straight to the next one (a client may still be talking to it).
    """

    def __init__(self, start: int, end: int, probe: Callable[[int], bool] = can_bind,
                 skip: frozenset[int] = frozenset()) -> None:
        self.start = start
        self.end = end
        self._probe = probe
        # The server's own port: free while the manager launches the default instance (gunicorn
        # binds it after its on_starting hook), so a test bind alone would hand it out.
        self._skip = skip
        self._reserved: set[int] = set()
        self._cursor = start
        self._lock = threading.Lock()

    def allocate(self) -> int:
        """Reserve and return a free port; raises :class:`PortUnavailable` when none is left."""
        with self._lock:
            size = self.end - self.start + 1
            for i in range(size):
                port = self.start + (self._cursor - self.start + i) % size
                if port in self._reserved or port in self._skip or not self._probe(port):
                    continue
                self._reserved.add(port)
                self._cursor = port + 1 if port < self.end else self.start
                return port
        raise PortUnavailable(f"no free port in multiInstance.instancePortStart..End ({self.start}-{self.end})",
                              code="no_free_port", status=503,
                              details={"setting": "multiInstance.instancePortStart"})

    def reserve(self, port: int) -> int:
        """Reserve a port the caller asked for; raises :class:`PortUnavailable` if it is taken."""
        if not 1024 <= port <= 65535:
            raise PortUnavailable(f"port {port} is outside 1024-65535", code="bad_port", status=400)
        with self._lock:
            if port in self._skip:
                raise PortUnavailable(f"port {port} is the server's own port", code="port_in_use",
                                      details={"field": "port"})
            if port in self._reserved:
                raise PortUnavailable(f"port {port} is used by another instance", code="port_in_use")
            if not self._probe(port):
                raise PortUnavailable(f"port {port} is in use by another process", code="port_in_use")
            self._reserved.add(port)
        return port

    def check(self, port: int) -> bool:
        """True when our reserved ``port`` is still free to bind (nobody else grabbed it meanwhile)."""
        return self._probe(port)

    def release(self, port: int) -> None:
        """Give a port back."""
        with self._lock:
            self._reserved.discard(port)

    def reserved(self) -> set[int]:
        """The ports we hold now."""
        with self._lock:
            return set(self._reserved)
