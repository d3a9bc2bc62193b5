"""One browser: its process (or an attached one), its connection and its tabs."""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from importlib import resources
from typing import Any

from human import stealth

from .connection import Connection
from .errors import BrowserGone, LaunchError, TargetClosed, TargetCrashed
from .launcher import ChromeProcess, find_browser, resolve_cdp_url
from .tab import Tab
from .transport import Transport

log = logging.getLogger(__name__)

WORLD = "__pinchtab"  # our isolated world: page scripts cannot see or tamper with it
SETUP_TIMEOUT_S = 15.0


def page_script(name: str) -> str:
    """A script shipped as package data (``cdp/scripts/<name>``)."""
    return resources.files("cdp").joinpath("scripts", name).read_text(encoding="utf-8")


def world_scripts() -> str:
    """What our isolated world holds: the snapshot walker, then the DOM helpers that extend it."""
    return page_script("snapshot.js") + "\n;\n" + page_script("dom.js")


class Browser:
    """A Chrome we launched, or one we attached to by its CDP URL or reach through a transport (an
    extension's relay): those two are left running on stop."""

    def __init__(self, *, binary: str = "", headless: bool = True, user_data_dir: str | None = None,
                 cdp_url: str = "", extra_flags: tuple[str, ...] = (), stealth_level: str = "off",
                 user_agent: str = "", transport_factory: Callable[[], Transport] | None = None) -> None:
        self.binary = binary
        self.stealth_level = stealth_level
        self.user_agent = user_agent
        self.headless = headless
        self.user_data_dir = user_data_dir
        self.cdp_url = cdp_url
        self.extra_flags = extra_flags
        self.transport_factory = transport_factory  # raises LaunchError when it cannot reach the browser
        self.process: ChromeProcess | None = None
        self.conn: Connection | None = None
        self.version: dict[str, Any] = {}
        self._lock = threading.RLock()
        self._targets: dict[str, dict[str, Any]] = {}  # targetId -> TargetInfo, kept from events
        self._tabs: dict[str, Tab] = {}
        self._gone: Exception | None = None
        self._scripts = world_scripts()

    @property
    def attached(self) -> bool:
        return bool(self.cdp_url) or self.transport_factory is not None

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Launch (or reach) the browser and connect; raises LaunchError. A no-op when connected."""
        if self.alive():
            return
        ws_url = ""
        if self.transport_factory is not None:
            transport = self.transport_factory()
        elif self.cdp_url:
            ws_url = resolve_cdp_url(self.cdp_url)
        else:
            binary = find_browser(self.binary)
            flags = self.extra_flags
            if self.stealth_level != "off":
                flags = flags + tuple(stealth.launch_flags(self.stealth_level, product=stealth.browser_product(binary)))
            self.process = ChromeProcess(binary, headless=self.headless, user_data_dir=self.user_data_dir,
                                         extra_flags=flags)
            ws_url = self.process.start()
        try:
            if ws_url:
                self.conn = Connection.open(ws_url, browser_sink=self)
            else:
                self.conn = Connection(transport, browser_sink=self)
            self.version = self.conn.call("Browser.getVersion", timeout_s=10)
            self.conn.call("Target.setDiscoverTargets", {"discover": True}, timeout_s=10)
            infos = self.conn.call("Target.getTargets", timeout_s=10).get("targetInfos", [])
        except Exception as exc:
            self.stop()
            raise LaunchError(f"cannot talk to the browser: {exc}") from None
        with self._lock:
            for info in infos:
                self._targets.setdefault(info["targetId"], info)
        log.info("browser ready: %s", self.version.get("product", "?"))

    def alive(self) -> bool:
        """Whether the connection is up. A browser that exits closes its socket, which the reader
        notices at once; so no process check (a syscall) on every request."""
        return self._gone is None and self.conn is not None and not self.conn.closed

    def stop(self) -> None:
        """Close our tabs' workers and the connection; a launched browser is stopped, an attached one left."""
        conn = self.conn
        with self._lock:
            tabs = list(self._tabs.values())
            self._tabs.clear()
        for tab in tabs:
            tab.fail(TargetClosed("browser stopping"))
        if self.process is not None:
            close = (lambda: conn.call("Browser.close", timeout_s=2)) if conn and not conn.closed else None
            self.process.stop(close)
        if conn is not None:
            conn.close()

    # --- browser-level events (reader thread: bookkeeping only) ---------------------------------
    def deliver(self, session_id: str, msg: dict[str, Any]) -> None:
        method = msg.get("method")
        p = msg.get("params") or {}
        with self._lock:
            if method in ("Target.targetCreated", "Target.targetInfoChanged"):
                info = p["targetInfo"]
                if method == "Target.targetInfoChanged" and info["targetId"] not in self._targets:
                    return  # a late change of a target we closed: it must not come back
                self._targets[info["targetId"]] = info
                tab = self._tabs.get(info["targetId"])
                if tab is not None:
                    tab.title = info.get("title", tab.title)
            elif method == "Target.targetDestroyed":
                self._targets.pop(p["targetId"], None)
                tab = self._tabs.pop(p["targetId"], None)
                if tab is not None:
                    tab.fail(TargetClosed(f"tab {tab.id} was closed"))
            elif method == "Target.targetCrashed":
                pass  # the tab's own session reports Inspector.targetCrashed

    def fail(self, exc: Exception) -> None:
        self._gone = exc

    # --- tabs ------------------------------------------------------------------------------------
    def _conn(self) -> Connection:
        if self.conn is None or not self.alive():
            raise self._gone or BrowserGone("browser is not running")
        return self.conn

    def pages(self) -> list[dict[str, Any]]:
        """Page targets as Chrome last reported them (no CDP call); for our tabs, the URL and title
        the tab read from its page last (Chrome's own target titles lag behind)."""
        with self._lock:
            out = []
            for t in self._targets.values():
                if t.get("type") != "page":
                    continue
                info = dict(t)
                tab = self._tabs.get(t["targetId"])
                if tab is not None and tab.closed is None:
                    if tab.title:
                        info["title"] = tab.title
                    if tab.url and tab.url != "about:blank":
                        info["url"] = tab.url
                out.append(info)
            return out

    def last_used(self, target_id: str) -> float:
        """When our tab for this target was last used (0 for targets we never attached)."""
        tab = self._tabs.get(target_id)
        return tab.last_used if tab is not None else 0.0

    def has_target(self, target_id: str) -> bool:
        with self._lock:
            info = self._targets.get(target_id)
            return info is not None and info.get("type") == "page"

    def new_tab(self, timeout_s: float = SETUP_TIMEOUT_S) -> Tab:
        """Open a blank tab and attach to it."""
        conn = self._conn()
        target_id = conn.call("Target.createTarget", {"url": "about:blank"}, timeout_s=timeout_s)["targetId"]
        return self._attach(target_id, timeout_s)

    def tab(self, target_id: str, timeout_s: float = SETUP_TIMEOUT_S) -> Tab:
        """The tab for a page target, attaching on first use (pages opened by pages, attach mode)."""
        with self._lock:
            tab = self._tabs.get(target_id)
            if tab is not None and tab.closed is None:
                return tab
            if not self.has_target(target_id):
                raise KeyError(target_id)
            if tab is not None and isinstance(tab.closed, TargetCrashed):
                raise tab.closed  # a crashed renderer stays crashed: the tab must be closed
        return self._attach(target_id, timeout_s)

    def _attach(self, target_id: str, timeout_s: float) -> Tab:
        conn = self._conn()
        with self._lock:
            existing = self._tabs.get(target_id)
            if existing is not None and existing.closed is None:
                return existing
        session_id = conn.call("Target.attachToTarget", {"targetId": target_id, "flatten": True},
                               timeout_s=timeout_s)["sessionId"]
        tab = Tab(conn, target_id, session_id, world=WORLD, world_script=self._scripts,
                  extra_setup=self._stealth_setup)
        conn.claim(session_id, tab)
        try:
            tab.run(lambda: self._setup(tab), timeout_s)
        except Exception:
            tab.fail(TargetClosed("tab setup failed"))
            conn.release(session_id)
            raise
        with self._lock:
            self._tabs[target_id] = tab
            info = self._targets.get(target_id, {})
        tab.url = info.get("url", tab.url) if tab.url == "about:blank" else tab.url
        tab.title = info.get("title", "")
        tab.navigated = tab.url not in ("", "about:blank")
        return tab

    def _stealth_setup(self, frame: bool) -> list[tuple[str, dict[str, Any]]]:
        """The stealth commands of a session (a tab's, or an out-of-process iframe's)."""
        if self.stealth_level == "off":
            return []
        return stealth.setup_commands(self.stealth_level, self.version, user_agent=self.user_agent, frame=frame)

    def _setup(self, tab: Tab) -> None:
        """Enable what a tab needs, pipelined: one round trip's worth of waiting, not six."""
        futs = [(m, tab.send(m, p)) for m, p in (*tab.session_setup(), ("Page.getFrameTree", {}))]
        results = [tab.wait_result(f, m) for m, f in futs]
        self._learn_frames(tab, results[-1]["frameTree"], None)

    def _learn_frames(self, tab: Tab, node: dict[str, Any], parent: str | None) -> None:
        info = node["frame"]
        fr = tab.frame(info["id"])
        fr.parent_id = parent
        fr.url = info.get("url", "") + info.get("urlFragment", "")
        fr.loader_id = fr.loader_id or info.get("loaderId", "")
        if parent is None:
            tab.main_frame_id = fr.frame_id
            tab.url = fr.url
        for child in node.get("childFrames", []):
            self._learn_frames(tab, child, info["id"])

    def close_tab(self, target_id: str, timeout_s: float = 10.0) -> None:
        conn = self._conn()
        conn.call("Target.closeTarget", {"targetId": target_id}, timeout_s=timeout_s)
        with self._lock:
            tab = self._tabs.pop(target_id, None)
            self._targets.pop(target_id, None)
        if tab is not None:
            tab.fail(TargetClosed(f"tab {target_id} was closed"))
            conn.release(tab.session_id)
