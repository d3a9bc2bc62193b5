"""``python -m app.orchestrator.manager``: the process that owns every instance of a server.

Started by the gunicorn master's ``on_starting`` hook as a fresh interpreter in its own session,
and stopped by ``on_exit``. Why a process of its own: gunicorn's master reaps every child with
``waitpid(-1)`` (a bridge started there would lose its exit status) and forks again for every new
worker (a thread there could deadlock the fork); a worker restarts whenever gunicorn likes.

The manager allocates ports, writes each child's config, spawns ``pinchtab bridge`` children
(on a profile, attached to a CDP URL, or ``--extension`` for a person's own Chrome), polls their
``/health`` until running or error, restarts crashed ones with backoff, stops them
(``POST /shutdown``, then SIGTERM to the group, then SIGKILL, each under a deadline), and
publishes lifecycle events. The worker talks to it over a Unix socket. It cleans up after a
crashed earlier run (pidfiles) at start, and exits when its parent is gone.

Its rooms: this module keeps the table of instances (under one lock; every change bumps a
generation the worker's mirror long-polls on) and the requests on it; :mod:`.supervisor` runs the
main loop (signals, the parent watch, reaping, restarts with backoff); :mod:`.launch` starts
bridges and polls their health (:mod:`.launch.local`) and attaches to browsers the server did not
start (:mod:`.launch.attach`); :mod:`.control` declares the socket's operations and serves them.

Threads: the main thread runs :meth:`~.supervisor.Supervisor.manage`; one thread accepts socket
connections, one reads each, one answers each request; one thread per starting instance polls its
health (an extension instance's goes on watching its extension); one per child reads its output.
"""
from __future__ import annotations

import argparse
import fcntl
import logging
import os
import shutil
import signal
import sys
import threading
import time
from typing import Any

import requests

from cdp.launcher import seed_throwaway_profile
from profiles import ProfileStore
from profiles import errors as profile_errors
from profiles.names import profile_id as profile_id_of

from ..config import Config, load_config
from ..process.signals import SignalQueue
from ..web.errors import APIError
from . import control, procfs
from . import instances as lifecycle
from .children import become_subreaper, clean_orphans
from .control import ControlServer
from .errors import (
    BadManagerRequest,
    HaltManager,
    InstanceNotFound,
    ManagerUnavailable,
    OrchestratorError,
    ProfileInUse,
    ProfileNotFound,
)
from .instances import ATTACH_BRIDGE, Backoff, EventRing, Instance, instance_id
from .launch import Launcher
from .launch.attach import Attaching
from .launch.fleet import Fleet
from .launch.local import LocalLauncher
from .ports import PortAllocator
from .protocol import SOCKET_NAME, ensure_private_dir, runtime_dir
from .supervisor import Supervisor, pidfd

log = logging.getLogger(__name__)

STOP_ALL_S = 20.0  # every instance, in parallel, when the manager stops


class Manager(Supervisor, Attaching):
    """Owns every instance of one server: its table, and the requests that start, stop and list them."""

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
        self.signals = SignalQueue((signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGCHLD))
        self.http = requests.Session()
        self.launcher: Launcher = LocalLauncher(self)
        self.fleet = Fleet(self)
        self._store: ProfileStore | None = None
        self._server: ControlServer | None = None
        self._lock_fd: int | None = None
        self._parent_fd: int | None = None

    # --- the process's life: start and stop (run and manage are the supervisor's) ------------------
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
        self.signals.install()  # handlers only queue; manage() does the work
        self._parent_fd = pidfd(self.parent_pid)
        self._server = ControlServer(self.run_dir / SOCKET_NAME, self.handle)
        self._server.start()
        self.fleet.start()
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

    def stop(self) -> None:
        """Stop every instance (in parallel, bounded), close the socket, release the runtime dir."""
        self._halting.set()
        self.fleet.stop()
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
        self.http.close()

    def _stop_quietly(self, inst: Instance) -> None:
        try:
            self.stop_instance(inst.id)
        except Exception:  # one instance failing to stop must not keep the others running
            log.exception("instance %s: stop failed", inst.id)

    # --- requests from the worker (the control table runs them, one thread each) -------------------
    def handle(self, op: str, args: dict[str, Any]) -> Any:
        """Run one checked socket request (:data:`.control.OPS`); raises APIError subclasses for refusals."""
        return control.run(self, op, args)

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

    def find(self, instance: str) -> Instance:
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

    # --- launching on a profile ----------------------------------------------------------------------
    def launch(self, profile_id: str | None = None, mode: str | None = None, port: int | None = None,
               default: bool = False, create_profile: bool = False,
               allowed_domains: tuple[str, ...] = (), owner_agent: str = "", provider: str = "",
               wait_s: float = 0.0) -> Instance:
        """Start an instance on a profile (a temporary one without ``profile_id``); returns it starting.
        ``allowed_domains`` are added to security.allowedDomains for this instance alone;
        ``owner_agent`` is the agent whose session asked for it (kept across restarts). ``provider``
        names the ``browsers.providers`` entry (else :meth:`.launch.fleet.Fleet.place` chooses);
        ``wait_s``: how long to wait for room when every provider is full.

        Raises ProfileNotFound, ProfileInUse (another instance or process runs the profile) and
        PortUnavailable.
        """
        if self._halting.is_set():
            raise ManagerUnavailable("the instance manager is stopping")
        mode = mode or self.config.instance_defaults.mode
        if mode not in ("headless", "headed"):
            raise BadManagerRequest("mode must be 'headless' or 'headed'", details={"field": "mode"})
        where, lease = self.fleet.place(provider, wait_s)
        if lease is not None:
            try:
                return self._launch_remote(where, lease, mode, port, allowed_domains, owner_agent, profile_id)
            except BaseException:
                lease.release()
                raise
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
            self.fleet.hold(inst, where, None)
            self.instances[inst.id] = inst
            if default:
                self.default_id = inst.id
            self._changed()
        try:
            if temporary:
                made = self._profiles().create(name,
                                               description="temporary profile of one instance; deleted when it stops")
                seed_throwaway_profile(made["path"])  # nobody's but this instance's (cdp/launcher.py says why)
            self.launcher.spawn(inst)
        except Exception as exc:
            self._abandon(inst)
            if isinstance(exc, APIError):
                raise
            if isinstance(exc, profile_errors.ProfileError):
                raise OrchestratorError(str(exc), code="profile_error", status=409) from None
            log.exception("instance %s: launch failed", inst.id)
            raise OrchestratorError(f"could not launch the instance: {exc}", code="launch_failed") from None
        return inst

    def _launch_remote(self, where: Any, lease: Any, mode: str, port: int | None,
                       allowed_domains: tuple[str, ...], owner_agent: str, profile_id: str | None) -> Instance:
        """An instance whose browser a provider leased: a bridge here, attached to it."""
        if profile_id:
            raise BadManagerRequest(f"profiles are folders on this machine; provider {where.name!r} runs its "
                                    "browsers elsewhere (start without a profile, or on a local provider)",
                                    details={"field": "profileId"})
        with self._lock:
            name = f"{where.name}-{int(time.time() * 1000)}"
            while any(i.profile_name == name for i in self.instances.values()):
                name += "x"
            port = self.ports.reserve(port) if port else self.ports.allocate()
            started = time.time()
            inst = Instance(id=instance_id(profile_id_of(name), name, started), profile_id=profile_id_of(name),
                            profile_name=name, port=port, mode=mode, start_time=started,
                            allowed_domains=allowed_domains, owner_agent=owner_agent)
            self.fleet.hold(inst, where, lease)
            self.instances[inst.id] = inst
            self._changed()
        try:
            self.launcher.spawn(inst)
        except Exception as exc:
            self._abandon(inst)
            if isinstance(exc, APIError):
                raise
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
        self.fleet.release(inst)
        with self._lock:
            self.instances.pop(inst.id, None)
            self._release_ports(inst)
            if self.default_id == inst.id:
                self.default_id = None
            inst.status = lifecycle.STOPPED
            self._changed()
        if inst.temporary:
            self._drop_temporary(inst)

    def start_instance(self, instance: str) -> Instance:
        """Start an instance that is not running (failed, or given up on); one that runs or is
        starting is left as it is."""
        inst = self.find(instance)
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

    def _release_ports(self, inst: Instance) -> None:
        """Under the lock: give back the instance's ports."""
        if inst.attach_type == ATTACH_BRIDGE:
            return  # its port is its own host's, never one of ours
        self.ports.release(inst.port)
        if inst.extension_port is not None:
            self.ports.release(inst.extension_port)

    # --- stopping ----------------------------------------------------------------------------------
    def stop_instance(self, instance: str) -> dict[str, Any]:
        """Stop an instance for good and forget it; ``{"status": "stopped", "id"}``."""
        inst = self._begin_stop(instance)
        if inst.attach_type == ATTACH_BRIDGE:
            self.launcher.ask_shutdown(inst)  # not our process: asked to stop, never signalled
        self.launcher.kill(inst, inst.child)
        self.fleet.release(inst)  # the browser goes back to its engine once its bridge is gone
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
        self.launcher.kill(inst, inst.child)
        self._publish(lifecycle.STOPPED_EVENT, inst, status=lifecycle.STOPPED)
        if self.fleet.remote(inst):
            try:
                self.fleet.replace(inst)  # a fresh browser, on another provider when its own is down
            except APIError as exc:
                with self._lock:
                    inst.child = None
                    inst.status = lifecycle.LOST
                    inst.error = f"could not place it again: {exc.message}"
                    self._changed()
                raise
        with self._lock:
            inst.child = None
            inst.restarts = 0
            inst.error = ""
            self._prepare_respawn(inst)
        self._respawn(inst)
        return inst

    def _begin_stop(self, instance: str) -> Instance:
        with self._lock:
            inst = self.find(instance)
            if inst.status == lifecycle.STOPPING:
                raise OrchestratorError(f"instance {inst.id} is already stopping", code="instance_stopping", status=409)
            inst.status = lifecycle.STOPPING
            inst.restart_at = None
            self._changed()
            return inst

    def _drop_temporary(self, inst: Instance) -> None:
        """Delete a temporary instance's profile and state dir (it was made for this instance only)."""
        try:
            self._profiles().delete(inst.profile_name)
        except profile_errors.ProfileNotFound:
            pass
        except profile_errors.ProfileError as exc:
            log.warning("instance %s: could not delete temporary profile %s: %s", inst.id, inst.profile_name, exc)
        shutil.rmtree(self.launcher.state_dir(inst), ignore_errors=True)


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

