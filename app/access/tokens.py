"""Tokens we hand out and take back: agent sessions (``app.access.agent_sessions``) and the
dashboard's logins (``app.orchestrator.login``) are both kept here.

A token is random and shown once; only its hash is kept, so the table leaks nothing usable, and
a presented token is found by its hash, compared in constant time. Each one lapses when it has
gone unused too long (its idle limit) or reached its maximum age, and can be revoked at once. The
count is bounded: past it a new one is refused, or (``evict_oldest``) the least recently used is
dropped, as a browser that signs in again costs nothing.

A store with ``persist`` hands it the live tokens after every change, and after a use at most
once every ``seen_save_s``: a restart then forgets at most that much idleness.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar


def digest(token: str) -> bytes:
    """What is kept of a token: its SHA-256."""
    return hashlib.sha256(token.encode()).digest()


def new_token(prefix: str = "") -> tuple[str, bytes]:
    """A fresh token and its digest."""
    token = prefix + secrets.token_urlsafe(32)
    return token, digest(token)


@dataclass
class Held:
    """What every kept token has: its hash, its clock, and its limits."""

    digest: bytes
    created: float
    last_seen: float
    expires: float  # wall-clock time of the maximum age
    idle_s: float

    def lapsed(self, now: float) -> bool:
        return now >= self.expires or now - self.last_seen >= self.idle_s


class TokenLimit(Exception):
    """Too many live tokens."""


H = TypeVar("H", bound=Held)


class TokenStore(Generic[H]):
    """Live tokens by their hash; thread-safe."""

    def __init__(self, *, limit: int, kind: str = "tokens", evict_oldest: bool = False,
                 clock: Callable[[], float] = time.time, persist: Callable[[list[H]], bool] | None = None,
                 seen_save_s: float = 60.0) -> None:
        """At most ``limit`` live ``kind`` (named so in the refusal); ``persist``, when given, writes
        the live entries out and says whether it did."""
        self.limit, self.kind, self.evict_oldest = limit, kind, evict_oldest
        self._clock = clock
        self._persist = persist
        self._seen_save_s = seen_save_s
        self._held: dict[bytes, H] = {}
        self._lock = threading.Lock()
        self._saved_at = 0.0

    def now(self) -> float:
        return self._clock()

    def restore(self, held: list[H]) -> None:
        """Take back tokens a previous run kept (those still live), without writing them out again."""
        now = self._clock()
        with self._lock:
            self._held = {h.digest: h for h in held if not h.lapsed(now)}

    def add(self, held: H) -> H:
        """Keep a new token. Past ``limit``: TokenLimit, or the least recently used one goes."""
        with self._lock:
            self._sweep(self._clock())
            if len(self._held) >= self.limit:
                if not self.evict_oldest:
                    raise TokenLimit(f"at most {self.limit} live {self.kind}")
                oldest = min(self._held.values(), key=lambda h: h.last_seen)
                del self._held[oldest.digest]
            self._held[held.digest] = held
            self._changed()
        return held

    def lookup(self, token: str) -> H | None:
        """The live entry of a token (its idle clock moved on), else None."""
        wanted = digest(token)
        now = self._clock()
        with self._lock:
            held = self._held.get(wanted)
            if held is None or not hmac.compare_digest(held.digest, wanted):
                return None
            if held.lapsed(now):
                del self._held[wanted]
                self._changed()
                return None
            held.last_seen = now
            if self._persist is not None and now - self._saved_at >= self._seen_save_s:
                self._changed()
            return held

    def live(self) -> list[H]:
        """Every live entry, oldest first."""
        with self._lock:
            self._sweep(self._clock())
            return sorted(self._held.values(), key=lambda h: h.created)

    def find(self, match: Callable[[H], bool]) -> H | None:
        """The live entry ``match`` accepts, if any."""
        return next((h for h in self.live() if match(h)), None)

    def revoke(self, token: str) -> bool:
        """Forget a token now; False when it was not kept."""
        return self.remove(lambda h: h.digest == digest(token))

    def remove(self, match: Callable[[H], bool]) -> bool:
        """Forget the entries ``match`` accepts; False when there was none."""
        with self._lock:
            gone = [d for d, h in self._held.items() if match(h)]
            for d in gone:
                del self._held[d]
            if gone:
                self._changed()
            return bool(gone)

    def _sweep(self, now: float) -> None:
        lapsed = [d for d, h in self._held.items() if h.lapsed(now)]
        for d in lapsed:
            del self._held[d]
        if lapsed:
            self._changed()

    def _changed(self) -> None:
        """Hand the live entries to ``persist`` (under the lock, so writes keep their order); it says
        whether they were written (a failed write is tried again at the next use)."""
        if self._persist is not None and self._persist(list(self._held.values())):
            self._saved_at = self._clock()

