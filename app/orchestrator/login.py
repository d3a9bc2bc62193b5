"""Dashboard logins: the token typed once, then a cookie for the browser that typed it.

The cookie holds a random login id, never the token; the table keeps only its hash. Each login
carries a CSRF value (sent back in the login answer) and an elevation time: changes that matter
most (agent sessions, a shutdown, the config's security keys, every config change with
``sessions.dashboard.requireElevation``) need the token typed again (``POST /api/auth/elevate``)
within the last minutes when they come from a cookie. As in the original, logging in does not
elevate: a cookie left in an unattended browser cannot make those changes on its own. Failed logins
are rate-limited per client address, in the same count as wrong bearer tokens (``app.access.ratelimit``):
both guess the one token.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from ..access.ratelimit import FAILURE_WINDOW_S, FAILURES_PER_WINDOW, FailureLimiter

__all__ = ["FAILURES_PER_WINDOW", "FAILURE_WINDOW_S", "Login", "LoginStore"]

MAX_LOGINS = 200


def _digest(value: str) -> bytes:
    return hashlib.sha256(value.encode()).digest()


@dataclass
class Login:
    """One browser's login."""

    digest: bytes
    csrf: str
    created: float
    last_seen: float
    elevated_until: float = 0.0

    def elevated(self, now: float) -> bool:
        return now < self.elevated_until


class LoginStore:
    """Live dashboard logins and the failed-attempt counters; thread-safe."""

    def __init__(self, *, idle_s: float, max_age_s: float, elevation_s: float, clock: Any = time.time,
                 limiter: FailureLimiter | None = None) -> None:
        """The limits are ``sessions.dashboard``'s (idleTimeoutSec, maxLifetimeSec, elevationWindowSec);
        failed attempts go to ``limiter`` (the app's count of wrong tokens; else one of its own)."""
        self._clock = clock
        self.idle_s, self.max_age_s, self.elevation_s = idle_s, max_age_s, elevation_s
        self._logins: dict[bytes, Login] = {}
        self.limiter = limiter or FailureLimiter(clock=clock)
        self._lock = threading.Lock()

    def create(self) -> tuple[str, Login]:
        """A new login, not elevated: (cookie value, login)."""
        cookie = secrets.token_urlsafe(32)
        now = self._clock()
        login = Login(digest=_digest(cookie), csrf=secrets.token_urlsafe(24), created=now, last_seen=now)
        with self._lock:
            self._sweep(now)
            if len(self._logins) >= MAX_LOGINS:  # the oldest browser signs in again
                oldest = min(self._logins.values(), key=lambda x: x.last_seen)
                del self._logins[oldest.digest]
            self._logins[login.digest] = login
        return cookie, login

    def resolve(self, cookie: str) -> Login | None:
        """The live login of a cookie (touched), else None."""
        now = self._clock()
        digest = _digest(cookie)
        with self._lock:
            login = self._logins.get(digest)
            if login is None or not hmac.compare_digest(login.digest, digest):
                return None
            if self._lapsed(login, now):
                del self._logins[digest]
                return None
            login.last_seen = now
            return login

    def revoke(self, cookie: str) -> None:
        with self._lock:
            self._logins.pop(_digest(cookie), None)

    def is_elevated(self, login: Login) -> bool:
        """Whether the token was typed for this login within the elevation window."""
        return login.elevated(self._clock())

    def elevate(self, login: Login) -> float:
        """Mark the login as having typed the token just now; the wall-clock end of the elevation."""
        login.elevated_until = self._clock() + self.elevation_s
        return login.elevated_until

    def allow_attempt(self, client: str) -> bool:
        """False while ``client`` has failed too often in the last window."""
        return self.limiter.allow(client)

    def failed(self, client: str) -> None:
        self.limiter.failed(client)

    def _lapsed(self, login: Login, now: float) -> bool:
        return now - login.last_seen >= self.idle_s or now - login.created >= self.max_age_s

    def _sweep(self, now: float) -> None:
        for digest in [d for d, x in self._logins.items() if self._lapsed(x, now)]:
            del self._logins[digest]
