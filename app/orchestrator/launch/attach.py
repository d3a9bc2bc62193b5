"""Attaching: an instance on a browser the server did not start.

Three kinds, each under ``security.attach`` (off unless enabled; CDP URLs and bridge URLs only to the
allowed schemes and hosts):

* ``attach`` with a CDP URL: a local ``pinchtab bridge`` child on someone else's browser (the
  launcher runs it; the browser is never killed, it is not in the child's process group);
* ``attach`` with ``attachType: "extension"``: ``pinchtab bridge --extension`` for a person's own
  Chrome, which our extension connects to on a port of the instance range (its pairing token is the
  server's, handed back to the caller only);
* ``attach-bridge``: a whole ``pinchtab bridge`` someone else runs, reached by URL and token; it is
  only watched (``/health`` every couple of seconds), never spawned, restarted or killed.

Names are one namespace: an attach under a name that is taken by the same target is a re-attach
(``created`` false), by another target a conflict. :class:`Attaching` is a part of
:class:`~app.orchestrator.manager.Manager`, on its table, lock and launcher.
"""
from __future__ import annotations

import logging
import secrets
import time
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import requests

from profiles.redact import scrub_url

from ...extension.bridge import DEFAULT_PORT as EXTENSION_DEFAULT_PORT
from .. import instances as lifecycle
from ..errors import (
    AttachUnreachable,
    BadManagerRequest,
    ManagerUnavailable,
    OrchestratorError,
    PortUnavailable,
    ProfileInUse,
)
from ..instances import (
    ATTACH_BRIDGE,
    ATTACH_CDP,
    ATTACH_EXTENSION,
    ATTACH_TYPES,
    Instance,
    check_attach,
    check_attach_enabled,
    instance_id,
)
from . import Launcher, start_thread

if TYPE_CHECKING:
    import threading

    from ...config import Config
    from ..ports import PortAllocator

log = logging.getLogger(__name__)

BRIDGE_POLL_S = 2.0  # how often an attached bridge's /health is checked
BRIDGE_MISSES = 2  # unanswered checks in a row before it is marked in error


class Attaching:
    """The manager's attach operations: a part of :class:`~app.orchestrator.manager.Manager`, whose
    ``_changed``, ``_publish`` and ``_abandon`` they use beside the attributes declared here."""

    config: Config
    instances: dict[str, Instance]
    ports: PortAllocator
    launcher: Launcher
    http: requests.Session
    _lock: threading.RLock
    _halting: threading.Event

    if TYPE_CHECKING:  # the manager's own (see the class's docstring)
        def _changed(self) -> None: ...
        def _publish(self, event_type: str, inst: Instance, status: str | None = None) -> None: ...
        def _abandon(self, inst: Instance) -> None: ...

    def attach_to(self, attach_type: str | None, name: str, cdp_url: str,
                  extension_port: int | None) -> tuple[Instance, bool, str | None]:
        """The ``attach`` request: a CDP URL, or (``attach_type`` "extension") a person's Chrome;
        (instance, created, the pairing token for an extension instance else None)."""
        attach_type = attach_type or ATTACH_CDP
        if attach_type not in ATTACH_TYPES:
            raise BadManagerRequest(f"attachType must be one of {', '.join(ATTACH_TYPES)}",
                                    details={"field": "attachType"})
        name = name or _made_name(attach_type)
        if attach_type == ATTACH_CDP:
            inst, created = self.attach(name, cdp_url)
            return inst, created, None
        inst, created = self.attach_extension(name, extension_port)
        return inst, created, self.launcher.pairing_token()

    def attach(self, name: str, cdp_url: str) -> tuple[Instance, bool]:
        """Run a bridge on a browser someone else started; returns (instance, created).

        Raises AttachDisabled or AttachNotAllowed (naming the setting) and AttachUnreachable.
        """
        check_attach(self.config.security.attach, cdp_url)
        _check_name(name)
        with self._lock:
            other = self._attached_named(name) or self._attached_to(cdp_url)
            if other is not None:
                if other.extension or other.cdp_url != cdp_url:
                    raise ProfileInUse(f"an attached instance named {name!r} already exists ({other.id})",
                                       code="instance_exists", details={"instanceId": other.id})
                return other, False
        from cdp.errors import LaunchError
        from cdp.launcher import resolve_cdp_url

        try:
            resolve_cdp_url(cdp_url, timeout_s=3.0)
        except LaunchError as exc:
            shown = scrub_url(str(exc), mask_every_value=True)
            raise AttachUnreachable(f"no browser answers at the CDP URL: {shown}") from None
        with self._lock:
            port = self.ports.allocate()
            started = time.time()
            inst = Instance(id=instance_id("", name, started), profile_id="", profile_name=name, port=port,
                            mode=self.config.instance_defaults.mode, attached=True, cdp_url=cdp_url,
                            start_time=started)
            self.instances[inst.id] = inst
            self._changed()
        self._launch_attached(inst, name)
        return inst, True

    def attach_extension(self, name: str, extension_port: int | None = None) -> tuple[Instance, bool]:
        """Run ``pinchtab bridge --extension`` for a person's own Chrome; returns (instance, created).

        The extension's port is ``extension_port``, else the extension's default when free, else one
        from the instance range. The instance runs once its bridge answers, whether or not the
        extension has connected yet (``extensionConnected`` says which).
        Raises AttachDisabled, PortUnavailable, and ProfileInUse for a name another attach holds.
        """
        check_attach_enabled(self.config.security.attach)
        _check_name(name)
        if self._halting.is_set():
            raise ManagerUnavailable("the instance manager is stopping")
        with self._lock:
            other = self._attached_named(name)
            if other is not None:
                if not other.extension or extension_port not in (None, other.extension_port):
                    raise ProfileInUse(f"an attached instance named {name!r} already exists ({other.id})",
                                       code="instance_exists", details={"instanceId": other.id})
                return other, False
            ext_port = self._reserve_extension_port(extension_port)
            try:
                port = self.ports.allocate()
            except PortUnavailable:
                self.ports.release(ext_port)
                raise
            started = time.time()
            # headed: it is the person's own, visible Chrome.
            inst = Instance(id=instance_id("", name, started), profile_id="", profile_name=name, port=port,
                            mode="headed", attached=True, attach_type=ATTACH_EXTENSION, extension_port=ext_port,
                            start_time=started)
            self.instances[inst.id] = inst
            self._changed()
        self._launch_attached(inst, name)
        log.info("instance %s: waiting for the extension on %s", inst.id, inst.extension_url)
        return inst, True

    def _attached_to(self, cdp_url: str) -> Instance | None:
        """Under the lock: the active instance attached to this CDP URL (a re-attach without a name)."""
        for other in self.instances.values():
            if other.active and other.attached and other.cdp_url and other.cdp_url == cdp_url:
                return other
        return None

    def attach_bridge(self, name: str, base_url: str, token: str) -> tuple[Instance, bool]:
        """Route to a ``pinchtab bridge`` someone else runs (``baseUrl`` and its token); returns
        (instance, created). Under the same policy as a CDP attach (security.attach). The bridge
        is only watched, never spawned or killed: a stop asks it to shut down, nothing more.
        Raises AttachDisabled, AttachNotAllowed, AttachUnreachable and BadManagerRequest."""
        check_attach(self.config.security.attach, base_url)
        given = name
        name = name or _made_name(ATTACH_BRIDGE)
        _check_name(name)
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or parts.path not in ("", "/") or parts.query or parts.username:
            raise BadManagerRequest("baseUrl must be http(s)://host:port, without a path, query or credentials",
                                    details={"field": "baseUrl"})
        base = f"{parts.scheme}://{parts.netloc}"
        with self._lock:
            for other in self.instances.values():
                if other.active and other.attached and (other.profile_name == name or other.base_url == base):
                    if other.base_url != base or other.profile_name != (given or other.profile_name):
                        raise ProfileInUse(f"an attached instance named {other.profile_name!r} already exists "
                                           f"({other.id})", code="instance_exists", details={"instanceId": other.id})
                    other.token = token or other.token  # a re-attach may bring the bridge's new token
                    self._changed()
                    return other, False
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        try:
            health = self.http.get(f"{base}/health", timeout=3.0)
            tabs = self.http.get(f"{base}/tabs", headers=headers, timeout=5.0)
        except requests.RequestException as exc:
            raise AttachUnreachable(f"no bridge answers at {scrub_url(base, mask_every_value=True)}: "
                                    f"{type(exc).__name__}") from None
        if tabs.status_code == 401:
            raise AttachUnreachable("the bridge refused the token", code="attach_bad_token", status=400)
        if health.status_code != 200 or tabs.status_code != 200:
            raise AttachUnreachable(f"the bridge at {base} is not healthy (GET /health {health.status_code}, "
                                    f"GET /tabs {tabs.status_code})")
        port = parts.port or (443 if parts.scheme == "https" else 80)
        with self._lock:
            started = time.time()
            inst = Instance(id=instance_id("", name, started), profile_id="", profile_name=name, port=port,
                            mode=self.config.instance_defaults.mode, attached=True, attach_type=ATTACH_BRIDGE,
                            base_url=base, token=token, start_time=started, status=lifecycle.RUNNING,
                            running_since=time.monotonic())
            self.instances[inst.id] = inst
            self._changed()
        self._publish(lifecycle.ATTACHED, inst)
        start_thread(self._watch_bridge, (inst,), f"watch:{inst.id}")
        return inst, True

    def _watch_bridge(self, inst: Instance) -> None:
        """While an attached bridge is ours, mark it in error when /health stops answering, and
        running again when it comes back (it is not ours to restart)."""
        misses = 0
        while not self._halting.is_set() and inst.active and inst.status != lifecycle.STOPPING:
            ok = self.launcher.healthy(inst)
            misses = 0 if ok else misses + 1
            with self._lock:
                if inst.status == lifecycle.STOPPING or not inst.active:
                    return
                if ok and inst.status == lifecycle.ERROR:
                    inst.status, inst.error, inst.running_since = lifecycle.RUNNING, "", time.monotonic()
                    self._changed()
                elif misses >= BRIDGE_MISSES and inst.status == lifecycle.RUNNING:
                    inst.status, inst.error, inst.running_since = lifecycle.ERROR, "the bridge stopped answering", None
                    self._changed()
                    self._publish(lifecycle.ERRORED, inst)
            self._halting.wait(BRIDGE_POLL_S)

    def _attached_named(self, name: str) -> Instance | None:
        """Under the lock: the active attached instance called ``name`` (names are one namespace)."""
        for other in self.instances.values():
            if other.active and other.attached and other.profile_name == name:
                return other
        return None

    def _reserve_extension_port(self, requested: int | None) -> int:
        """Under the lock: the port the extension connects to, reserved like an instance port."""
        if requested is not None:
            try:
                return self.ports.reserve(requested)
            except PortUnavailable as exc:
                exc.details = {**exc.details, "field": "extensionPort"}
                raise
        try:
            return self.ports.reserve(EXTENSION_DEFAULT_PORT)
        except PortUnavailable:  # another bridge or daemon has the default: any free one will do
            return self.ports.allocate()

    def _launch_attached(self, inst: Instance, name: str) -> None:
        """Spawn a just-registered attached instance; if that fails, forget it and say why."""
        try:
            self.launcher.spawn(inst)
        except Exception as exc:
            log.exception("instance %s: could not start the bridge", inst.id)
            self._abandon(inst)
            raise OrchestratorError(f"could not start the bridge for {name!r}: {exc}", code="launch_failed") from None


def _made_name(attach_type: str) -> str:
    """A name for an attach that did not give one (names key state dirs and re-attaches)."""
    return f"{attach_type}-{secrets.token_hex(4)}"


def _check_name(name: str) -> None:
    """An attached instance's name: it names its state dir too."""
    if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
        raise BadManagerRequest("name must be 1-64 letters, digits, '-', '_' or '.'", details={"field": "name"})


