"""The manager as the gunicorn master sees it: spawn it, wait until it answers, stop it.

The master stays a plain arbiter: no threads, only a child process it starts in ``on_starting``
and stops in ``on_exit``. The manager gets the server's config as a file (without the token: it
never needs the callers' token) and the master's pid, which it watches to exit with it.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from profiles.atomic import write_bytes_atomic

from ..config import Config
from .client import ManagerClient
from .errors import ManagerUnavailable
from .manager import STOP_ALL_S
from .protocol import ensure_private_dir, runtime_dir

log = logging.getLogger(__name__)

READY_TIMEOUT_S = 30.0  # imports, an orphan clean-up (up to 7 s), then the socket
STOP_TIMEOUT_S = STOP_ALL_S + 5.0
_PACKAGE_ROOT = str(Path(str(__import__("app").__file__)).resolve().parent.parent)
_SECRET_ENV = ("PINCHTAB_TOKEN", "BRIDGE_TOKEN")


class ManagerProcess:
    """Handle on the manager process of one server."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.run_dir = runtime_dir(config.server.state_dir)
        self.proc: subprocess.Popen | None = None

    def spawn(self) -> ManagerProcess:
        """Start the manager and wait until its socket answers; raises RuntimeError if it cannot start."""
        ensure_private_dir(self.run_dir)
        config_path = self.run_dir / "server-config.json"
        data = self.config.to_dict()
        data["server"]["token"] = ""
        write_bytes_atomic(config_path, json.dumps(data, indent=2).encode())
        env = {k: v for k, v in os.environ.items() if k not in _SECRET_ENV}
        argv = [sys.executable, "-m", "app.orchestrator.manager", "--config", str(config_path),
                "--parent", str(os.getpid())]
        # Its own session: Ctrl-C in the terminal reaches the master, which stops the manager in order.
        self.proc = subprocess.Popen(argv, env=env, cwd=_PACKAGE_ROOT, stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        self.wait_ready(READY_TIMEOUT_S)
        log.info("instance manager running (pid %d)", self.proc.pid)
        return self

    def wait_ready(self, timeout_s: float) -> None:
        """Until our manager answers on its socket; RuntimeError if it exits or the deadline passes."""
        client = ManagerClient.for_state_dir(self.config.server.state_dir)
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.proc is not None
            code = self.proc.poll()
            if code is not None:
                raise RuntimeError(f"the instance manager exited at start (code {code}); its log is above")
            try:
                # Ours, not the socket of another server's manager on the same state dir (ours
                # then exits: it cannot take the runtime dir's lock).
                if client.call("list", timeout_s=1.0).get("pid") == self.proc.pid:
                    return
            except ManagerUnavailable:
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"the instance manager did not answer within {timeout_s:.0f} s")
            time.sleep(0.05)  # the manager is importing; there is no event to wait on yet

    def stop(self, timeout_s: float = STOP_TIMEOUT_S) -> None:
        """SIGTERM (the manager stops its instances), then SIGKILL after ``timeout_s``."""
        proc = self.proc
        if proc is None or proc.poll() is not None:
            return
        for sig, wait_s in ((signal.SIGTERM, timeout_s), (signal.SIGKILL, 2.0)):
            try:
                proc.send_signal(sig)
            except ProcessLookupError:
                return
            try:
                proc.wait(timeout=wait_s)
                return
            except subprocess.TimeoutExpired:
                log.warning("instance manager did not stop within %.0f s", wait_s)
