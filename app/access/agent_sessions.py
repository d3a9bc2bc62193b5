"""Agent sessions: a revocable token that stands for one agent (``Authorization: Session <token>``).

The server hands a session to an agent instead of its own bearer token: the holder acts as that
agent only (its current tab, its activity lines) and loses access the moment the session is
revoked, goes idle too long, or reaches its maximum age (``sessions.agent.idleTimeoutSec`` and
``maxLifetimeSec``). Only a hash of each token is kept, so the table leaks nothing usable; a token
is shown once, when the session is made.

The table is kept in a file of the state dir (mode 0600, written atomically), so a restart of the
server does not cut off the agents it handed sessions to. A use moves a session's idle clock in
memory at once and on disk at most once a minute: a restart forgets under a minute of idleness.
"""
from __future__ import annotations

import hashlib
import hmac
import json
import logging
import secrets
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiles.times import utc_iso

from ..web.errors import StorageError
from ..web.files import write_atomic

log = logging.getLogger(__name__)

MAX_SESSIONS = 1000
TOKEN_PREFIX = "pts_"
SEEN_SAVE_S = 60.0  # how stale the idle clock on disk may get


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

    def stored(self) -> dict[str, Any]:
        """The session as its file keeps it: the token's hash, never the token."""
        return {"id": self.id, "agentId": self.agent_id, "label": self.label, "digest": self.digest.hex(),
                "created": self.created, "lastSeen": self.last_seen, "expires": self.expires, "idle": self.idle_s}

    @classmethod
    def from_stored(cls, d: dict[str, Any]) -> AgentSession:
        return cls(id=str(d["id"]), agent_id=str(d["agentId"]), label=str(d.get("label", "")),
                   digest=bytes.fromhex(d["digest"]), created=float(d["created"]), last_seen=float(d["lastSeen"]),
                   expires=float(d["expires"]), idle_s=float(d["idle"]))

    def record(self) -> dict[str, Any]:
        """The session as the API shows it; never its token. Only live sessions are kept, so the
        original's ``status`` is always ``active`` (a revoked or lapsed one is gone)."""
        return {"id": self.id, "agentId": self.agent_id, "label": self.label, "status": "active",
                "createdAt": utc_iso(self.created), "lastSeenAt": utc_iso(self.last_seen),
                "expiresAt": utc_iso(self.expires), "idleTimeoutSec": int(self.idle_s)}


class SessionLimit(Exception):
    """Too many live sessions."""


class AgentSessions:
    """The server's agent sessions; thread-safe. With ``path``, kept in that file across restarts."""

    def __init__(self, *, idle_s: float, max_age_s: float, path: Path | None = None,
                 clock: Any = time.time) -> None:
        """The limits are ``sessions.agent``'s (idleTimeoutSec, maxLifetimeSec)."""
        self._clock = clock
        self._path = path
        self.idle_s, self.max_age_s = idle_s, max_age_s
        self._by_id: dict[str, AgentSession] = {}
        self._lock = threading.Lock()
        self._saved_at = 0.0
        if path is not None:
            self._load(path)

    def _load(self, path: Path) -> None:
        """The sessions a previous run kept, less those that lapsed meanwhile. A file we cannot read
        is set aside (its sessions are lost, which only revokes them) rather than stop the server."""
        try:
            raw = json.loads(path.read_text())
            sessions = [AgentSession.from_stored(d) for d in raw["sessions"]]
        except FileNotFoundError:
            return
        except (OSError, ValueError, KeyError, TypeError) as exc:
            log.warning("agent sessions: %s unreadable (%s); starting with none", path.name, exc)
            try:
                path.replace(path.with_name(path.name + ".bad"))
            except OSError:
                pass
            return
        now = self._clock()
        # A session keeps the limits it was made with, but never outlives what the config allows now.
        self._by_id = {s.id: s for s in sessions
                       if not s.expired(now) and now - s.created < self.max_age_s and s.idle_s <= self.idle_s}

    def _save(self) -> None:
        """Write the table (under the lock). A failed write is logged: the sessions still work in memory."""
        if self._path is None:
            return
        data = json.dumps({"version": 1, "sessions": [s.stored() for s in self._by_id.values()]}).encode()
        try:
            write_atomic(self._path, data, what="the agent sessions file")
            self._saved_at = self._clock()
        except StorageError as exc:
            log.warning("agent sessions: %s", exc)

    def create(self, agent_id: str, label: str = "", ttl_s: float | None = None,
               idle_s: float | None = None) -> tuple[AgentSession, str]:
        """A new session for ``agent_id``: (session, token). Raises SessionLimit past MAX_SESSIONS."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = self._clock()
        session = AgentSession(id="ses_" + secrets.token_hex(6), agent_id=agent_id, label=label,
                               digest=_digest(token), created=now, last_seen=now,
                               expires=now + min(ttl_s or self.max_age_s, self.max_age_s),
                               idle_s=min(idle_s or self.idle_s, self.idle_s))
        with self._lock:
            self._sweep(now)
            if len(self._by_id) >= MAX_SESSIONS:
                raise SessionLimit(f"at most {MAX_SESSIONS} live sessions")
            self._by_id[session.id] = session
            self._save()
        return session, token

    def resolve(self, token: str) -> str | None:
        """The agent of a live session's token (and the session is touched), else None."""
        session = self.lookup(token)
        return session.agent_id if session is not None else None

    def lookup(self, token: str) -> AgentSession | None:
        """The live session of a token (touched), else None; hashes are compared in constant time."""
        if not token.startswith(TOKEN_PREFIX):
            return None
        digest = _digest(token)
        now = self._clock()
        with self._lock:
            for session in self._by_id.values():
                if hmac.compare_digest(session.digest, digest):
                    if session.expired(now):
                        del self._by_id[session.id]
                        self._save()
                        return None
                    session.last_seen = now
                    if now - self._saved_at >= SEEN_SAVE_S:
                        self._save()
                    return session
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
            gone = self._by_id.pop(session_id, None) is not None
            if gone:
                self._save()
            return gone

    def _sweep(self, now: float) -> None:
        lapsed = [sid for sid, s in self._by_id.items() if s.expired(now)]
        for sid in lapsed:
            del self._by_id[sid]
        if lapsed:
            self._save()
