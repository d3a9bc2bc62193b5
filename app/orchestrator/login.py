"""Dashboard logins: the token typed once, then a cookie for the browser that typed it.

The cookie holds a random login id, never the token; the table keeps only its hash (kept as every
token we hand out is, ``app.access.tokens``: it lapses idle or old, and the oldest goes past MAX_LOGINS). Each login
carries a CSRF value (sent back in the login answer) and an elevation time: changes that matter
most (agent sessions, a shutdown, the config's security keys, every config change with
``sessions.dashboard.requireElevation``) need the token typed again (``POST /api/auth/elevate``)
within the last minutes when they come from a cookie. As in the original, logging in does not
elevate: a cookie left in an unattended browser cannot make those changes on its own. Failed logins
are rate-limited per client address, in the same count as wrong bearer tokens (``app.access.ratelimit``):
both guess the one token.
"""
from __future__ import annotations

import secrets
import time
from dataclasses import dataclass
from typing import Any

from ..access.ratelimit import FAILURE_WINDOW_S, FAILURES_PER_WINDOW, FailureLimiter
from ..access.tokens import Held, TokenStore, new_token

__all__ = ["FAILURES_PER_WINDOW", "FAILURE_WINDOW_S", "Login", "LoginStore"]

MAX_LOGINS = 200


@dataclass(kw_only=True)
class Login(Held):
    """One browser's login: (``Held``) its cookie's hash and when it lapses, its CSRF value and
    until when its token was typed again."""

    csrf: str
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
        # Past the limit the least recently used login goes: that browser signs in again.
        self._logins: TokenStore[Login] = TokenStore(limit=MAX_LOGINS, kind="logins", evict_oldest=True, clock=clock)
        self.limiter = limiter or FailureLimiter(clock=clock)

    def create(self) -> tuple[str, Login]:
        """A new login, not elevated: (cookie value, login)."""
        cookie, digest = new_token()
        now = self._clock()
        login = Login(digest=digest, csrf=secrets.token_urlsafe(24), created=now, last_seen=now,
                      expires=now + self.max_age_s, idle_s=self.idle_s)
        return cookie, self._logins.add(login)

    def resolve(self, cookie: str) -> Login | None:
        """The live login of a cookie (touched), else None."""
        return self._logins.lookup(cookie)

    def revoke(self, cookie: str) -> None:
        self._logins.revoke(cookie)

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
