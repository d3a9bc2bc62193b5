"""Agent sessions: a revocable token that stands for one agent (``Authorization: Session <token>``).

The server hands a session to an agent instead of its own bearer token: the holder acts as that
agent only (its current tab, its activity lines) and loses access the moment the session is
revoked, goes idle too long, or reaches its maximum age (``sessions.agent.idleTimeoutSec`` and
``maxLifetimeSec``). The tokens are kept as ``app.access.tokens`` keeps every token we hand out:
hashed, shown once, when the session is made.

The table is kept in a file of the state dir (mode 0600, written atomically), so a restart of the
server does not cut off the agents it handed sessions to. A use moves a session's idle clock in
memory at once and on disk at most once a minute: a restart forgets under a minute of idleness.
"""
from __future__ import annotations

import json
import logging
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from profiles.times import utc_iso

from ..web.errors import StorageError
from ..web.files import write_atomic
from .tokens import Held, TokenStore, new_token

log = logging.getLogger(__name__)

MAX_SESSIONS = 1000
TOKEN_PREFIX = "pts_"
SEEN_SAVE_S = 60.0  # how stale the idle clock on disk may get


@dataclass(kw_only=True)
class AgentSession(Held):
    """One session: its id (public), its agent, and (``Held``) its token's hash and when it lapses."""

    id: str
    agent_id: str
    label: str

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


class AgentSessions:
    """The server's agent sessions; thread-safe. With ``path``, kept in that file across restarts."""

    def __init__(self, *, idle_s: float, max_age_s: float, path: Path | None = None,
                 clock: Any = time.time) -> None:
        """The limits are ``sessions.agent``'s (idleTimeoutSec, maxLifetimeSec)."""
        self._path = path
        self.idle_s, self.max_age_s = idle_s, max_age_s
        self._tokens: TokenStore[AgentSession] = TokenStore(
            limit=MAX_SESSIONS, kind="sessions", clock=clock, persist=self._save if path is not None else None,
            seen_save_s=SEEN_SAVE_S)
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
        now = self._tokens.now()
        # A session keeps the limits it was made with, but never outlives what the config allows now.
        self._tokens.restore([s for s in sessions if now - s.created < self.max_age_s and s.idle_s <= self.idle_s])

    def _save(self, sessions: list[AgentSession]) -> bool:
        """Write the table (the store calls it under its lock). A failed write is logged: the
        sessions still work in memory."""
        assert self._path is not None
        data = json.dumps({"version": 1, "sessions": [s.stored() for s in sessions]}).encode()
        try:
            write_atomic(self._path, data, what="the agent sessions file")
        except StorageError as exc:
            log.warning("agent sessions: %s", exc)
            return False
        return True

    def create(self, agent_id: str, label: str = "", ttl_s: float | None = None,
               idle_s: float | None = None) -> tuple[AgentSession, str]:
        """A new session for ``agent_id``: (session, token). Raises ``TokenLimit`` past MAX_SESSIONS."""
        token, digest = new_token(TOKEN_PREFIX)
        now = self._tokens.now()
        session = AgentSession(id="ses_" + secrets.token_hex(6), agent_id=agent_id, label=label,
                               digest=digest, created=now, last_seen=now,
                               expires=now + min(ttl_s or self.max_age_s, self.max_age_s),
                               idle_s=min(idle_s or self.idle_s, self.idle_s))
        return self._tokens.add(session), token

    def resolve(self, token: str) -> str | None:
        """The agent of a live session's token (and the session is touched), else None."""
        session = self.lookup(token)
        return session.agent_id if session is not None else None

    def lookup(self, token: str) -> AgentSession | None:
        """The live session of a token (touched), else None."""
        return self._tokens.lookup(token) if token.startswith(TOKEN_PREFIX) else None

    def list(self) -> list[AgentSession]:
        """Live sessions, oldest first."""
        return self._tokens.live()

    def get(self, session_id: str) -> AgentSession | None:
        return self._tokens.find(lambda s: s.id == session_id)

    def revoke(self, session_id: str) -> bool:
        """End a session now; False when there was none."""
        return self._tokens.remove(lambda s: s.id == session_id)
