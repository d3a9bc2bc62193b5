"""Pinchtab as users run it, in subprocesses: ``pinchtab bridge`` and ``pinchtab server`` under
gunicorn, each with its own HOME, its output kept in a log the test can read."""
from __future__ import annotations

import json
import os
import random
import socket
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import requests

from bench.processes import ServerSubprocess, free_port
from support import ROOT
from support.waits import wait_until


class BridgeProcess(ServerSubprocess):
    """``pinchtab bridge`` as a real gunicorn server in a subprocess.

    HOME is ``tmp_path`` (its log is ``tmp_path/bridge.log``); the caller's PINCHTAB_CONFIG and
    PINCHTAB_TOKEN are not inherited; ``env`` and ``args`` go on top."""

    def __init__(self, tmp_path: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> None:
        port = free_port()
        inherited = {k: v for k, v in os.environ.items() if k not in ("PINCHTAB_CONFIG", "PINCHTAB_TOKEN")}
        full_env = {**inherited, "HOME": str(tmp_path), "PINCHTAB_PORT": str(port), **(env or {})}
        super().__init__([sys.executable, "-m", "app.clients.cli", "bridge", *args], port=port, env=full_env, cwd=ROOT,
                         log_path=tmp_path / "bridge.log", name="bridge", stop_timeout_s=15)


class ServerProcess(ServerSubprocess):
    """``pinchtab server`` as a real gunicorn server in a subprocess: its worker, its instance
    manager and the manager's ``pinchtab bridge`` instances, all under ``home``."""

    def __init__(self, home: Path, config: dict[str, Any] | None = None, token: str = "",
                 args: tuple[str, ...] = ("server",)) -> None:
        self.home = home
        port = free_port()
        # Instances in a range of their own (the allocator still skips any port that is taken).
        start = random.randrange(20000, 60000, 100)
        cfg: dict[str, Any] = {"multiInstance": {"instancePortStart": start, "instancePortEnd": start + 99}}
        for section, values in (config or {}).items():
            cfg[section] = {**cfg.get(section, {}), **values} if isinstance(values, dict) else values
        self.config_path = home / f"config-{port}.json"
        self.config_path.write_text(json.dumps(cfg))
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_"))}
        env = {**inherited, "HOME": str(home), "PINCHTAB_PORT": str(port), "PINCHTAB_CONFIG": str(self.config_path)}
        if token:
            env["PINCHTAB_TOKEN"] = token
        self.http = requests.Session()
        if token:
            self.http.headers["Authorization"] = f"Bearer {token}"
        super().__init__([sys.executable, "-m", "app.clients.cli", *args], port=port, env=env, cwd=ROOT,
                         log_path=home / f"server-{port}.log", name="server", stop_timeout_s=45)

    @property
    def state_dir(self) -> Path:
        """The server's state dir (pidfiles, the manager's socket) under its HOME."""
        return self.home / ".pinchtab"

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """A call to the server with the test's token (60 s unless ``timeout`` says otherwise)."""
        kwargs.setdefault("timeout", 60)
        return self.http.request(method, self.base + path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)

    def health(self) -> dict[str, Any]:
        """GET /health's body as the operator sees it (with the token: the default instance's id and
        the other details the public answer leaves out); ``{}`` while the server does not answer with JSON."""
        try:
            return self.http.get(self.base + "/health", timeout=2).json()
        except (requests.RequestException, ValueError):
            return {}

    def wait_ready(self, default_instance: bool = True, timeout_s: float = 45.0) -> dict[str, Any]:
        """Until /health is ok (and, with ``default_instance``, the default instance is running)."""
        def ready() -> dict[str, Any] | None:
            self.raise_if_exited()
            h = self.health()
            if h.get("status") != "ok":
                return None
            if default_instance and (h.get("defaultInstance") or {}).get("status") != "running":
                return None
            return h

        return wait_until(ready, timeout_s, 0.05)

    def wait_status(self, instance_id: str, status: str, timeout_s: float = 45.0) -> dict[str, Any]:
        """Until the instance's record says ``status``; that record."""
        def reached() -> dict[str, Any] | None:
            r = self.get(f"/instances/{instance_id}", timeout=5)
            return r.json() if r.status_code == 200 and r.json()["status"] == status else None

        return wait_until(reached, timeout_s, 0.05)

    def manager_pid(self) -> int | None:
        """The instance manager (a child of the gunicorn master, in a session of its own)."""
        from app.orchestrator.procfs import children_of

        found = children_of(self.proc.pid, b"app.orchestrator.manager")
        return found[0] if found else None

    def stop(self) -> None:
        """TERM to the server (it stops its manager, which stops its instances), KILL after a deadline;
        then whatever a killed manager left behind, from its pidfiles."""
        from app.orchestrator.children import clean_orphans
        from app.web.pools import close_session

        close_session(self.http)  # first: a connection we keep alive would hold the server's stop for 2 s
        super().stop()
        pids = self.state_dir / "run" / "pids"
        if pids.is_dir():
            clean_orphans(pids)


class WorkerGunicorn(ServerSubprocess):
    """Plain gunicorn with our worker class (``app.serving.worker.Worker``) and 4 threads, serving the WSGI
    ``app`` that ``source`` defines (written to ``tmp_path/<module>.py``)."""

    def __init__(self, tmp_path: Path, source: str, module: str) -> None:
        (tmp_path / f"{module}.py").write_text(source)
        port = free_port()
        env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
        super().__init__([sys.executable, "-m", "gunicorn", "-k", "app.serving.worker.Worker", "--threads", "4",
                          "-w", "1", "-b", f"127.0.0.1:{port}", "--keep-alive", "30", f"{module}:app"],
                         port=port, env=env, cwd=tmp_path, name="gunicorn", stop_timeout_s=15)

    def healthy(self) -> bool:
        """Whether it accepts connections (these small apps have no /health: every path answers)."""
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.5).close()
            return True
        except OSError:
            return False


@contextmanager
def worker_gunicorn(tmp_path: Path, source: str, module: str) -> Iterator[int]:
    """The port of a ``WorkerGunicorn`` serving ``source``, ready; stopped when the block ends."""
    server = WorkerGunicorn(tmp_path, source, module)
    try:
        server.wait_healthy(20)
        yield server.port
    finally:
        server.stop()
