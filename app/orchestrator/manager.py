"""``python -m app.orchestrator.manager``: the process that owns every instance of a server.

Started by the gunicorn master's ``on_starting`` hook as a fresh interpreter in its own session,
and stopped by ``on_exit``. Why a process of its own: gunicorn's master reaps every child with
``waitpid(-1)`` (a bridge started there would lose its exit status) and forks again for every new
worker (a thread there could deadlock the fork); a worker restarts whenever gunicorn likes.

The manager allocates ports, writes each child's config, spawns ``pinchtab bridge`` children
(on a profile, attached to a CDP URL, or ``--extension`` for a person's own Chrome), polls their
``/health`` until running or error, restarts crashed ones with backoff, stops them
(``POST /shutdown``, then SIGTERM to the group, then SIGKILL, each under a deadline), and
publishes lifecycle events. The worker talks to it over a Unix socket (``protocol``). It cleans
up after a crashed earlier run (pidfiles) at start, and exits when its parent is gone.

Threads: the main thread runs :meth:`Manager.manage` (signals, the parent watch, reaping,
restarts); one thread accepts socket connections and one serves each; one thread per starting
instance polls its health (an extension instance's goes on watching its extension); one per
child reads its output.
"""
from __future__ import annotations

import argparse
import contextlib
import copy
import fcntl
import json
import logging
import os
import secrets
import select
import shutil
import signal
import socket
import struct
import sys
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import requests

from cdp.launcher import seed_throwaway_profile
from profiles import ProfileStore
from profiles import errors as profile_errors
from profiles.atomic import write_bytes_atomic
from profiles.names import profile_id as profile_id_of
from profiles.redact import scrub_url

from ..config import Config, load_config
from ..extension import pairing
from ..extension.bridge import DEFAULT_PORT as EXTENSION_DEFAULT_PORT
from ..web import activity
from ..web.errors import APIError
from . import instances as lifecycle
from . import procfs
from .children import Child, become_subreaper, clean_orphans, reap_adopted
from .errors import (
    AttachUnreachable,
    BadManagerRequest,
    HaltManager,
    InstanceNotFound,
    ManagerUnavailable,
    OrchestratorError,
    PortUnavailable,
    ProfileInUse,
    ProfileNotFound,
    to_wire,
)
from .instances import (
    ATTACH_BRIDGE,
    ATTACH_CDP,
    ATTACH_EXTENSION,
    ATTACH_TYPES,
    Backoff,
    EventRing,
    Instance,
    check_attach,
    check_attach_enabled,
    instance_id,
)
from .ports import PortAllocator
from .protocol import OPS, SOCKET_NAME, LineChannel, ProtocolError, ensure_private_dir, runtime_dir, unix_address

log = logging.getLogger(__name__)

TICK_S = 0.25
HEALTH_INTERVAL_S = 0.25
HEALTH_TIMEOUT_S = 45.0
EXTENSION_POLL_S = 0.5  # how often a running extension instance is asked whether the extension is there
SHUTDOWN_REQUEST_S = 4.0  # POST /shutdown
SHUTDOWN_WAIT_S = 5.0  # then the process has this long to exit
TERM_WAIT_S = 3.0
KILL_WAIT_S = 2.0
STOP_ALL_S = 20.0  # every instance, in parallel, when the manager stops
MAX_WAIT_S = 30.0  # the longest a long-poll request may wait
CONN_IDLE_S = 60.0
LOG_TAIL_IN_ERRORS = 5
BRIDGE_POLL_S = 2.0  # how often an attached bridge's /health is checked
BRIDGE_MISSES = 2  # unanswered checks in a row before it is marked in error
MAX_AGENT_ID = 128  # an instance owner's agent id is kept this long at most
# Where the app package lives, so ``python -m app.clients.cli`` works whatever directory we started in.
_PACKAGE_ROOT = str(Path(str(__import__("app").__file__)).resolve().parent.parent)
# The child gets its settings from its config file and its token from us, never from our env.
_ENV_DROP_PREFIXES = ("PINCHTAB_", "BRIDGE_")
_ENV_DROP = ("CDP_URL",)


class Manager:
    """Owns every instance of one server: start, manage, stop; spawn, reap, kill."""

    def __init__(self, config: Config, parent_pid: int) -> None:
        self.config = config
        self.parent_pid = parent_pid
        self.run_dir = runtime_dir(config.server.state_dir)
        self.pid_dir = self.run_dir / "pids"
        self.instances_dir = config.server.state_dir / "instances"
        mi = config.multi_instance
        self.ports = PortAllocator(mi.instance_port_start, mi.instance_port_end, skip=frozenset({config.server.port}))
        self.backoff = Backoff(mi.restart)
        self.events = EventRing()
        self.instances: dict[str, Instance] = {}
        self.default_id: str | None = None
        self.generation = 0
        self._lock = threading.RLock()
        self._cond = threading.Condition(self._lock)
        self._halting = threading.Event()
        self._signals: list[int] = []
        self._base = config.to_dict()
        self._store: ProfileStore | None = None
        self._server: ControlServer | None = None
        self._lock_fd: int | None = None
        self._wake_r, self._wake_w = os.pipe()
        self._parent_fd: int | None = None
        self._http = requests.Session()

    # --- lifecycle -------------------------------------------------------------------------------
    def run(self) -> int:
        """Start, manage until told to stop (or orphaned), stop; the process's exit status."""
        status = 0
        try:
            self.start()
            self.manage()
        except HaltManager as halt:
            log.info("manager stopping: %s", halt.reason)
            status = halt.exit_status
        finally:
            self.stop()
        return status

    def start(self) -> None:
        """Take the runtime dir, clean up a crashed run, open the socket, launch the default instance."""
        ensure_private_dir(self.run_dir)
        ensure_private_dir(self.pid_dir)
        self._take_lock()
        killed = clean_orphans(self.pid_dir)
        if killed:
            log.warning("cleaned up %d orphaned instance(s) of an earlier run", len(killed))
        self._store = ProfileStore(self.config.profiles.base_dir)
        if not become_subreaper():
            log.warning("cannot become a child subreaper: a crashed bridge's processes are reaped by init")
        self.init_signals()
        self._parent_fd = _pidfd(self.parent_pid)
        self._server = ControlServer(self.run_dir / SOCKET_NAME, self.handle)
        self._server.start()
        log.info("manager ready (pid %d, parent %d, ports %d-%d)", os.getpid(), self.parent_pid,
                 self.ports.start, self.ports.end)
        if self.config.multi_instance.strategy in lifecycle.AUTO_LAUNCH:
            profile = self.config.instance_defaults.profile or self.config.profiles.default_profile
            try:
                inst = self.launch(profile_id=profile, default=True, create_profile=True)
                log.info("default instance %s launching on port %d (profile %s)", inst.id, inst.port, profile)
            except APIError as exc:
                log.error("the default instance could not be launched: %s", exc.message)

    def _take_lock(self) -> None:
        # One manager per state dir: a second one would take the first one's children for orphans.
        fd = os.open(self.run_dir / "manager.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise HaltManager(f"another pinchtab server is running on state dir {self.config.server.state_dir}",
                              exit_status=3) from None
        self._lock_fd = fd

    def init_signals(self) -> None:
        """Handlers only queue the signal and wake the loop; :meth:`manage` does the work."""
        os.set_blocking(self._wake_w, False)
        os.set_blocking(self._wake_r, False)
        signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(sig, self._queue_signal)

    def _queue_signal(self, signum: int, _frame: Any) -> None:
        self._signals.append(signum)

    def manage(self) -> None:
        """The main loop: signals, the parent watch, reaping and restarts, every tick or sooner."""
        while True:
            self._sleep(TICK_S)
            adopted_exit = False
            while self._signals:
                sig = self._signals.pop(0)
                if sig != signal.SIGCHLD:
                    raise HaltManager(f"received {signal.Signals(sig).name}")
                adopted_exit = True
            if adopted_exit:
                self.reap_adopted()
            if self._parent_gone():
                raise HaltManager(f"parent process {self.parent_pid} is gone")
            self.reap()
            self.restart_due()

    def _sleep(self, timeout_s: float) -> None:
        fds = [self._wake_r] + ([self._parent_fd] if self._parent_fd is not None else [])
        try:
            ready, _, _ = select.select(fds, [], [], timeout_s)
        except InterruptedError:
            return
        if self._wake_r in ready:
            with contextlib.suppress(BlockingIOError, OSError):
                while os.read(self._wake_r, 4096):
                    pass

    def _parent_gone(self) -> bool:
        if self._parent_fd is not None:
            ready, _, _ = select.select([self._parent_fd], [], [], 0)
            return bool(ready)
        return os.getppid() != self.parent_pid

    def stop(self) -> None:
        """Stop every instance (in parallel, bounded), close the socket, release the runtime dir."""
        self._halting.set()
        if self._server is not None:
            self._server.stop()
        with self._lock:
            victims = [i for i in self.instances.values() if i.active]
        threads = [threading.Thread(target=self._stop_quietly, args=(i,), name=f"stop:{i.id}", daemon=True)
                   for i in victims]
        for t in threads:
            t.start()
        deadline = time.monotonic() + STOP_ALL_S
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        if any(t.is_alive() for t in threads):
            log.error("some instances did not stop within %.0f s", STOP_ALL_S)
        if self._store is not None:
            self._store.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)  # releases the flock
            self._lock_fd = None
        self._http.close()

    def _stop_quietly(self, inst: Instance) -> None:
        try:
            self.stop_instance(inst.id)
        except Exception:  # one instance failing to stop must not keep the others running
            log.exception("instance %s: stop failed", inst.id)

    # --- requests from the worker (one thread per connection) -------------------------------------
    def handle(self, op: str, args: dict[str, Any]) -> Any:
        """Run one socket request; raises APIError subclasses for refusals."""
        if op == "list":
            return self.list_state(_int_or_none(args.get("after")), _wait_s(args))
        if op == "events-since":
            return self.events.since(_int_or_none(args.get("after")), _wait_s(args))
        if op == "start":
            port = args.get("port")
            if port is not None and (not isinstance(port, int) or isinstance(port, bool)):
                raise BadManagerRequest("port must be an integer", details={"field": "port"})
            return self.launch(profile_id=args.get("profileId") or None, mode=args.get("mode") or None,
                               port=port, allowed_domains=_allowed_domains(args),
                               owner_agent=str(args.get("ownerAgent") or "")[:MAX_AGENT_ID]).record()
        if op == "attach":
            return self.handle_attach(args)
        if op == "attach-bridge":
            inst, created = self.attach_bridge(str(args.get("name") or ""), str(args.get("baseUrl") or ""),
                                               str(args.get("token") or ""))
            return {"instance": inst.record(), "created": created}
        if op == "metrics":
            return self.metrics()
        instance = str(args.get("id") or "")
        if op == "start-instance":
            return self.start_instance(instance).record()
        if op == "log-lines":
            lines, last = self._find(instance).logs.since(_int_or_none(args.get("after")))
            return {"lines": lines, "last": last}
        if op == "get":
            return self._find(instance).record()
        if op == "stop":
            return self.stop_instance(instance)
        if op == "restart":
            return self.restart_instance(instance).record()
        if op == "logs":
            lines = _int_or_none(args.get("lines"))
            inst = self._find(instance)
            return {"text": "\n".join(inst.logs.tail(lines))}
        raise BadManagerRequest(f"unknown op {op!r}")

    def handle_attach(self, args: dict[str, Any]) -> dict[str, Any]:
        """``attach``: a CDP URL (``cdpUrl``) or, with ``attachType: "extension"``, a person's Chrome
        through our extension (``extensionPort`` optional). An extension instance's answer carries the
        pairing token: it goes back to the caller who asked, never into records, events or logs."""
        attach_type = args.get("attachType") or ATTACH_CDP
        if attach_type not in ATTACH_TYPES:
            raise BadManagerRequest(f"attachType must be one of {', '.join(ATTACH_TYPES)}",
                                    details={"field": "attachType"})
        name = str(args.get("name") or "") or _made_name(attach_type)
        if attach_type == ATTACH_CDP:
            inst, created = self.attach(name, str(args.get("cdpUrl") or ""))
            return {"instance": inst.record(), "created": created}
        ext_port = args.get("extensionPort")
        if ext_port is not None and (not isinstance(ext_port, int) or isinstance(ext_port, bool)):
            raise BadManagerRequest("extensionPort must be an integer", details={"field": "extensionPort"})
        inst, created = self.attach_extension(name, ext_port)
        return {"instance": inst.record(), "created": created, "pairing": self._pairing_token()}

    def list_state(self, after: int | None, wait_s: float) -> dict[str, Any]:
        """Every instance with its token (for the worker's proxy) and whether a restart is planned,
        waiting up to ``wait_s`` for a change past generation ``after``."""
        deadline = time.monotonic() + wait_s
        with self._cond:
            while after is not None and self.generation <= after:
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._cond.wait(left)
            return {"generation": self.generation, "default": self.default_id, "pid": os.getpid(),
                    "instances": [{"record": i.record(), "token": i.token, "restarting": i.restart_at is not None}
                                  for i in self.instances.values()]}

    def _find(self, instance: str) -> Instance:
        with self._lock:
            inst = self.instances.get(instance)
        if inst is None:
            raise InstanceNotFound(instance)
        return inst

    def _changed(self) -> None:
        """Called under the lock after any change the worker's mirror must see."""
        self.generation += 1
        self._cond.notify_all()

    def _publish(self, event_type: str, inst: Instance, status: str | None = None) -> None:
        record = inst.record()
        if status is not None:
            record["status"] = status  # the status the event is about, not the one it has moved on to
        ev = self.events.publish(event_type, record)
        log.info("event %d %s %s (%s)", ev["id"], event_type, inst.id, inst.status)

    # --- launching -------------------------------------------------------------------------------
    def launch(self, profile_id: str | None = None, mode: str | None = None, port: int | None = None,
               default: bool = False, create_profile: bool = False,
               allowed_domains: tuple[str, ...] = (), owner_agent: str = "") -> Instance:
        """Start an instance on a profile (a temporary one without ``profile_id``); returns it starting.
        ``allowed_domains`` are added to security.allowedDomains for this instance alone;
        ``owner_agent`` is the agent whose session asked for it (kept across restarts).

        Raises ProfileNotFound, ProfileInUse (another instance or process runs the profile) and
        PortUnavailable.
        """
        if self._halting.is_set():
            raise ManagerUnavailable("the instance manager is stopping")
        mode = mode or self.config.instance_defaults.mode
        if mode not in ("headless", "headed"):
            raise BadManagerRequest("mode must be 'headless' or 'headed'", details={"field": "mode"})
        temporary = not profile_id
        info: dict[str, Any] | None = None
        if profile_id:
            info = self._resolve_profile(profile_id, create_profile)
            name, pid = info["name"], info["id"]
        else:
            name = f"{lifecycle.TEMP_PREFIX}{int(time.time() * 1000)}"
            pid = profile_id_of(name)
        with self._lock:
            for other in self.instances.values():
                if other.active and not other.attached and other.profile_name == name:
                    raise ProfileInUse(f"profile {name!r} is in use by instance {other.id}",
                                       details={"profile": name, "instanceId": other.id})
            if info is not None:
                self._check_idle(info)
            if temporary:
                # Two anonymous starts in one millisecond get distinct names.
                while any(i.profile_name == name for i in self.instances.values()):
                    name += "x"
                    pid = profile_id_of(name)
            port = self.ports.reserve(port) if port else self.ports.allocate()
            started = time.time()
            inst = Instance(id=instance_id(pid, name, started), profile_id=pid, profile_name=name, port=port,
                            mode=mode, temporary=temporary, default=default, start_time=started,
                            allowed_domains=allowed_domains, owner_agent=owner_agent)
            self.instances[inst.id] = inst
            if default:
                self.default_id = inst.id
            self._changed()
        try:
            if temporary:
                made = self._profiles().create(name,
                                               description="temporary profile of one instance; deleted when it stops")
                seed_throwaway_profile(made["path"])  # nobody's but this instance's (cdp/launcher.py says why)
            self.spawn(inst)
        except Exception as exc:
            self._abandon(inst)
            if isinstance(exc, APIError):
                raise
            if isinstance(exc, profile_errors.ProfileError):
                raise OrchestratorError(str(exc), code="profile_error", status=409) from None
            log.exception("instance %s: launch failed", inst.id)
            raise OrchestratorError(f"could not launch the instance: {exc}", code="launch_failed") from None
        return inst

    def _resolve_profile(self, profile: str, create: bool) -> dict[str, Any]:
        store = self._profiles()
        try:
            return dict(store.get(profile))
        except profile_errors.ProfileNotFound:
            if not create:
                raise ProfileNotFound(f"profile {profile!r} not found", details={"profileId": profile}) from None
            try:
                return dict(store.create(profile))
            except profile_errors.ProfileExists:
                return dict(store.get(profile))
        except profile_errors.InvalidProfileName as exc:
            raise BadManagerRequest(str(exc), details={"field": "profileId"}) from None

    @staticmethod
    def _check_idle(info: dict[str, Any]) -> None:
        """Refuse a profile that a process outside this manager holds (a lone bridge, a Chrome)."""
        if info.get("running"):
            holder: dict[str, Any] = dict(info.get("lockedBy") or {})
            who = holder.get("owner") or (f"Chrome (pid {info.get('chromePid')})" if info.get("chromePid") else "")
            raise ProfileInUse(f"profile {info['name']!r} is in use by another process"
                               + (f": {who}" if who else ""), details={"profile": info["name"], "lockedBy": holder})

    def _profiles(self) -> ProfileStore:
        if self._store is None:
            self._store = ProfileStore(self.config.profiles.base_dir)
        return self._store

    def _abandon(self, inst: Instance) -> None:
        """Undo a launch that failed before its child ran."""
        with self._lock:
            self.instances.pop(inst.id, None)
            self._release_ports(inst)
            if self.default_id == inst.id:
                self.default_id = None
            inst.status = lifecycle.STOPPED
            self._changed()
        if inst.temporary:
            self._drop_temporary(inst)

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
        self._launch(inst, name)
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
        self._launch(inst, name)
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
            health = self._http.get(f"{base}/health", timeout=3.0)
            tabs = self._http.get(f"{base}/tabs", headers=headers, timeout=5.0)
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
        threading.Thread(target=self._watch_bridge, args=(inst,), name=f"watch:{inst.id}", daemon=True).start()
        return inst, True

    def _watch_bridge(self, inst: Instance) -> None:
        """While an attached bridge is ours, mark it in error when /health stops answering, and
        running again when it comes back (it is not ours to restart)."""
        misses = 0
        while not self._halting.is_set() and inst.active and inst.status != lifecycle.STOPPING:
            ok = self._healthy(inst)
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

    def start_instance(self, instance: str) -> Instance:
        """Start an instance that is not running (failed, or given up on); one that runs or is
        starting is left as it is."""
        inst = self._find(instance)
        if inst.status in (lifecycle.RUNNING, lifecycle.STARTING):
            return inst
        if inst.attach_type == ATTACH_BRIDGE:
            raise OrchestratorError(f"instance {inst.id} is an attached bridge: start it where it runs",
                                    code="instance_attached", status=409)
        return self.restart_instance(instance)

    def metrics(self) -> list[dict[str, Any]]:
        """Per instance: its processes (bridge and browser), their memory, uptime and restarts."""
        with self._lock:
            items = [(i, i.child) for i in self.instances.values()]
        groups: dict[int, list[int]] = {}
        for p in procfs.processes():
            if not p.zombie:
                groups.setdefault(p.pgid, []).append(p.pid)
        now = time.monotonic()
        out = []
        for inst, child in items:
            pids = groups.get(child.pgid, []) if child is not None else []
            out.append({"id": inst.id, "status": inst.status, "pid": child.pid if child is not None else None,
                        "processes": len(pids), "rssBytes": sum(procfs.rss_bytes(p) for p in pids),
                        "uptimeSec": round(now - inst.running_since, 1) if inst.running_since is not None else 0,
                        "restarts": inst.restarts, "attached": inst.attached})
        return out

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

    def _release_ports(self, inst: Instance) -> None:
        """Under the lock: give back the instance's ports."""
        if inst.attach_type == ATTACH_BRIDGE:
            return  # its port is its own host's, never one of ours
        self.ports.release(inst.port)
        if inst.extension_port is not None:
            self.ports.release(inst.extension_port)

    def _pairing_token(self) -> str:
        """The server's extension pairing token (created on first use): the one `pinchtab extension
        pair` prints with the server's config, so the person pairs the extension once per server."""
        return pairing.load_or_create(self.config.server.state_dir)

    # --- children ----------------------------------------------------------------------------------
    def _launch(self, inst: Instance, name: str) -> None:
        """Spawn a just-registered attached instance; if that fails, forget it and say why."""
        try:
            self.spawn(inst)
        except Exception as exc:
            self._abandon(inst)
            raise OrchestratorError(f"could not start the bridge for {name!r}: {exc}", code="launch_failed") from None

    def spawn(self, inst: Instance) -> None:
        """Write the instance's config and start its ``pinchtab bridge``; health is polled in a thread."""
        state_dir = self._state_dir(inst)
        ensure_private_dir(state_dir)
        self._share_activity(state_dir)
        config_path = state_dir / "config.json"
        write_bytes_atomic(config_path, json.dumps(self.child_config(inst, state_dir), indent=2).encode())
        env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP_PREFIXES) and k not in _ENV_DROP}
        env.update({"PINCHTAB_CONFIG": str(config_path), "PINCHTAB_TOKEN": inst.token, "PYTHONUNBUFFERED": "1",
                    "PINCHTAB_INSTANCE_ID": inst.id})  # its activity lines name the instance
        argv = [sys.executable, "-m", "app.clients.cli", "bridge"]
        if inst.extension:
            # The bridge reads its pairing token from its state dir: give it the server's.
            write_bytes_atomic(pairing.token_path(state_dir), (self._pairing_token() + "\n").encode())
            argv += ["--extension", "--extension-port", str(inst.extension_port)]
        logs = inst.logs
        logs.add(f"--- pinchtab bridge on port {inst.port} ({time.strftime('%Y-%m-%d %H:%M:%S')}) ---")
        child = Child(inst.id, argv, env, _PACKAGE_ROOT, logs, self.pid_dir)
        with self._lock:
            if inst.status != lifecycle.STARTING:
                # Stopped while we were spawning: the stopper saw no child, so we end this one.
                orphan = child
            else:
                orphan = None
                inst.child = child
                self._changed()
        if orphan is not None:
            orphan.signal(signal.SIGKILL)
            orphan.wait(KILL_WAIT_S)
            orphan.finish()
            return
        log.info("instance %s: bridge pid %d on port %d", inst.id, child.pid, inst.port)
        threading.Thread(target=self._await_ready, args=(inst, child), name=f"health:{inst.id}", daemon=True).start()

    def _share_activity(self, state_dir: Path) -> None:
        """Point the instance's activity dir at the server's: one log of every browser call, each
        line under the profile that made it, for ``/api/activity`` and the profile analytics."""
        if not self.config.observability.activity.enabled:
            return
        ensure_private_dir(self.config.server.state_dir / "activity")
        shared = ensure_private_dir(activity.server_dir(self.config.server.state_dir))
        link = state_dir / "activity"
        if link.is_symlink() and os.readlink(link) == str(shared):
            return
        if link.is_symlink():
            link.unlink()
        elif link.exists():
            log.warning("%s is a directory of its own; that instance's activity stays there", link)
            return
        link.symlink_to(shared, target_is_directory=True)

    def _state_dir(self, inst: Instance) -> Path:
        # Per profile, so a profile's screenshots and activity outlive one instance id.
        if inst.extension:
            return self.instances_dir / f"extension-{inst.profile_name}"
        return self.instances_dir / (f"attached-{inst.profile_name}" if inst.attached else inst.profile_name)

    def child_config(self, inst: Instance, state_dir: Path) -> dict[str, Any]:
        """The child's config file: ours, with its port, profile, mode and state dir; no token."""
        data = copy.deepcopy(self._base)
        data["server"].update(port=inst.port, bind="127.0.0.1", token="", stateDir=str(state_dir))
        data["instanceDefaults"].update(mode=inst.mode, profile="" if inst.attached else inst.profile_name)
        data["browser"]["cdpUrl"] = inst.cdp_url if inst.attached else ""
        if inst.allowed_domains:  # the start request's additions, for this instance alone
            base = data["security"]["allowedDomains"]
            data["security"]["allowedDomains"] = base + [d for d in inst.allowed_domains if d not in base]
        return data

    def _await_ready(self, inst: Instance, child: Child) -> None:
        """Poll the child's /health until it is ok (running) or the deadline passes (error).

        An extension instance then goes on watching whether the extension is connected.
        """
        deadline = time.monotonic() + HEALTH_TIMEOUT_S
        while time.monotonic() < deadline and not self._halting.is_set():
            if inst.child is not child or inst.status != lifecycle.STARTING or child.exit_code() is not None:
                return  # stopped, restarted, or exited (reap reports that)
            if self._healthy(inst):
                with self._lock:
                    if inst.child is not child or inst.status != lifecycle.STARTING:
                        return
                    inst.status = lifecycle.RUNNING
                    inst.error = ""
                    inst.running_since = time.monotonic()
                    self._changed()
                self._publish(lifecycle.ATTACHED if inst.attached else lifecycle.STARTED, inst)
                if inst.extension:
                    self._watch_extension(inst, child)
                return
            self._halting.wait(HEALTH_INTERVAL_S)
        if self._halting.is_set():
            return
        with self._lock:
            if inst.child is not child or inst.status != lifecycle.STARTING:
                return
            self._fail(inst, f"no healthy answer on /health within {HEALTH_TIMEOUT_S:.0f} s")
        child.signal(signal.SIGKILL)  # hung: nothing polite would reach it; reap() finishes it

    def _healthy(self, inst: Instance) -> bool:
        """Whether the bridge is up: /health ok; for an extension instance, also its 503 while it
        waits for the extension (the bridge works, the person has not connected Chrome yet)."""
        try:
            resp = self._http.get(f"{inst.url}/health", timeout=1.0)
            body = resp.json()
        except (requests.RequestException, ValueError):
            return False
        if resp.status_code == 200 and isinstance(body, dict) and body.get("status") == "ok":
            return True
        return inst.extension and resp.status_code == 503 and self._extension_info(inst) is not None

    def _extension_info(self, inst: Instance) -> dict[str, Any] | None:
        """The bridge's ``GET /extension/info`` on the extension's port (public), or None."""
        try:
            info = self._http.get(f"{inst.extension_url}/extension/info", timeout=1.0).json()
        except (requests.RequestException, ValueError):
            return None
        return info if isinstance(info, dict) and info.get("pinchtab") is True else None

    def _watch_extension(self, inst: Instance, child: Child) -> None:
        """While the bridge runs, keep ``extensionConnected`` as the bridge says (a change wakes the
        worker's mirror, the dashboard and waiting clients)."""
        while not self._halting.is_set():
            if inst.child is not child or inst.status != lifecycle.RUNNING or child.exit_code() is not None:
                return
            info = self._extension_info(inst)
            connected = bool(info and info.get("connected"))
            with self._lock:
                if inst.child is not child or inst.status != lifecycle.RUNNING:
                    return
                if connected != inst.extension_connected:
                    inst.extension_connected = connected
                    self._changed()
                    log.info("instance %s: extension %s", inst.id, "connected" if connected else "disconnected")
            self._halting.wait(EXTENSION_POLL_S)

    def _fail(self, inst: Instance, reason: str) -> None:
        """Under the lock: mark the instance failed, with its last log lines, and plan a restart."""
        tail = [line for line in inst.logs.tail(LOG_TAIL_IN_ERRORS) if line.strip()]
        inst.status = lifecycle.ERROR
        inst.error = reason + (": " + " | ".join(tail) if tail else "")
        up_for = time.monotonic() - inst.running_since if inst.running_since is not None else None
        inst.running_since = None
        inst.extension_connected = False
        inst.restarts, delay = self.backoff.next_delay(inst.restarts, up_for)
        if self.config.multi_instance.strategy not in lifecycle.AUTO_RESTART:
            inst.error += f" (not restarted: multiInstance.strategy {self.config.multi_instance.strategy!r})"
            inst.restart_at = None
        elif delay is None:
            inst.error += f" (gave up after {inst.restarts} restarts: multiInstance.restart.maxRestarts)"
            inst.restart_at = None
        else:
            inst.restart_at = time.monotonic() + delay
            log.warning("instance %s: %s; restart %d in %.0f s", inst.id, reason, inst.restarts, delay)
        self._changed()
        self._publish(lifecycle.ERRORED, inst)

    def reap(self) -> None:
        """Notice children that exited; a crash of a starting or running instance is an error."""
        with self._lock:
            candidates = [i for i in self.instances.values()
                          if i.child is not None and i.status != lifecycle.STOPPING]
        for inst in candidates:
            child = inst.child
            if child is None or child.exit_code() is None:
                continue
            child.finish()
            with self._lock:
                if inst.child is not child or inst.status == lifecycle.STOPPING:
                    continue
                inst.child = None
                if inst.status in (lifecycle.STARTING, lifecycle.RUNNING):
                    self._fail(inst, f"bridge {child.describe_exit()}")
                else:
                    self._changed()

    def reap_adopted(self) -> None:
        """Reap the orphans of our bridges that the kernel handed to us (we are their subreaper)."""
        with self._lock:
            ours = {i.child.pid for i in self.instances.values() if i.child is not None}
        reap_adopted(ours)

    def restart_due(self) -> None:
        """Respawn crashed instances whose backoff has passed."""
        now = time.monotonic()
        with self._lock:
            due = [i for i in self.instances.values()
                   if i.status == lifecycle.ERROR and i.restart_at is not None and i.restart_at <= now
                   and i.child is None]
            for inst in due:
                inst.restart_at = None
                self._prepare_respawn(inst)
        for inst in due:
            log.info("instance %s: restarting (attempt %d)", inst.id, inst.restarts)
            self._respawn(inst)

    def _prepare_respawn(self, inst: Instance) -> None:
        """Under the lock: back to starting, on the same port unless someone else took it."""
        if not self.ports.check(inst.port):
            self.ports.release(inst.port)
            inst.port = self.ports.allocate()
        if inst.extension_port is not None and not self.ports.check(inst.extension_port):
            # Someone took it meanwhile: a new one (the record's extensionUrl says which).
            self.ports.release(inst.extension_port)
            inst.extension_port = self.ports.allocate()
        inst.extension_connected = False
        inst.status = lifecycle.STARTING
        inst.error = ""  # the crash is in the error event and the logs; this is a fresh start
        inst.start_time = time.time()
        self._changed()

    def _respawn(self, inst: Instance) -> None:
        try:
            self.spawn(inst)
        except Exception as exc:
            log.exception("instance %s: respawn failed", inst.id)
            with self._lock:
                if inst.status == lifecycle.STARTING and inst.child is None:
                    self._fail(inst, f"could not start the bridge: {exc}")

    # --- stopping ----------------------------------------------------------------------------------
    def stop_instance(self, instance: str) -> dict[str, Any]:
        """Stop an instance for good and forget it; ``{"status": "stopped", "id"}``."""
        inst = self._begin_stop(instance)
        if inst.attach_type == ATTACH_BRIDGE:
            self._shutdown_request(inst)  # not our process: asked to stop, never signalled
        self.kill(inst, inst.child)
        with self._lock:
            inst.child = None
            inst.status = lifecycle.STOPPED
            inst.extension_connected = False
            self.instances.pop(inst.id, None)
            self._release_ports(inst)
            if self.default_id == inst.id:
                self.default_id = None
            self._changed()
        if inst.temporary:
            self._drop_temporary(inst)
        self._publish(lifecycle.STOPPED_EVENT, inst)
        return {"status": "stopped", "id": inst.id}

    def restart_instance(self, instance: str) -> Instance:
        """Stop the instance's bridge and start a fresh one (same id, profile and port)."""
        inst = self._begin_stop(instance)
        self.kill(inst, inst.child)
        self._publish(lifecycle.STOPPED_EVENT, inst, status=lifecycle.STOPPED)
        with self._lock:
            inst.child = None
            inst.restarts = 0
            inst.error = ""
            self._prepare_respawn(inst)
        self._respawn(inst)
        return inst

    def _begin_stop(self, instance: str) -> Instance:
        with self._lock:
            inst = self._find(instance)
            if inst.status == lifecycle.STOPPING:
                raise OrchestratorError(f"instance {inst.id} is already stopping", code="instance_stopping", status=409)
            inst.status = lifecycle.STOPPING
            inst.restart_at = None
            self._changed()
            return inst

    def kill(self, inst: Instance, child: Child | None) -> None:
        """The stop sequence: POST /shutdown, then SIGTERM to the group, then SIGKILL, each bounded.

        An attached instance's browser is not in the group, so it is never killed.
        """
        if child is None:
            return
        try:
            if child.exit_code() is None:
                try:
                    self._http.post(f"{inst.url}/shutdown", headers={"Authorization": f"Bearer {inst.token}"},
                                    timeout=SHUTDOWN_REQUEST_S)
                except requests.RequestException:
                    pass  # not answering: the signals follow
                if child.wait(SHUTDOWN_WAIT_S):
                    return
            for sig, wait_s in ((signal.SIGTERM, TERM_WAIT_S), (signal.SIGKILL, KILL_WAIT_S)):
                if child.exit_code() is not None:
                    return
                log.warning("instance %s: sending %s to the bridge", inst.id, signal.Signals(sig).name)
                child.signal(sig)
                if child.wait(wait_s):
                    return
            log.error("instance %s: failed to stop process %d; still running", inst.id, child.pid)
        finally:
            child.finish()

    def _shutdown_request(self, inst: Instance) -> None:
        try:
            self._http.post(f"{inst.url}/shutdown", headers={"Authorization": f"Bearer {inst.token}"},
                            timeout=SHUTDOWN_REQUEST_S)
        except requests.RequestException:
            pass  # gone already, or not answering: either way it is no longer ours

    def _drop_temporary(self, inst: Instance) -> None:
        """Delete a temporary instance's profile and state dir (it was made for this instance only)."""
        try:
            self._profiles().delete(inst.profile_name)
        except profile_errors.ProfileNotFound:
            pass
        except profile_errors.ProfileError as exc:
            log.warning("instance %s: could not delete temporary profile %s: %s", inst.id, inst.profile_name, exc)
        shutil.rmtree(self._state_dir(inst), ignore_errors=True)


def _allowed_domains(args: dict[str, Any]) -> tuple[str, ...]:
    """A start request's ``securityPolicy.allowedDomains`` (hosts: non-empty, no white space)."""
    policy = args.get("securityPolicy") or {}
    domains = (policy.get("allowedDomains") or []) if isinstance(policy, dict) else None
    if not isinstance(domains, list) or not all(isinstance(d, str) and d.strip() and not any(c.isspace() for c in d)
                                                for d in domains):
        raise BadManagerRequest("securityPolicy.allowedDomains must be a list of hosts",
                                details={"field": "securityPolicy.allowedDomains"})
    return tuple(domains)


def _made_name(attach_type: str) -> str:
    """A name for an attach that did not give one (names key state dirs and re-attaches)."""
    return f"{attach_type}-{secrets.token_hex(4)}"


def _check_name(name: str) -> None:
    """An attached instance's name: it names its state dir too."""
    if not name or len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
        raise BadManagerRequest("name must be 1-64 letters, digits, '-', '_' or '.'", details={"field": "name"})


def _int_or_none(value: Any) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise BadManagerRequest("expected an integer")
    return value


def _wait_s(args: dict[str, Any]) -> float:
    value = args.get("waitS") or 0
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise BadManagerRequest("waitS must be a number")
    return max(0.0, min(float(value), MAX_WAIT_S))


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here: the loop polls getppid instead
        return None


class ControlServer:
    """The manager's Unix socket: accepts connections and serves JSON-line requests on each."""

    def __init__(self, path: Path, handler: Any) -> None:
        self.path = path
        self.handler = handler
        self._sock: socket.socket | None = None
        self._stopped = threading.Event()

    def start(self) -> None:
        """Bind the socket (0600, in the 0700 runtime dir) and start accepting."""
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()  # a dead manager's socket; the manager lock proves it is dead
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        with unix_address(self.path) as address:
            sock.bind(address)
        os.chmod(self.path, 0o600)
        sock.listen(64)
        sock.settimeout(0.5)  # so the accept loop sees a stop within half a second
        self._sock = sock
        threading.Thread(target=self._accept_loop, name="manager-accept", daemon=True).start()

    def stop(self) -> None:
        """Stop accepting and remove the socket; connections in flight end at their deadlines."""
        self._stopped.set()
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
        with contextlib.suppress(FileNotFoundError):
            self.path.unlink()

    def _accept_loop(self) -> None:
        assert self._sock is not None
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopped.is_set():
                    return
                continue
            if not _same_user(conn):
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), name="manager-conn", daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        chan = LineChannel(conn)
        try:
            while not self._stopped.is_set():
                try:
                    req = chan.receive(CONN_IDLE_S)
                except (TimeoutError, ProtocolError, OSError):
                    return
                if req is None:
                    return
                chan.send(self.dispatch(req), 10.0)
        except OSError:
            pass  # the caller went away (its deadline passed); nothing to answer
        finally:
            chan.close()

    def dispatch(self, req: Any) -> dict[str, Any]:
        """One request to one answer; never raises."""
        try:
            if not isinstance(req, dict) or req.get("op") not in OPS or not isinstance(req.get("args", {}), dict):
                raise BadManagerRequest(f"expected {{\"op\": one of {', '.join(OPS)}, \"args\": {{...}}}}")
            return {"ok": True, "result": self.handler(req["op"], req.get("args") or {})}
        except APIError as exc:
            return {"ok": False, "error": to_wire(exc)}
        except Exception as exc:
            log.exception("manager request %r failed", req.get("op") if isinstance(req, dict) else req)
            return {"ok": False, "error": {"status": 500, "code": "internal", "message": f"internal error: {exc}"}}


def _same_user(conn: socket.socket) -> bool:
    # The 0700 dir already keeps others out; the peer's uid is a second, cheap check.
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except OSError:
        return True
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.getuid()


def main(argv: list[str] | None = None) -> int:
    """Run the manager of one server; its exit status."""
    parser = argparse.ArgumentParser(prog="python -m app.orchestrator.manager",
                                     description="The instance manager of `pinchtab server` (started by it).")
    parser.add_argument("--config", required=True, help="the server's config file (JSON, no token)")
    parser.add_argument("--parent", type=int, required=True, help="exit when this process is gone")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = load_config(env={"PINCHTAB_CONFIG": args.config, "HOME": os.environ.get("HOME", "")})
    try:
        return Manager(config, args.parent).run()
    except HaltManager as halt:  # refused to start (another manager holds the state dir)
        log.error("%s", halt.reason)
        return halt.exit_status


if __name__ == "__main__":
    sys.exit(main())
