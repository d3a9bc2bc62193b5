"""Finding, starting and stopping Chrome, or resolving the address of one already running."""
from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlparse

import requests

from .errors import LaunchError

log = logging.getLogger(__name__)

# Where the cdp package lives, so ``python -m cdp.reaper`` works whatever the caller's directory.
_PACKAGE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome")

# Always on: keep Chromium off the network and quiet (no updates, sync, first-run UI, metrics).
BASE_FLAGS = (
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-default-apps",
    "--disable-breakpad",
    "--disable-domain-reliability",
    "--metrics-recording-only",
    "--password-store=basic",
    "--use-mock-keychain",
    # The omnibox popups: Chrome preloads their WebUI pages even headless, a renderer that cost
    # each launch 1.3 s of CPU of its 1.9 (a browser with no window has no omnibox to show them).
    "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication,"
    "WebUIOmniboxPopup,WebUIOmniboxAimPopup",
    "--disable-dev-shm-usage",  # small /dev/shm in containers
    "--hide-scrollbars",
    "--mute-audio",
)


def find_browser(configured: str = "", env: Mapping[str, str] | None = None) -> str:
    """The browser binary: ``browser.binary``, then ``CHROME_BIN``, then well-known names on PATH."""
    env = os.environ if env is None else env
    search = env.get("PATH")
    for explicit in (configured, env.get("CHROME_BIN", ""), env.get("CHROME_BINARY", "")):
        if explicit:
            path = shutil.which(explicit, path=search)
            if not path and os.path.isfile(explicit) and os.access(explicit, os.X_OK):
                path = explicit
            if not path:
                raise LaunchError(f"browser binary {explicit!r} not found or not executable")
            return path
    for name in CANDIDATES:
        path = shutil.which(name, path=search)
        if path:
            return path
    raise LaunchError("no Chrome or Chromium found: install Debian's 'chromium' or set CHROME_BIN")


# A throwaway profile is only ever an agent's: nobody fills forms from Chrome's autofill or its
# password manager in it. With both off, Chrome stops parsing every form of every page it loads:
# on a page with 500 fields that was 40 ms of the browser process's CPU per load, a third of its
# work, and what limited tabs driven in parallel on a small machine. (Profiles people keep are
# left as they are.)
THROWAWAY_PREFERENCES = {
    "autofill": {"enabled": False, "profile_enabled": False, "credit_card_enabled": False},
    "credentials_enable_service": False,
    "profile": {"password_manager_enabled": False},
}


def seed_throwaway_profile(data_dir: str) -> None:
    default = os.path.join(data_dir, "Default")
    os.makedirs(default, exist_ok=True)
    with open(os.path.join(default, "Preferences"), "w") as f:
        json.dump(THROWAWAY_PREFERENCES, f)


def chrome_flags(*, headless: bool, user_data_dir: str, extra: tuple[str, ...] = (),
                 as_root: bool | None = None, window: tuple[int, int] = (1280, 800),
                 extensions: tuple[str, ...] = ()) -> list[str]:
    """The command-line flags we start Chrome with (pure, for tests).

    ``extensions``: unpacked extension folders to load (and the only ones allowed to run).
    """
    flags = list(BASE_FLAGS)
    flags += ["--remote-debugging-port=0", f"--user-data-dir={user_data_dir}", f"--window-size={window[0]},{window[1]}"]
    if headless:
        flags.append("--headless=new")
    if as_root if as_root is not None else (os.geteuid() == 0):
        flags.append("--no-sandbox")  # Chrome's sandbox refuses to run as root
    if extensions:
        folders = ",".join(extensions)  # the config refuses a path with a comma in it
        flags += [f"--load-extension={folders}", f"--disable-extensions-except={folders}"]
    flags += list(extra)
    flags.append("about:blank")
    return _one_disable_features(flags)


def _one_disable_features(flags: list[str]) -> list[str]:
    """Chrome reads only the last ``--disable-features``: a caller's extra one (``browser.flags``)
    would switch ours back on, so every list is merged into the first one's place."""
    prefix = "--disable-features="
    named = [f for f in flags if f.startswith(prefix)]
    if len(named) < 2:
        return flags
    features = list(dict.fromkeys(x for f in named for x in f[len(prefix):].split(",") if x))
    first = flags.index(named[0])
    rest = [f for f in flags if not f.startswith(prefix)]
    rest.insert(first, prefix + ",".join(features))
    return rest


@dataclass
class ChromeProcess:
    """A Chrome we started, in its own process group, reachable at ``ws_url``."""

    binary: str
    headless: bool = True
    user_data_dir: str | None = None
    extra_flags: tuple[str, ...] = ()
    extensions: tuple[str, ...] = ()  # unpacked extension folders
    timezone: str = ""  # IANA name for the browser's TZ ("": the machine's)
    start_timeout_s: float = 30.0
    proc: subprocess.Popen | None = None
    ws_url: str = ""
    port: int = 0
    _temp_dir: str | None = field(default=None, repr=False)

    def start(self) -> str:
        """Start Chrome and return its browser websocket URL."""
        if self.user_data_dir is None:
            self._temp_dir = tempfile.mkdtemp(prefix="pinchtab-chrome-")
            data_dir = self._temp_dir
            seed_throwaway_profile(data_dir)
        else:
            data_dir = os.path.abspath(self.user_data_dir)
            os.makedirs(data_dir, exist_ok=True)
        port_file = os.path.join(data_dir, "DevToolsActivePort")
        try:
            os.unlink(port_file)  # a stale file from an earlier run would point at a dead port
        except FileNotFoundError:
            pass
        argv = [self.binary, *chrome_flags(headless=self.headless, user_data_dir=data_dir, extra=self.extra_flags,
                                           extensions=self.extensions)]
        # TZ reaches every process of the browser (workers too), which no per-tab override does.
        env = {**os.environ, "TZ": self.timezone} if self.timezone else None
        log.info("starting browser: %s", self.binary)
        if self.extensions:
            # In the original's words, so that operators (and its scenarios) find it in an instance's log.
            log.info("loading extensions paths=%s", ",".join(self.extensions))
        # Through the reaper (cdp/reaper.py), which leads the browser's process group and kills it
        # if this process dies without stopping it.
        reaper = [sys.executable, "-m", "cdp.reaper", str(os.getpid())]
        self.proc = subprocess.Popen(reaper + argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.PIPE, start_new_session=True, cwd=_PACKAGE_ROOT, env=env)
        deadline = time.monotonic() + self.start_timeout_s
        delay = 0.01
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                err = (self.proc.stderr.read() if self.proc.stderr else b"").decode(errors="replace")
                self._cleanup_dir()
                raise LaunchError(f"browser exited at start (code {self.proc.returncode}): {err.strip()[-500:]}")
            try:
                with open(port_file) as fh:
                    lines = fh.read().split("\n")
                if len(lines) >= 2 and lines[0].strip() and lines[1].strip():
                    self.port = int(lines[0])
                    self.ws_url = f"ws://127.0.0.1:{self.port}{lines[1].strip()}"
                    self._drain_stderr()
                    return self.ws_url
            except (FileNotFoundError, ValueError):
                pass
            time.sleep(delay)  # polling a file the browser writes; no event to wait on
            delay = min(delay * 2, 0.1)
        self.stop()
        raise LaunchError(f"browser did not open its debugging port within {self.start_timeout_s:.0f} s")

    def _drain_stderr(self) -> None:
        # Chrome logs to stderr; an unread pipe would eventually block it.
        import threading

        def drain(pipe):  # type: ignore[no-untyped-def]
            for line in pipe:
                log.debug("chrome: %s", line.decode(errors="replace").rstrip())

        if self.proc and self.proc.stderr:
            threading.Thread(target=drain, args=(self.proc.stderr,), name="chrome-stderr", daemon=True).start()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def stop(self, close_browser=None, *, grace_s: float = 3.0) -> None:  # type: ignore[no-untyped-def]
        """Stop Chrome: ``close_browser()`` (Browser.close), then SIGTERM, then SIGKILL to its group."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            if close_browser is not None:
                try:
                    close_browser()
                except Exception:  # the connection may already be gone; the signals follow
                    pass
                _wait(proc, grace_s)
            for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 2.0)):
                if proc.poll() is not None:
                    break
                try:
                    os.killpg(proc.pid, sig)
                except ProcessLookupError:
                    break
                _wait(proc, wait_s)
        if proc is not None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # helpers left in the group (zygotes, GPU)
            except (ProcessLookupError, PermissionError):
                pass
        self._cleanup_dir()

    def _cleanup_dir(self) -> None:
        if self._temp_dir:
            shutil.rmtree(self._temp_dir, ignore_errors=True)
            self._temp_dir = None


def _wait(proc: subprocess.Popen, timeout_s: float) -> None:
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        pass


def resolve_cdp_url(url: str, timeout_s: float = 5.0) -> str:
    """The browser websocket URL for ``url``: a ws(s) URL as is, an http(s) one via /json/version."""
    parsed = urlparse(url)
    if parsed.scheme in ("ws", "wss"):
        return url
    if parsed.scheme not in ("http", "https"):
        raise LaunchError(f"CDP URL must be http(s):// or ws(s)://, got {url!r}")
    try:
        resp = requests.get(url.rstrip("/") + "/json/version", timeout=timeout_s)
        resp.raise_for_status()
        return resp.json()["webSocketDebuggerUrl"]
    except (requests.RequestException, ValueError, KeyError) as exc:
        raise LaunchError(f"cannot reach a browser at {url}: {exc}") from None
