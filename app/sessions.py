"""Agent sessions: a revocable token that stands for one agent (``Authorization: Session <token>``).

The server hands a session to an agent instead of its own bearer token: the holder acts as that
agent only (its current tab, its activity lines) and loses access the moment the session is
revoked, goes idle too long, or reaches its maximum age. Only a hash of each token is kept, so the
table leaks nothing usable; a token is shown once, when the session is made.

In memory: a server restart revokes every session, the safe default for a credential.
"""
from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from dataclasses import dataclass
from typing import Any

from profiles.times import utc_iso

IDLE_S = 30 * 60.0  # the original's agent-session defaults: 30 min idle, 24 h at most
MAX_AGE_S = 24 * 3600.0
MAX_SESSIONS = 1000
TOKEN_PREFIX = "pts_"


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass
class AgentSession:
    """One session: its id (public), its agent, and when it lapses."""

    id: str
    agent_id: str
    label: str
    digest: bytes
    created: float
    last_seen: float
    expires: float  # wall-clock time of the maximum age
    idle_s: float

    def expired(self, now: float) -> bool:
        return now >= self.expires or now - self.last_seen >= self.idle_s

    def record(self) -> dict[str, Any]:
        """The session as the API shows it; never its token."""
        return {"id": self.id, "agentId": self.agent_id, "label": self.label, "createdAt": utc_iso(self.created),
                "lastSeenAt": utc_iso(self.last_seen), "expiresAt": utc_iso(self.expires),
                "idleTimeoutSec": int(self.idle_s)}


class SessionLimit(Exception):
    """Too many live sessions."""


class AgentSessions:
    """The server's agent sessions; thread-safe."""

    def __init__(self, clock: Any = time.time) -> None:
        self._clock = clock
        self._by_id: dict[str, AgentSession] = {}
        self._lock = threading.Lock()

    def create(self, agent_id: str, label: str = "", ttl_s: float | None = None,
               idle_s: float | None = None) -> tuple[AgentSession, str]:
        """A new session for ``agent_id``: (session, token). Raises SessionLimit past MAX_SESSIONS."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = self._clock()
        session = AgentSession(id="ses_" + secrets.token_hex(6), agent_id=agent_id, label=label,
                               digest=_digest(token), created=now, last_seen=now,
                               expires=now + min(ttl_s or MAX_AGE_S, MAX_AGE_S),
                               idle_s=min(idle_s or IDLE_S, IDLE_S))
        with self._lock:
            self._sweep(now)
            if len(self._by_id) >= MAX_SESSIONS:
                raise SessionLimit(f"at most {MAX_SESSIONS} live sessions")
            self._by_id[session.id] = session
        return session, token

    def resolve(self, token: str) -> str | None:
        """The agent of a live session's token (and the session is touched), else None."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        digest = _digest(token)
        now = self._clock()
        with self._lock:
            for session in self._by_id.values():
                if hmac.compare_digest(session.digest, digest):
                    if session.expired(now):
                        del self._by_id[session.id]
                        return None
                    session.last_seen = now
                    return session.agent_id
        return None

    def list(self) -> list[AgentSession]:
        """Live sessions, oldest first."""
        with self._lock:
            self._sweep(self._clock())
            return sorted(self._by_id.values(), key=lambda s: s.created)

    def get(self, session_id: str) -> AgentSession | None:
        with self._lock:
            self._sweep(self._clock())
            return self._by_id.get(session_id)

    def revoke(self, session_id: str) -> bool:
        """End a session now; False when there was none."""
        with self._lock:
            return self._by_id.pop(session_id, None) is not None

    def _sweep(self, now: float) -> None:
        for sid in [sid for sid, s in self._by_id.items() if s.expired(now)]:
            del self._by_id[sid]
