"""Who may act on a tab: leases (``POST /lock``) and a person's takeover (``POST /tabs/{id}/handoff``).

Several agents, and people, share one browser. A lease gives one owner the tab's actions for a
while; a handoff pauses every agent's actions on a tab until someone resumes it. Both are plain
bookkeeping with a clock (no browser, no HTTP), so the rules are testable alone; the views raise
the answers built here.
"""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..web.errors import APIError, Conflict

DEFAULT_LEASE_S = 600.0


def iso(ts: float) -> str:
    """A wall-clock time as ISO 8601 UTC with milliseconds."""
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int((ts % 1) * 1000):03d}Z"


class TabLocked(APIError):
    """Another owner holds the tab's lease: 423 for actions, 409 for a second lock."""

    status = 423
    code = "tab_locked"


@dataclass
class Lease:
    owner: str
    expires_at: float  # wall clock

    def to_dict(self) -> dict[str, Any]:
        return {"owner": self.owner, "lockedUntil": iso(self.expires_at)}


@dataclass
class Handoff:
    reason: str
    paused_at: float
    expires_at: float | None = None  # the handoff ends by itself then (timeoutMs), else on resume

    def to_dict(self) -> dict[str, Any]:
        # reason: the original's name for it in the handoff's own state; handoffReason: in GET /tabs.
        out: dict[str, Any] = {"status": "paused_handoff", "reason": self.reason, "handoffReason": self.reason,
                               "pausedAt": iso(self.paused_at)}
        if self.expires_at is not None:
            out["expiresAt"] = iso(self.expires_at)
        return out


@dataclass
class Resolution:
    """How the last handoff of a tab ended: what the person (or the timeout) left for the agent."""

    status: str
    resolved_data: Any = None
    resumed_at: float = field(default_factory=time.time)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "resolvedData": self.resolved_data, "resumedAt": iso(self.resumed_at)}


class TabGuards:
    """The leases and handoffs of one browser's tabs, thread-safe; expired ones are dropped lazily."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._lock = threading.Lock()
        self._leases: dict[str, Lease] = {}
        self._handoffs: dict[str, Handoff] = {}
        self._resolutions: dict[str, Resolution] = {}

    # --- leases ----------------------------------------------------------------------------------
    def lease(self, tab_id: str) -> Lease | None:
        """The tab's live lease, if any."""
        with self._lock:
            return self._live_lease(tab_id)

    def _live_lease(self, tab_id: str) -> Lease | None:
        lease = self._leases.get(tab_id)
        if lease is not None and lease.expires_at <= self._clock():
            del self._leases[tab_id]
            return None
        return lease

    def lock(self, tab_id: str, owner: str, timeout_s: float = DEFAULT_LEASE_S) -> Lease:
        """Take (or, for its owner, extend) the tab's lease; 409 ``tab_locked`` while another holds it."""
        with self._lock:
            held = self._live_lease(tab_id)
            if held is not None and held.owner != owner:
                raise TabLocked(f"tab {tab_id} is locked by {held.owner!r} until {iso(held.expires_at)}",
                                status=409, details={"tabId": tab_id, **held.to_dict()})
            lease = self._leases[tab_id] = Lease(owner, self._clock() + timeout_s)
            return lease

    def unlock(self, tab_id: str, owner: str) -> bool:
        """Release the owner's lease (True), or nothing to release (False); 409 when another holds it."""
        with self._lock:
            held = self._live_lease(tab_id)
            if held is None:
                return False
            if held.owner != owner:
                raise TabLocked(f"tab {tab_id} is locked by {held.owner!r}, not {owner!r}", status=409,
                                details={"tabId": tab_id, **held.to_dict()})
            del self._leases[tab_id]
            return True

    def check_owner(self, tab_id: str, owner: str | None) -> None:
        """423 ``tab_locked`` unless the tab is unleased or ``owner`` holds its lease."""
        held = self.lease(tab_id)
        if held is not None and held.owner != owner:
            who = (f"owner {owner!r} does not hold it" if owner
                   else "send the owner (X-Owner header, owner field or ?owner=)")
            raise TabLocked(f"tab {tab_id} is locked by another owner until {iso(held.expires_at)}: {who}",
                            details={"tabId": tab_id, "lockedUntil": iso(held.expires_at)})

    # --- handoffs --------------------------------------------------------------------------------
    def handoff(self, tab_id: str) -> Handoff | None:
        """The tab's live handoff, if any (one past its timeout has ended by itself)."""
        with self._lock:
            return self._live_handoff(tab_id)

    def _live_handoff(self, tab_id: str) -> Handoff | None:
        h = self._handoffs.get(tab_id)
        if h is not None and h.expires_at is not None and h.expires_at <= self._clock():
            del self._handoffs[tab_id]
            self._resolutions[tab_id] = Resolution("timeout", None, h.expires_at)
            return None
        return h

    def pause(self, tab_id: str, reason: str, timeout_s: float | None = None) -> Handoff:
        """Hand the tab to a person: agents' actions answer 409 until resumed (or ``timeout_s`` passes)."""
        now = self._clock()
        with self._lock:
            h = self._handoffs[tab_id] = Handoff(reason, now, now + timeout_s if timeout_s else None)
            self._resolutions.pop(tab_id, None)
            return h

    def resume(self, tab_id: str, status: str, resolved_data: Any = None) -> Resolution:
        """End the tab's handoff with what the person reports; 409 ``tab_not_paused`` when none is on."""
        with self._lock:
            if self._live_handoff(tab_id) is None:
                raise Conflict(f"tab {tab_id} is not paused for a handoff", code="tab_not_paused")
            del self._handoffs[tab_id]
            res = self._resolutions[tab_id] = Resolution(status, resolved_data, self._clock())
            return res

    def handoff_state(self, tab_id: str) -> dict[str, Any]:
        """``GET /tabs/{id}/handoff``: paused (with why and since when) or active (with the last resolution)."""
        with self._lock:
            h = self._live_handoff(tab_id)
            if h is not None:
                return {"tabId": tab_id, **h.to_dict()}
            out: dict[str, Any] = {"tabId": tab_id, "status": "active"}
            res = self._resolutions.get(tab_id)
            if res is not None:
                out["lastResolution"] = res.to_dict()
            return out

    def check_not_paused(self, tab_id: str) -> None:
        """409 ``tab_paused_handoff`` while a person has the tab."""
        h = self.handoff(tab_id)
        if h is not None:
            # "paused for human handoff": the original's words, which its clients look for.
            raise Conflict(f"tab {tab_id} is paused for human handoff ({h.reason or 'no reason given'}); "
                           f"POST /tabs/{tab_id}/resume when done", code="tab_paused_handoff",
                           details={"tabId": tab_id, **h.to_dict()})

    # --- both --------------------------------------------------------------------------------------
    def describe(self, tab_id: str) -> dict[str, Any]:
        """What ``GET /tabs`` shows of a tab: its status, and its lease when held."""
        out: dict[str, Any] = {"status": "active"}
        h = self.handoff(tab_id)
        if h is not None:
            out.update({"status": "paused_handoff", "handoffReason": h.reason, "pausedAt": iso(h.paused_at)})
        lease = self.lease(tab_id)
        if lease is not None:
            out.update(lease.to_dict())
        return out

    def held(self, tab_id: str) -> bool:
        """Whether an owner or a person holds the tab (tab policies leave such tabs open)."""
        return self.lease(tab_id) is not None or self.handoff(tab_id) is not None

    def forget(self, tab_id: str) -> None:
        """The tab is gone: its lease and handoff with it."""
        with self._lock:
            self._leases.pop(tab_id, None)
            self._handoffs.pop(tab_id, None)
            self._resolutions.pop(tab_id, None)

    def clear(self) -> None:
        """The browser restarted: every tab id is gone."""
        with self._lock:
            self._leases.clear()
            self._handoffs.clear()
            self._resolutions.clear()
