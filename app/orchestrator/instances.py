"""Instances as the manager keeps them: records, statuses, the restart policy, event and log rings.

Pure bookkeeping, no processes and no sockets, so every rule here is testable on its own.
"""
from __future__ import annotations

import collections
import hashlib
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from profiles.redact import scrub_url
from profiles.times import utc_iso

from ..config import AttachConfig, RestartConfig
from .errors import AttachDisabled, AttachNotAllowed, BadManagerRequest

STARTING = "starting"
RUNNING = "running"
STOPPING = "stopping"
STOPPED = "stopped"
ERROR = "error"
LOST = "lost"  # its provider stopped answering: no bridge, no browser, no restart until asked

STARTED = "instance.started"
STOPPED_EVENT = "instance.stopped"
ERRORED = "instance.error"
ATTACHED = "instance.attached"
LOST_EVENT = "instance.lost"

TEMP_PREFIX = "instance-"

# multiInstance.strategy: which launch a default instance at start, which restart crashed instances.
AUTO_LAUNCH = ("always-on", "simple", "simple-autorestart")
AUTO_RESTART = ("always-on", "simple-autorestart", "explicit", "no-instance")

# How an attached instance reaches its browser: a CDP URL, or our extension in a person's own Chrome.
ATTACH_CDP = "cdp"
ATTACH_EXTENSION = "extension"
ATTACH_BRIDGE = "bridge"  # a `pinchtab bridge` someone else runs, reached by URL and token
ATTACH_TYPES = (ATTACH_CDP, ATTACH_EXTENSION)


def instance_id(profile_id: str, name: str, started: float) -> str:
    """``inst_`` + 8 hex of sha256(profile id, name, start time), the id shape PinchTab clients expect."""
    digest = hashlib.sha256(f"{profile_id}\0{name}\0{started!r}\0{secrets.token_hex(4)}".encode()).hexdigest()
    return "inst_" + digest[:8]


def check_attach_enabled(policy: AttachConfig) -> None:
    """Refuse any attach while ``security.attach.enabled`` is off; the error names the setting.

    An extension attach needs nothing more: it opens no connection (allowHosts and allowSchemes
    guard the CDP URLs the server would dial) but a loopback port where only a paired extension,
    installed by the person, can connect.
    """
    if not policy.enabled:
        raise AttachDisabled("attach endpoint is disabled; enable security.attach.enabled in config to use "
                             "this endpoint", details={"setting": "security.attach.enabled",
                                                       "hint": 'set "security": {"attach": {"enabled": true}}'})


def check_attach(policy: AttachConfig, cdp_url: str) -> None:
    """Refuse a CDP URL the config does not allow; the error names the setting to change."""
    check_attach_enabled(policy)
    try:
        parts = urlsplit(cdp_url)
        hostname = parts.hostname
    except ValueError:  # "http://[::1" and the like
        parts, hostname = urlsplit(""), None
    scheme = parts.scheme.lower()
    if not scheme or not hostname:
        raise BadManagerRequest("cdpUrl must be an absolute URL like ws://host:port/devtools/browser/... "
                                "or http://host:port", details={"field": "cdpUrl"})
    if scheme not in policy.allow_schemes:
        raise AttachNotAllowed(f"scheme {scheme!r} is not allowed by security.attach.allowSchemes "
                               f"({', '.join(policy.allow_schemes) or 'none'})",
                               details={"setting": "security.attach.allowSchemes", "scheme": scheme})
    host = hostname.lower()
    if host not in {h.lower().strip("[]") for h in policy.allow_hosts}:
        raise AttachNotAllowed(f"host {host!r} is not allowed by security.attach.allowHosts "
                               f"({', '.join(policy.allow_hosts) or 'none'})",
                               details={"setting": "security.attach.allowHosts", "host": host})


class Backoff:
    """When to restart a crashed instance: ``init * 2**n`` seconds up to ``max``, at most
    ``maxRestarts`` times, the count forgotten once an instance stayed up ``stableAfterSec``."""

    def __init__(self, policy: RestartConfig) -> None:
        self.policy = policy

    def next_delay(self, restarts: int, up_for_s: float | None) -> tuple[int, float | None]:
        """(restart count after this crash, seconds to wait) or (count, None) to give up."""
        if up_for_s is not None and up_for_s >= self.policy.stable_after_sec:
            restarts = 0
        if restarts >= self.policy.max_restarts:
            return restarts, None
        delay = min(self.policy.init_backoff_sec * (2 ** restarts), self.policy.max_backoff_sec)
        return restarts + 1, float(delay)


class LogRing:
    """The last lines a child printed (bounded; the oldest go first)."""

    def __init__(self, max_lines: int = 2000) -> None:
        self._lines: collections.deque[str] = collections.deque(maxlen=max_lines)
        self._total = 0  # lines ever added: the number of the newest one
        self._lock = threading.Lock()

    def add(self, line: str) -> None:
        """Keep one line (dropping the oldest when full)."""
        with self._lock:
            self._lines.append(line)
            self._total += 1

    def since(self, after: int | None) -> tuple[list[str], int]:
        """(lines numbered above ``after``, the newest number); None: none yet, only the number.
        Lines that fell out of the ring are skipped."""
        with self._lock:
            if after is None or after >= self._total:
                return [], self._total
            first = self._total - len(self._lines) + 1
            return list(self._lines)[max(0, after + 1 - first):], self._total

    def tail(self, n: int | None = None) -> list[str]:
        """The last ``n`` lines (all when None)."""
        with self._lock:
            lines = list(self._lines)
        return lines if n is None else lines[-n:]


class EventRing:
    """Lifecycle events with increasing ids, bounded, that readers can wait on."""

    def __init__(self, max_events: int = 1000) -> None:
        self._events: collections.deque[dict[str, Any]] = collections.deque(maxlen=max_events)
        self._next_id = 1
        self._cond = threading.Condition()

    def publish(self, event_type: str, instance: dict[str, Any] | None = None,
                provider: dict[str, Any] | None = None) -> dict[str, Any]:
        """Add an event about an instance (or a provider) and wake the readers; returns it."""
        with self._cond:
            about = {"instance": instance} if provider is None else {"provider": provider}
            ev = {"id": self._next_id, "type": event_type, "time": utc_iso(), **about}
            self._next_id += 1
            self._events.append(ev)
            self._cond.notify_all()
        return ev

    @property
    def last_id(self) -> int:
        """The id of the newest event (0 before the first)."""
        with self._cond:
            return self._next_id - 1

    def since(self, after: int | None, wait_s: float = 0.0, limit: int = 500) -> dict[str, Any]:
        """Events with ids above ``after`` (None: only ones yet to come), waiting up to ``wait_s``
        for the first. ``missed`` says older ones fell out of the ring."""
        deadline = time.monotonic() + max(0.0, wait_s)
        with self._cond:
            if after is None:
                after = self._next_id - 1
            while True:
                found = [e for e in self._events if e["id"] > after][:limit]
                left = deadline - time.monotonic()
                if found or left <= 0:
                    break
                self._cond.wait(left)
            oldest = self._events[0]["id"] if self._events else self._next_id
            return {"events": found, "last": found[-1]["id"] if found else after,
                    "missed": after + 1 < oldest and after < self._next_id - 1}


@dataclass(eq=False)
class Instance:
    """One instance: a ``pinchtab bridge`` child on a port, on a profile or an attached browser."""

    id: str
    profile_id: str
    profile_name: str
    port: int
    mode: str
    attached: bool = False
    attach_type: str = ATTACH_CDP  # of an attached instance: ATTACH_CDP or ATTACH_EXTENSION
    cdp_url: str = field(default="", repr=False)
    base_url: str = ""  # an attached bridge's own URL (ATTACH_BRIDGE); others listen on 127.0.0.1:port
    extension_port: int | None = None  # an extension instance's port for the extension, on 127.0.0.1
    extension_connected: bool = False  # as the bridge last said (GET /extension/info)
    temporary: bool = False  # a profile made for this instance, deleted when it stops
    allowed_domains: tuple[str, ...] = ()  # its start request's securityPolicy.allowedDomains
    # The agent whose session started it (empty: the operator, or the server itself): that session
    # may stop or restart it, as the operator's token may any instance.
    owner_agent: str = ""
    default: bool = False  # the instance shorthand routes go to
    provider: str = ""  # the browsers.providers entry its browser comes from (none: attached by hand)
    endpoint: str = ""  # a remote instance's engine as it may be shown (every secret masked)
    status: str = STARTING
    error: str = ""
    start_time: float = field(default_factory=time.time)
    running_since: float | None = None
    restarts: int = 0
    restart_at: float | None = None  # monotonic time of a scheduled restart
    # The bridge's own bearer token: only the manager and the worker ever see it.
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    child: Any = field(default=None, repr=False)  # the manager's Child while a process runs
    # Outlives each child, so the lines before a crash stay readable after the restart.
    logs: LogRing = field(default_factory=LogRing, repr=False)

    @property
    def url(self) -> str:
        """Where the instance's bridge listens: loopback, unless it is an attached bridge."""
        return self.base_url or f"http://127.0.0.1:{self.port}"

    @property
    def extension(self) -> bool:
        """True for an instance that drives a person's Chrome through our extension."""
        return self.attached and self.attach_type == ATTACH_EXTENSION

    @property
    def extension_url(self) -> str:
        """Where the person points the extension (``pinchtab_url``); empty for other instances."""
        return f"http://127.0.0.1:{self.extension_port}" if self.extension else ""

    @property
    def active(self) -> bool:
        """True until a stop finished: the instance holds its profile and port."""
        return self.status != STOPPED

    def record(self) -> dict[str, Any]:
        """The instance as the API shows it (reference §7); never the token."""
        out: dict[str, Any] = {"id": self.id, "profileId": self.profile_id, "profileName": self.profile_name,
                               "port": self.port, "url": self.url, "mode": self.mode,
                               "headless": self.mode == "headless", "status": self.status,
                               "startTime": utc_iso(self.start_time)}
        if self.error:
            out["error"] = self.error
        out["attached"] = self.attached
        if self.allowed_domains:
            out["securityPolicy"] = {"allowedDomains": list(self.allowed_domains)}
        if self.owner_agent:
            out["ownerAgent"] = self.owner_agent
        if self.provider:
            out["provider"] = self.provider
        if self.endpoint:
            out["endpoint"] = self.endpoint
        if self.extension:
            # Never the pairing token: records go to every listing, the dashboard and the events.
            out.update(attachType=ATTACH_EXTENSION, extensionPort=self.extension_port,
                       extensionUrl=self.extension_url, extensionConnected=self.extension_connected)
        elif self.attach_type == ATTACH_BRIDGE:
            out["attachType"] = ATTACH_BRIDGE
            out["url"] = scrub_url(self.base_url, mask_every_value=True)
        elif self.attached and not self.endpoint:  # a remote instance shows its engine as endpoint
            out["attachType"] = ATTACH_CDP
            out["cdpUrl"] = scrub_url(self.cdp_url, mask_every_value=True)
        return out
