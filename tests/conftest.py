"""Shared fixtures: pages served on 127.0.0.1, one real headless Chromium per session, the app.

Every browser test drives a real Chromium (Debian's ``chromium`` or ``CHROME_BIN``) against pages
this process serves; nothing reaches the internet and nothing sleeps: waits poll a predicate
with a deadline.
"""
from __future__ import annotations

import http.server
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable, Iterator
from urllib.parse import parse_qs, urlparse

import pytest
import requests

ROOT = Path(__file__).resolve().parent.parent
PAGES = Path(__file__).resolve().parent / "pages"
sys.path.insert(0, str(ROOT))

from bench.common import wait_for  # noqa: E402  (the one bounded poll; here a miss fails the test)


def wait_until(predicate: Callable[[], Any], timeout_s: float = 10.0, interval_s: float = 0.02) -> Any:
    """Poll ``predicate`` until it returns something truthy; fail the test at the deadline."""
    try:
        return wait_for(predicate, timeout_s, interval_s)
    except TimeoutError:
        raise AssertionError(f"condition not met within {timeout_s} s") from None


# --- talking to the app the way an agent does (shared by the API tests) ----------------------------
def nav(client: Any, url: str, **extra: Any) -> dict[str, Any]:
    """POST /navigate and insist it worked."""
    r = client.post("/navigate", json={"url": url, **extra})
    assert r.status_code == 200, r.json
    return r.json


def compact(client: Any, **params: Any) -> str:
    """The interactive compact snapshot of the caller's tab."""
    q = "&".join(f"{k}={v}" for k, v in {"filter": "interactive", "format": "compact", **params}.items())
    r = client.get(f"/snapshot?{q}")
    assert r.status_code == 200, r.data
    return r.data.decode()


def ref_of(snapshot_text: str, role: str, name: str) -> str:
    """The ref of the first ``<ref> <role> <name>`` line of a compact snapshot."""
    m = re.search(rf"^(e\d+) {role} {re.escape(name)}(?: val=| \[| [*-]|$)", snapshot_text, re.M)
    assert m, f"no {role} {name!r} in:\n{snapshot_text}"
    return m.group(1)


def text(client: Any, **params: Any) -> str:
    """GET /text's text."""
    q = "&".join(f"{k}={v}" for k, v in params.items())
    return client.get(f"/text?{q}").json["text"]


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static pages from tests/pages plus a few dynamic ones (slow responses, a form echo)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(PAGES), **kwargs)

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        url = urlparse(self.path)
        q = parse_qs(url.query)
        if url.path == "/slow":
            # Holds the response for ?ms= (bounded), to test navigate timeouts.
            time.sleep(min(int(q.get("ms", ["1000"])[0]), 10000) / 1000)
            return self._html(f"<title>Slow</title><p>slow page {q.get('ms', [''])[0]}</p>")
        if url.path == "/echo":
            items = "".join(f"<li>{k}={v[0]}</li>" for k, v in q.items())
            return self._html(f"<title>Echo</title><h1>Echo</h1><ul>{items}</ul>")
        return super().do_GET()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        if urlparse(self.path).path == "/login":
            user = form.get("username", [""])[0]
            ok = user == "agent" and form.get("password", [""])[0] == "s3cret"
            if ok:
                return self._html(f"<title>Welcome</title><h1>Welcome, {user}</h1><a href='/table.html'>Orders</a>")
            return self._html("<title>Login failed</title><h1>Wrong username or password</h1>", 401)
        self._html("<title>Posted</title>")

    def _html(self, body: str, status: int = 200) -> None:
        data = f"<!doctype html><html><head><meta charset=utf-8>{body}</html>".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Site:
    def __init__(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-site", daemon=True)
        self.thread.start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def site2() -> Iterator[Site]:
    """A second origin (another port) for cross-origin frames."""
    s = Site()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from cdp.browser import Browser

    b = Browser()
    b.start()
    yield b
    b.stop()


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    t = browser.new_tab()
    yield t
    try:
        browser.close_tab(t.id)
    except Exception:
        pass


def run(tab: Any, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Run ``fn(tab, ...)`` on the tab's worker (as the HTTP layer does)."""
    return tab.run(lambda: fn(tab, *args, **kwargs), 30)


def make_config(tmp_path: Path, **overrides: Any) -> Any:
    from app.config import load_config

    return load_config(env={"HOME": str(tmp_path)}, overrides=overrides)


@pytest.fixture
def app_factory(browser: Any, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Build a Flask app on the session's browser; tabs a test opens are closed after it."""
    from app.api import create_app

    before = {p["targetId"] for p in browser.pages()}

    def build(**overrides: Any) -> Any:
        app = create_app(make_config(tmp_path, **overrides), start_browser=False, browser_factory=lambda: browser)
        app.extensions["pinchtab"].start(background=False)
        app.testing = True
        return app

    yield build
    for p in browser.pages():
        if p["targetId"] not in before:
            try:
                browser.close_tab(p["targetId"])
            except Exception:
                pass


@pytest.fixture
def client(app_factory: Callable[..., Any]) -> Any:
    return app_factory().test_client()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BridgeProcess:
    """``pinchtab bridge`` as a real gunicorn server in a subprocess."""

    def __init__(self, tmp_path: Path, env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        inherited = {k: v for k, v in os.environ.items() if k not in ("PINCHTAB_CONFIG", "PINCHTAB_TOKEN")}
        full_env = {**inherited, "HOME": str(tmp_path), "PINCHTAB_PORT": str(self.port), **(env or {})}
        self.log = open(tmp_path / "bridge.log", "w+b")
        self.proc = subprocess.Popen([sys.executable, "-m", "app.clients.cli", "bridge", *args], cwd=str(ROOT),
                                     env=full_env, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def wait_healthy(self, timeout_s: float = 30.0) -> None:
        def ok() -> bool:
            if self.proc.poll() is not None:
                raise AssertionError(f"bridge exited: {self.output()}")
            try:
                return requests.get(self.base + "/health", timeout=1).json().get("status") == "ok"
            except (requests.RequestException, ValueError):
                return False

        wait_until(ok, timeout_s, 0.05)

    def output(self) -> str:
        self.log.seek(0)
        return self.log.read().decode(errors="replace")

    def stop(self) -> None:
        import signal

        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        self.log.close()


@pytest.fixture
def bridge_process(tmp_path: Path) -> Iterator[Callable[..., BridgeProcess]]:
    started: list[BridgeProcess] = []

    def start(env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> BridgeProcess:
        bp = BridgeProcess(tmp_path, env, args)
        started.append(bp)
        return bp

    yield start
    for bp in started:
        bp.stop()


class ServerProcess:
    """``pinchtab server`` as a real gunicorn server in a subprocess: its worker, its instance
    manager and the manager's ``pinchtab bridge`` instances, all under ``home``."""

    def __init__(self, home: Path, config: dict[str, Any] | None = None, token: str = "",
                 args: tuple[str, ...] = ("server",)) -> None:
        import json
        import random

        self.home = home
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        # Instances in a range of their own (the allocator still skips any port that is taken).
        start = random.randrange(20000, 60000, 100)
        cfg: dict[str, Any] = {"multiInstance": {"instancePortStart": start, "instancePortEnd": start + 99}}
        for section, values in (config or {}).items():
            cfg[section] = {**cfg.get(section, {}), **values} if isinstance(values, dict) else values
        self.config_path = home / f"config-{self.port}.json"
        self.config_path.write_text(json.dumps(cfg))
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_"))}
        env = {**inherited, "HOME": str(home), "PINCHTAB_PORT": str(self.port),
               "PINCHTAB_CONFIG": str(self.config_path)}
        if token:
            env["PINCHTAB_TOKEN"] = token
        self.http = requests.Session()
        if token:
            self.http.headers["Authorization"] = f"Bearer {token}"
        self.log_path = home / f"server-{self.port}.log"
        self.log = open(self.log_path, "w+b")
        self.proc = subprocess.Popen([sys.executable, "-m", "app.clients.cli", *args], cwd=str(ROOT), env=env,
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    @property
    def state_dir(self) -> Path:
        return self.home / ".pinchtab"

    def request(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        kwargs.setdefault("timeout", 60)
        return self.http.request(method, self.base + path, **kwargs)

    def get(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("GET", path, **kwargs)

    def post(self, path: str, **kwargs: Any) -> requests.Response:
        return self.request("POST", path, **kwargs)

    def health(self) -> dict[str, Any]:
        try:
            return requests.get(self.base + "/health", timeout=2).json()
        except (requests.RequestException, ValueError):
            return {}

    def wait_ready(self, default_instance: bool = True, timeout_s: float = 45.0) -> dict[str, Any]:
        """Until /health is ok (and, with ``default_instance``, the default instance is running)."""
        def ready() -> dict[str, Any] | None:
            if self.proc.poll() is not None:
                raise AssertionError(f"server exited: {self.output()}")
            h = self.health()
            if h.get("status") != "ok":
                return None
            if default_instance and (h.get("defaultInstance") or {}).get("status") != "running":
                return None
            return h

        return wait_until(ready, timeout_s, 0.05)

    def wait_status(self, instance_id: str, status: str, timeout_s: float = 45.0) -> dict[str, Any]:
        def reached() -> dict[str, Any] | None:
            r = self.get(f"/instances/{instance_id}", timeout=5)
            return r.json() if r.status_code == 200 and r.json()["status"] == status else None

        return wait_until(reached, timeout_s, 0.05)

    def manager_pid(self) -> int | None:
        """The instance manager (a child of the gunicorn master, in a session of its own)."""
        from app.orchestrator.procfs import children_of

        found = children_of(self.proc.pid, b"app.orchestrator.manager")
        return found[0] if found else None

    def output(self) -> str:
        return self.log_path.read_bytes().decode(errors="replace")

    def stop(self) -> None:
        """TERM to the server (it stops its manager, which stops its instances), KILL after a deadline;
        then whatever a killed manager left behind, from its pidfiles."""
        import signal

        from app.orchestrator.children import clean_orphans

        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=45)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        pids = self.state_dir / "run" / "pids"
        if pids.is_dir():
            clean_orphans(pids)
        self.http.close()
        self.log.close()


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """Start ``pinchtab server`` processes (``config``: the JSON config; ``token``: PINCHTAB_TOKEN;
    ``args``: the command line, ``()`` for plain ``pinchtab``); each is stopped, with its instances,
    after the test."""
    started: list[ServerProcess] = []

    def start(config: dict[str, Any] | None = None, token: str = "", args: tuple[str, ...] = ("server",),
              home: Path | None = None) -> ServerProcess:
        sp = ServerProcess(home or tmp_path, config, token, args)
        started.append(sp)
        return sp

    yield start
    for sp in started:
        sp.stop()


# --- the profile store (tests/profiles) ------------------------------------------------------------
@pytest.fixture
def base(tmp_path: Path) -> Path:
    """Where a test's profiles live."""
    return tmp_path / "profiles"


@pytest.fixture
def store(base: Path) -> Iterator[Any]:
    """A profile store under the test's tmp dir, closed after the test."""
    from profiles.store import ProfileStore

    s = ProfileStore(base)
    yield s
    s.close()
