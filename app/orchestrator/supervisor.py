"""Supervising the instances: the manager's main loop, its signals, reaping and restarts.

As in gunicorn's arbiter, a signal handler only queues the signal (:mod:`app.process.signals`);
the main thread's loop (:meth:`Supervisor.manage`) wakes for it, for the parent's exit (a pidfd),
or every tick, and does the work: SIGTERM, SIGINT or SIGHUP stops the manager, SIGCHLD reaps the
orphans of our bridges that the kernel handed to us (we are their subreaper), and every tick
notices children that exited. A crash of a starting or running instance makes it ``error`` with
its last log lines, and the restart policy (``multiInstance.strategy`` and
``multiInstance.restart``: exponential backoff, a cap, forgiven after a stable run) plans its
respawn on the same port, which a later tick carries out.

:class:`Supervisor` is a part of :class:`~app.orchestrator.manager.Manager`, on its table, lock,
launcher and events (``_changed``, ``_publish``).
"""
from __future__ import annotations

import logging
import os
import select
import signal
import time
from typing import TYPE_CHECKING

from . import instances as lifecycle
from .children import reap_adopted
from .errors import HaltManager
from .instances import Backoff, Instance

if TYPE_CHECKING:
    import threading

    from ..config import Config
    from ..process.signals import SignalQueue
    from .launch import Launcher
    from .ports import PortAllocator

log = logging.getLogger(__name__)

TICK_S = 0.25
LOG_TAIL_IN_ERRORS = 5


class Supervisor:
    """The manager's loop and restart policy (a part of :class:`~app.orchestrator.manager.Manager`,
    whose ``start``, ``stop``, ``_changed`` and ``_publish`` it uses beside the attributes here)."""

    config: Config
    parent_pid: int
    instances: dict[str, Instance]
    ports: PortAllocator
    backoff: Backoff
    launcher: Launcher
    signals: SignalQueue
    _parent_fd: int | None
    _lock: threading.RLock

    if TYPE_CHECKING:  # the manager's own (see the class's docstring)
        def start(self) -> None: ...
        def stop(self) -> None: ...
        def _changed(self) -> None: ...
        def _publish(self, event_type: str, inst: Instance, status: str | None = None) -> None: ...

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

    def manage(self) -> None:
        """The main loop: signals, the parent watch, reaping and restarts, every tick or sooner."""
        parent = [self._parent_fd] if self._parent_fd is not None else []
        while True:
            self.signals.wait(TICK_S, parent)
            adopted_exit = False
            while (sig := self.signals.pop()) is not None:
                if sig != signal.SIGCHLD:
                    raise HaltManager(f"received {signal.Signals(sig).name}")
                adopted_exit = True
            if adopted_exit:
                self.reap_adopted()
            if self._parent_gone():
                raise HaltManager(f"parent process {self.parent_pid} is gone")
            self.reap()
            self.restart_due()

    def _parent_gone(self) -> bool:
        if self._parent_fd is not None:
            ready, _, _ = select.select([self._parent_fd], [], [], 0)
            return bool(ready)
        return os.getppid() != self.parent_pid

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
            self.launcher.spawn(inst)
        except Exception as exc:
            log.exception("instance %s: respawn failed", inst.id)
            with self._lock:
                if inst.status == lifecycle.STARTING and inst.child is None:
                    self._fail(inst, f"could not start the bridge: {exc}")


def pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):  # no pidfd here: the loop polls getppid instead
        return None
