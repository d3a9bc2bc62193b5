"""The fleet: the providers an instance's browser may come from, their health, and placing on them.

Server mode asks :mod:`.providers` for a browser when an instance starts on a remote provider,
starts the same bridge child attached to the leased URL (:mod:`.local`), and gives the lease back
when the instance stops. A thread polls each remote provider's own status route; a provider that
misses :data:`MISSES` polls in a row is down, and its instances are ``lost`` (their bridges stopped,
their leases given back, no restart planned) until someone restarts them, which places them again,
on another provider when their own is still down. Other providers' instances are untouched.

:class:`Fleet` is a part of the manager: it reads the manager's table under the manager's lock and
tells of changes with its ``_changed`` and ``_publish``.
"""
from __future__ import annotations

import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from .. import instances as lifecycle
from ..errors import BadManagerRequest, OrchestratorError
from . import Host, start_thread
from .providers import Health, Lease, Provider, ProviderDown, ProviderFull, build
from .providers.placement import Room, order

if TYPE_CHECKING:
    from ..instances import Instance

log = logging.getLogger(__name__)

POLL_S = 1.5   # how often each remote provider's status route is asked
MISSES = 2     # unanswered polls in a row before a provider is down (lost within ~5 s)
RETRY_AFTER_S = 5
PLACE_WAIT_STEP_S = 1.0   # while a start waits for room: how often full engines are asked again

PROVIDER_DOWN = "provider.down"
PROVIDER_UP = "provider.up"


class NoCapacity(OrchestratorError):
    """Every provider is full (or down): the start may be retried."""

    status = 503
    code = "no_capacity"


class Fleet:
    """The providers of one server, and which instance holds which lease."""

    def __init__(self, m: Host) -> None:
        self.m = m
        try:
            self.providers: dict[str, Provider] = {c.name: build(c) for c in m.config.browsers.fleet}
        except ValueError as exc:   # a ${NAME} the environment does not set
            raise OrchestratorError(str(exc), code="provider_config", status=500) from None
        self.health: dict[str, Health] = {name: Health(ok=True) for name in self.providers}
        self._misses = dict.fromkeys(self.providers, 0)
        self.leases: dict[str, Lease] = {}   # instance id -> its lease (remote instances only)
        self._turn = 0
        self._stop = threading.Event()

    @property
    def default_name(self) -> str:
        """The provider an instance goes to when nothing else says (the only one, if one)."""
        return next(iter(self.providers)) if len(self.providers) == 1 else ""

    def remote(self, inst: Instance) -> bool:
        provider = self.providers.get(inst.provider)
        return provider is not None and provider.remote

    # --- placing ---------------------------------------------------------------------------------
    def rooms(self) -> list[Room]:
        with self.m._lock:
            used = {name: 0 for name in self.providers}
            for inst in self.m.instances.values():
                if inst.active and inst.provider in used and inst.status != lifecycle.LOST:
                    used[inst.provider] += 1
        return [Room(name, p.capacity, used[name], self.health[name].ok, self.health[name].free)
                for name, p in self.providers.items()]

    def place(self, wanted: str, wait_s: float) -> tuple[Provider, Lease | None]:
        """The provider for a new instance and, for a remote one, its browser's lease.

        ``wanted`` (or ``instanceDefaults.provider``) names one; else the one with the most free
        room. Full ones are skipped; with none left, wait up to ``wait_s`` for room, then 503
        ``no_capacity`` with Retry-After.
        """
        wanted = wanted or self.m.config.instance_defaults.provider
        if wanted and wanted not in self.providers:
            raise BadManagerRequest(f"no provider named {wanted!r}: expected one of {', '.join(self.providers)}",
                                    details={"field": "provider"})
        deadline = time.monotonic() + wait_s
        reasons: dict[str, str] = {}
        while True:
            rooms = self.rooms()
            if wanted:
                names = [r.name for r in rooms if r.name == wanted and r.free > 0 and r.healthy]
                if not names:
                    reasons[wanted] = "full" if self.health[wanted].ok else "down: " + self.health[wanted].detail
            else:
                names = order(rooms, self.m.config.multi_instance.allocation_policy, self._turn)
                for r in rooms:
                    if r.name not in names:
                        reasons[r.name] = "full" if r.healthy else "down: " + self.health[r.name].detail
            for name in names:
                provider = self.providers[name]
                if not provider.remote:
                    self._turn += 1
                    return provider, None
                try:
                    lease = provider.lease()
                except ProviderFull as exc:
                    reasons[name] = "full: " + exc.reason
                    continue
                except ProviderDown as exc:
                    reasons[name] = "down: " + exc.reason
                    self._missed(provider, exc.reason)
                    continue
                self._turn += 1
                return provider, lease
            left = deadline - time.monotonic()
            if left <= 0:
                said = "; ".join(f"{n} {why}" for n, why in reasons.items())
                raise NoCapacity(f"no provider has room for an instance ({said}); retry in {RETRY_AFTER_S} s "
                                 "or send waitSec", details={"providers": reasons},
                                 headers={"Retry-After": str(RETRY_AFTER_S)}, retryable=True)
            with self.m._cond:   # woken when an instance stops; full engines are asked again each step
                self.m._cond.wait(min(left, PLACE_WAIT_STEP_S))

    def hold(self, inst: Instance, provider: Provider, lease: Lease | None) -> None:
        """Under the manager's lock: ``inst`` now runs on ``provider`` (on ``lease``'s browser)."""
        inst.provider = provider.name
        if lease is not None:
            self.leases[inst.id] = lease
            inst.attached = True
            inst.cdp_url = lease.cdp_url
            inst.endpoint = lease.shown

    def release(self, inst: Instance) -> None:
        """Give back the instance's browser (after its bridge stopped); never raises."""
        with self.m._lock:
            lease = self.leases.pop(inst.id, None)
        if lease is None:
            return
        try:
            lease.release()
        except Exception:   # the engine may be gone with the browser: nothing left to give back
            log.warning("instance %s: giving back its browser on %s failed", inst.id, lease.provider, exc_info=True)

    def replace(self, inst: Instance) -> None:
        """Before a restart of a remote instance: a new browser, from its own provider when that one
        is up, else from another with room."""
        self.release(inst)
        own = self.providers.get(inst.provider)
        wanted = inst.provider if own is not None and self.health[inst.provider].ok else ""
        try:
            provider, lease = self.place(wanted, 0.0)
        except NoCapacity:
            if not wanted:
                raise
            provider, lease = self.place("", 0.0)
        with self.m._lock:
            if lease is None:   # placed on this machine: a bridge of its own browser
                inst.attached, inst.cdp_url, inst.endpoint = False, "", ""
            self.hold(inst, provider, lease)

    # --- health ----------------------------------------------------------------------------------
    def start(self) -> None:
        if any(p.remote for p in self.providers.values()):
            start_thread(self._watch, (), "pinchtab-fleet-health")

    def stop(self) -> None:
        self._stop.set()

    def describe(self) -> list[dict[str, Any]]:
        """The providers as the API shows them: never a secret."""
        rooms = {r.name: r for r in self.rooms()}
        out = []
        for name, p in self.providers.items():
            h = self.health[name]
            entry: dict[str, Any] = {"name": name, "kind": p.config.kind, "capacity": p.capacity,
                                     "inUse": rooms[name].in_use, "healthy": h.ok}
            if p.remote:
                entry["endpoint"] = p.shown_endpoint
            if h.detail:
                entry["detail"] = h.detail
            if h.free is not None:
                entry["engineFree"] = h.free
            out.append(entry)
        return out

    def _watch(self) -> None:
        while not self._stop.wait(POLL_S):
            for provider in [p for p in self.providers.values() if p.remote]:
                health = provider.health()
                if health.ok:
                    self._answered(provider, health)
                else:
                    self._missed(provider, health.detail)

    def _answered(self, provider: Provider, health: Health) -> None:
        was = self.health[provider.name]
        self._misses[provider.name] = 0
        self.health[provider.name] = health
        if not was.ok:
            log.info("provider %s answers again", provider.name)
            self.m.events.publish(PROVIDER_UP, provider={"name": provider.name})
            with self.m._lock:
                self.m._changed()

    def _missed(self, provider: Provider, reason: str) -> None:
        self._misses[provider.name] += 1
        if self._misses[provider.name] < MISSES or not self.health[provider.name].ok:
            return
        self.health[provider.name] = Health(ok=False, detail=reason)
        log.warning("provider %s is down: %s", provider.name, reason)
        self.m.events.publish(PROVIDER_DOWN, provider={"name": provider.name, "reason": reason})
        self._lose(provider.name, f"provider {provider.name} stopped answering ({reason})")

    def _lose(self, name: str, reason: str) -> None:
        """Every live instance on provider ``name``: lost, its bridge stopped, its lease given back."""
        with self.m._lock:
            victims = [i for i in self.m.instances.values() if i.provider == name and i.active
                       and i.status not in (lifecycle.STOPPING, lifecycle.LOST)]
            for inst in victims:
                inst.status = lifecycle.STOPPING   # the reaper leaves a stopping instance's exit alone
                inst.restart_at = None
            self.m._changed()
        for inst in victims:
            self.m.launcher.kill(inst, inst.child)
            self.release(inst)
            with self.m._lock:
                inst.child = None
                inst.status = lifecycle.LOST
                inst.error = reason
                inst.running_since = None
                self.m._changed()
            self.m._publish(lifecycle.LOST_EVENT, inst)
