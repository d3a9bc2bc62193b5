"""Launching on this machine: a ``pinchtab bridge`` child per instance, and its health polled.

:class:`LocalLauncher` is the one :class:`~app.orchestrator.launch.Launcher` today. For an instance
the manager has registered (status ``starting``) it writes the child's config (the server's own,
with the instance's port, profile, mode and state dir; never a token), links the state dir's
activity and saved-state folders to the server's (one of each for every instance), starts ``python -m
app.clients.cli bridge`` in a session of its own, and polls the child's ``/health`` on a thread
until it answers (``running``, and an ``instance.started`` or ``instance.attached`` event) or the
deadline passes (``error``, and the restart policy takes over). An extension instance then goes on
watching whether the extension is connected. It also knows the stop sequence of its children:
``POST /shutdown``, then SIGTERM to the group, then SIGKILL, each under a deadline.

The manager's table and lock stay the manager's: the launcher changes an instance under
``manager._lock`` and tells of it with ``manager._changed()`` and ``manager._publish()``.
"""
from __future__ import annotations

import copy
import json
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import requests

from profiles.atomic import write_bytes_atomic

from ...extension import pairing
from ...web import activity
from ...web.files import SAVED_STATES
from ...web.pools import close_pool_to
from .. import instances as lifecycle
from ..children import Child
from ..instances import Instance
from ..protocol import ensure_private_dir
from . import Host, start_thread

log = logging.getLogger(__name__)

HEALTH_INTERVAL_S = 0.25
HEALTH_TIMEOUT_S = 45.0
EXTENSION_POLL_S = 0.5  # how often a running extension instance is asked whether the extension is there
SHUTDOWN_REQUEST_S = 4.0  # POST /shutdown
SHUTDOWN_WAIT_S = 5.0  # then the process has this long to exit
TERM_WAIT_S = 3.0
KILL_WAIT_S = 2.0
# Where the app package lives, so ``python -m app.clients.cli`` works whatever directory we started in.
_PACKAGE_ROOT = str(Path(str(__import__("app").__file__)).resolve().parents[1])
# The child gets its settings from its config file and its token from us, never from our env.
_ENV_DROP_PREFIXES = ("PINCHTAB_", "BRIDGE_")
_ENV_DROP = ("CDP_URL",)


class LocalLauncher:
    """Bridge children on this machine, for the manager ``m``."""

    def __init__(self, m: Host) -> None:
        self.m = m
        self.http = m.http  # the manager's session: health polls and stop requests reuse its connections
        self._base = m.config.to_dict()

    def pairing_token(self) -> str:
        """The server's extension pairing token (created on first use): the one `pinchtab extension
        pair` prints with the server's config, so the person pairs the extension once per server."""
        return pairing.load_or_create(self.m.config.server.state_dir)

    def spawn(self, inst: Instance) -> None:
        """Write the instance's config and start its ``pinchtab bridge``; health is polled in a thread."""
        state_dir = self.state_dir(inst)
        ensure_private_dir(state_dir)
        self._share_activity(state_dir)
        self._share_states(state_dir)
        config_path = state_dir / "config.json"
        write_bytes_atomic(config_path, json.dumps(self.child_config(inst, state_dir), indent=2).encode())
        env = {k: v for k, v in os.environ.items() if not k.startswith(_ENV_DROP_PREFIXES) and k not in _ENV_DROP}
        env.update({"PINCHTAB_CONFIG": str(config_path), "PINCHTAB_TOKEN": inst.token, "PYTHONUNBUFFERED": "1",
                    "PINCHTAB_INSTANCE_ID": inst.id})  # its activity lines name the instance
        argv = [sys.executable, "-m", "app.clients.cli", "bridge"]
        if inst.extension:
            # The bridge reads its pairing token from its state dir: give it the server's.
            write_bytes_atomic(pairing.token_path(state_dir), (self.pairing_token() + "\n").encode())
            argv += ["--extension", "--extension-port", str(inst.extension_port)]
        logs = inst.logs
        logs.add(f"--- pinchtab bridge on port {inst.port} ({time.strftime('%Y-%m-%d %H:%M:%S')}) ---")
        child = Child(inst.id, argv, env, _PACKAGE_ROOT, logs, self.m.pid_dir)
        with self.m._lock:
            if inst.status != lifecycle.STARTING:
                # Stopped while we were spawning: the stopper saw no child, so we end this one.
                orphan = child
            else:
                orphan = None
                inst.child = child
                self.m._changed()
        if orphan is not None:
            orphan.signal(signal.SIGKILL)
            orphan.wait(KILL_WAIT_S)
            orphan.finish()
            return
        log.info("instance %s: bridge pid %d on port %d", inst.id, child.pid, inst.port)
        start_thread(self._await_ready, (inst, child), f"health:{inst.id}")

    def _share_activity(self, state_dir: Path) -> None:
        """Point the instance's activity dir at the server's: one log of every browser call, each
        line under the profile that made it, for ``/api/activity`` and the profile analytics."""
        if not self.m.config.observability.activity.enabled:
            return
        ensure_private_dir(self.m.config.server.state_dir / "activity")
        shared = ensure_private_dir(activity.server_dir(self.m.config.server.state_dir))
        _link(state_dir / "activity", shared, "activity")

    def _share_states(self, state_dir: Path) -> None:
        """Point the instance's saved-state folder at the server's: a state saved on one instance
        loads on any other, one on a remote browser too (``POST /instances/start {"state"}``).

        States an instance saved in a folder of its own (before the server shared them) move to the
        server's, unless the server has one of the same name."""
        shared = ensure_private_dir(self.m.config.server.state_dir / SAVED_STATES)
        own = state_dir / SAVED_STATES
        if own.is_dir() and not own.is_symlink():
            for path in own.iterdir():
                if path.is_file() and not path.is_symlink() and not (shared / path.name).exists():
                    path.replace(shared / path.name)
            if not any(own.iterdir()):
                own.rmdir()
        _link(own, shared, "saved states")

    def state_dir(self, inst: Instance) -> Path:
        # Per profile, so a profile's screenshots and activity outlive one instance id.
        if inst.extension:
            return self.m.instances_dir / f"extension-{inst.profile_name}"
        return self.m.instances_dir / (f"attached-{inst.profile_name}" if inst.attached else inst.profile_name)

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
        while time.monotonic() < deadline and not self.m._halting.is_set():
            if inst.child is not child or inst.status != lifecycle.STARTING or child.exit_code() is not None:
                return  # stopped, restarted, or exited (reap reports that)
            if self.healthy(inst):
                with self.m._lock:
                    if inst.child is not child or inst.status != lifecycle.STARTING:
                        return
                    inst.status = lifecycle.RUNNING
                    inst.error = ""
                    inst.running_since = time.monotonic()
                    self.m._changed()
                self.m._publish(lifecycle.ATTACHED if inst.attached else lifecycle.STARTED, inst)
                if inst.extension:
                    self._watch_extension(inst, child)
                return
            self.m._halting.wait(HEALTH_INTERVAL_S)
        if self.m._halting.is_set():
            return
        with self.m._lock:
            if inst.child is not child or inst.status != lifecycle.STARTING:
                return
            self.m._fail(inst, f"no healthy answer on /health within {HEALTH_TIMEOUT_S:.0f} s")
        child.signal(signal.SIGKILL)  # hung: nothing polite would reach it; reap() finishes it

    def healthy(self, inst: Instance) -> bool:
        """Whether the bridge is up: /health ok; for an extension instance, also its 503 while it
        waits for the extension (the bridge works, the person has not connected Chrome yet)."""
        try:
            resp = self.http.get(f"{inst.url}/health", timeout=1.0)
            body = resp.json()
        except (requests.RequestException, ValueError):
            return False
        if resp.status_code == 200 and isinstance(body, dict) and body.get("status") == "ok":
            return True
        return inst.extension and resp.status_code == 503 and self._extension_info(inst) is not None

    def _extension_info(self, inst: Instance) -> dict[str, Any] | None:
        """The bridge's ``GET /extension/info`` on the extension's port (public), or None."""
        try:
            info = self.http.get(f"{inst.extension_url}/extension/info", timeout=1.0).json()
        except (requests.RequestException, ValueError):
            return None
        return info if isinstance(info, dict) and info.get("pinchtab") is True else None

    def _watch_extension(self, inst: Instance, child: Child) -> None:
        """While the bridge runs, keep ``extensionConnected`` as the bridge says (a change wakes the
        worker's mirror, the dashboard and waiting clients)."""
        while not self.m._halting.is_set():
            if inst.child is not child or inst.status != lifecycle.RUNNING or child.exit_code() is not None:
                return
            info = self._extension_info(inst)
            connected = bool(info and info.get("connected"))
            with self.m._lock:
                if inst.child is not child or inst.status != lifecycle.RUNNING:
                    return
                if connected != inst.extension_connected:
                    inst.extension_connected = connected
                    self.m._changed()
                    log.info("instance %s: extension %s", inst.id, "connected" if connected else "disconnected")
            self.m._halting.wait(EXTENSION_POLL_S)

    def kill(self, inst: Instance, child: Child | None) -> None:
        """The stop sequence: POST /shutdown, then SIGTERM to the group, then SIGKILL, each bounded.

        An attached instance's browser is not in the group, so it is never killed.
        """
        if child is None:
            return
        try:
            if child.exit_code() is None:
                self.ask_shutdown(inst)  # not answering: the signals follow
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

    def ask_shutdown(self, inst: Instance) -> None:
        """``POST /shutdown`` to the instance's bridge, bounded; no answer is an answer too (it is
        gone, or the signals that follow will reach it)."""
        # A stopping bridge waits (2 s) for each client that keeps a connection alive to it: ours go.
        close_pool_to(self.http.get_adapter(inst.url).poolmanager, inst.url)
        try:
            self.http.post(f"{inst.url}/shutdown", headers={"Authorization": f"Bearer {inst.token}",
                                                            "Connection": "close"}, timeout=SHUTDOWN_REQUEST_S)
        except requests.RequestException as exc:
            log.info("instance %s: no answer to POST /shutdown (%s)", inst.id, type(exc).__name__)


def _link(link: Path, shared: Path, what: str) -> None:
    """Make ``link`` a symlink to the server's folder ``shared``; a real directory there is left as
    it is (with a warning: that instance's ``what`` stays its own)."""
    if link.is_symlink() and os.readlink(link) == str(shared):
        return
    if link.is_symlink():
        link.unlink()
    elif link.exists():
        log.warning("%s is a directory of its own; that instance's %s stays there", link, what)
        return
    link.symlink_to(shared, target_is_directory=True)
