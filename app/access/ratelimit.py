"""Failed-attempt limits per client: at most ``max_failures`` wrong tokens in a sliding window.

One limiter per app counts every wrong guess at the token, whichever door it was tried at (a
bearer header, the dashboard's login, its elevation): they guess the same secret. A client past
the limit is refused until its oldest failure leaves the window, even with the right token, or
the limit would not slow guessing down; other clients are not affected.

Clients are keyed by the address :mod:`app.access.forwarded` finds. An IPv6 client is counted by its /64,
the block one host usually holds, so walking through the addresses of one block is not a fresh
allowance each time.
"""
from __future__ import annotations

import collections
import ipaddress
import math
import threading
import time
from collections.abc import Callable

FAILURES_PER_WINDOW = 10
FAILURE_WINDOW_S = 60.0
MAX_CLIENTS = 10_000   # counters kept at most; a flood of addresses only resets them


def bucket(client: str) -> str:
    """The key a client is counted under: its address, or the /64 of an IPv6 address."""
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return client
    if address.version == 6:
        return str(ipaddress.IPv6Network(f"{address}/64", strict=False))
    return str(address)


class FailureLimiter:
    """Failed attempts per client in a sliding window; thread-safe."""

    def __init__(self, max_failures: int = FAILURES_PER_WINDOW, window_s: float = FAILURE_WINDOW_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.max_failures, self.window_s = max_failures, window_s
        self._clock = clock
        self._failures: dict[str, collections.deque[float]] = {}
        self._lock = threading.Lock()

    def retry_after(self, client: str) -> float:
        """0 while ``client`` may try; else the seconds until its oldest failure leaves the window."""
        key = bucket(client)
        now = self._clock()
        with self._lock:
            fails = self._failures.get(key)
            if fails is None:
                return 0.0
            while fails and now - fails[0] >= self.window_s:
                fails.popleft()
            if not fails:
                del self._failures[key]
                return 0.0
            if len(fails) < self.max_failures:
                return 0.0
            return max(self.window_s - (now - fails[0]), 0.001)

    def allow(self, client: str) -> bool:
        """False while ``client`` has failed too often in the last window."""
        return self.retry_after(client) == 0.0

    def failed(self, client: str) -> None:
        """Count one failed attempt of ``client``."""
        key = bucket(client)
        with self._lock:
            if key not in self._failures and len(self._failures) >= MAX_CLIENTS:
                self._failures.clear()
            self._failures.setdefault(key, collections.deque(maxlen=self.max_failures)).append(self._clock())

    def retry_after_header(self, client: str) -> str:
        """``Retry-After``'s value (whole seconds, at least 1) for a refused ``client``."""
        return str(max(1, math.ceil(self.retry_after(client))))
