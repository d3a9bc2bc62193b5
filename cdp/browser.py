"""One browser: its process (or an attached one), its connection and its tabs."""
from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable
from importlib import resources
from typing import Any

from human import stealth

from . import emulation
from .connection import Connection
from .errors import BrowserGone, CDPError, CDPTimeout, LaunchError, TargetClosed, TargetCrashed
from .launcher import ChromeProcess, find_browser, resolve_cdp_url
from .network import NetworkOptions
from .tab import Tab
from .transport import Transport

log = logging.getLogger(__name__)

WORLD = "__pinchtab"  # our isolated world: page scripts cannot see or tamper with it
SETUP_TIMEOUT_S = 15.0
STEALTH_SCRIPT = "stealth_script"  # Tab.state: the identifier of the tab's stealth script


def page_script(name: str) -> str:
    """A script shipped as package data (``cdp/scripts/<name>``)."""
    return resources.files("cdp").joinpath("scripts", name).read_text(encoding="utf-8")


# The snapshot engine's parts (``scripts/snapshot_<part>.js``), in the order they run. Each file is
# one parenthesised function expression that registers what it defines on a private object for the
# parts after it; the last one builds the object installed as ``__pinchtab``.
SNAPSHOT_PARTS = ("refs", "tables", "rendering", "roles", "names", "walk", "api")


@functools.cache
def snapshot_script() -> str:
    """The snapshot engine, its parts called in order inside one closure (composed once per process).

    Installed once per world, it defines no global but ``__pinchtab`` and evaluates to true.
    """
    calls = "".join(f"(\n{page_script(f'snapshot_{part}.js')}\n)(P);\n" for part in SNAPSHOT_PARTS)
    return ("if (!globalThis.__pinchtab) {\n  globalThis.__pinchtab = (() => {\nconst P = {};\n" + calls +
            "return P.api;\n  })();\n}\ntrue;\n")


def world_scripts() -> str:
    """What our isolated world holds: the snapshot walker, then the DOM helpers that extend it."""
    return snapshot_script() + "\n;\n" + page_script("dom.js")


class Browser:
    """A Chrome we launched, or one we attached to by its CDP URL or reach through a transport (an
    extension's relay): those two are left running on stop."""

    def __init__(self, *, binary: str = "", headless: bool = True, user_data_dir: str | None = None,
                 cdp_url: str = "", extra_flags: tuple[str, ...] = (), stealth_level: str = "off",
                 user_agent: str = "", transport_factory: Callable[[], Transport] | None = None,
                 extensions: tuple[str, ...] = (), timezone: str = "",
                 dialog_auto_accept: bool = False) -> None:
        self.binary = binary
        self.extensions = extensions  # unpacked extension folders loaded into a browser we launch
        self.timezone = timezone  # IANA name every tab reports ("": the machine's)
        self.dialog_auto_accept = dialog_auto_accept  # accept dialogs nobody planned an answer for
        self.network = NetworkOptions()  # how every tab captures its requests (configure_network)
        self.stealth_level = stealth_level
        self.persona = stealth.persona()  # the device pages see; POST /fingerprint/rotate picks another
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
        self._target_created = threading.Condition(self._lock)  # a page opened a tab (see opened_by)
        self._targets: dict[str, dict[str, Any]] = {}  # targetId -> TargetInfo, kept from events
        self._tabs: dict[str, Tab] = {}
        self._adopting: dict[str, threading.Event] = {}  # popups being set up (see _on_auto_attached)
        self._arming = False  # while auto-attach is being turned on: the sessions of pages already open
        # While new_tab waits for Target.createTarget: how many are in flight, and the sessions of the
        # new pages Chrome auto-attached meanwhile (its event comes before the reply), held for them.
        self._creating = 0
        self._held: dict[str, str] = {}
        self.internal: set[str] = set()  # pages of our own (a recording's encoder): never listed as tabs
        self._gate: threading.Semaphore | None = None  # see limit_parallel
        self._gone: Exception | None = None
        self._scripts = world_scripts()
        # Why a page one of our tabs opens must not run, given its URL (None: it may). The app's
        # navigation policy; cdp knows none. Unset, every popup runs.
        self.url_check: Callable[[str], str | None] | None = None

    @property
    def attached(self) -> bool:
        return bool(self.cdp_url) or self.transport_factory is not None

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        """Launch (or reach) the browser and connect; raises LaunchError. A no-op when connected."""
        if self.alive():
            return
        self._gone = None  # started again after a stop or a crash: nothing of the old one is kept
        with self._lock:
            self._targets.clear()
            self._adopting.clear()
            self._held.clear()
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
                                         extra_flags=flags, extensions=self.extensions, timezone=self.timezone)
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
        self._watch_new_pages(self.conn)
        with self._lock:
            for info in infos:
                self._targets.setdefault(info["targetId"], info)
        log.info("browser initialized successfully: %s", self.version.get("product", "?"))

    def _watch_new_pages(self, conn: Connection) -> None:
        """Have Chrome hold every new page until we let it run (browser-level auto-attach), so that a
        page one of our tabs opens (a popup, a target=_blank link) is set up like any tab of ours,
        stealth and network capture included, before its first request; other new pages run at
        once. A transport that does not offer it (an extension's relay) attaches popups on first use."""
        self._arming = True
        try:
            conn.call("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True,
                                               "filter": [{"type": "page"}]}, timeout_s=10)
        except (CDPError, CDPTimeout) as exc:
            log.info("popups are attached on first use (no browser-level auto-attach: %s)", exc)
        finally:
            self._arming = False

    def _on_auto_attached(self, p: dict[str, Any]) -> None:
        """(Reader thread, under the lock: sends only.) A page attached at the browser level: adopt a
        page our tab opened; let any other new page run and leave it; leave pages open before."""
        conn, session, info = self.conn, p.get("sessionId"), p.get("targetInfo") or {}
        if conn is None or not session:
            return
        if not p.get("waitingForDebugger"):
            if self._arming:  # a page already open when auto-attach began: not ours to hold
                conn.send("Target.detachFromTarget", {"sessionId": session})
            return  # else the event of one of our own attachToTarget calls
        opener = self._tabs.get(info.get("openerId") or "")
        if opener is not None and opener.closed is None:  # (pages only: the filter of _watch_new_pages)
            target_id = info["targetId"]
            self._adopting[target_id] = threading.Event()
            threading.Thread(target=self._adopt_popup, args=(target_id, session), daemon=True,
                             name=f"pinchtab-popup-{target_id[:8]}").start()
            return
        if self._creating and not info.get("openerId"):  # perhaps new_tab's page: it takes this session
            self._held[info["targetId"]] = session
            return
        self._release(conn, session)

    @staticmethod
    def _release(conn: Connection, session: str) -> None:
        """Let a page Chrome holds for us run, and leave it."""
        conn.send("Runtime.runIfWaitingForDebugger", {}, session)
        conn.send("Target.detachFromTarget", {"sessionId": session})

    def _adopt_popup(self, target_id: str, session_id: str) -> None:
        try:
            self._adopt(target_id, session_id, SETUP_TIMEOUT_S, paused=True, popup=True)
        except Exception as exc:  # the popup closed meanwhile, or the browser went: it must not stay held
            log.info("popup %s not adopted: %s", target_id, exc)
            if self.conn is not None and not self.conn.closed:
                self.conn.send("Runtime.runIfWaitingForDebugger", {}, session_id)
        finally:
            with self._lock:
                done = self._adopting.pop(target_id, None)
            if done is not None:
                done.set()

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
                if method == "Target.targetCreated":
                    self._target_created.notify_all()
            elif method == "Target.targetDestroyed":
                self._targets.pop(p["targetId"], None)
                tab = self._tabs.pop(p["targetId"], None)
                if tab is not None:
                    tab.fail(TargetClosed(f"tab {tab.id} was closed"))
            elif method == "Target.attachedToTarget":
                self._on_auto_attached(p)
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
                if t.get("type") != "page" or t["targetId"] in self.internal:
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

    def configure_network(self, options: NetworkOptions) -> None:
        """How tabs capture their requests from now on: new tabs, and those already open."""
        self.network = options
        for t in self.attached_tabs():
            t.network.options = options

    def attached_tabs(self) -> list[Tab]:
        """Our open tabs (those a request has used), without attaching to any other target."""
        with self._lock:
            return [t for t in self._tabs.values() if t.closed is None]

    def created_at(self, target_id: str) -> float:
        """When we attached to this target (0 for targets we never attached)."""
        tab = self._tabs.get(target_id)
        return tab.created_at if tab is not None else 0.0

    def busy(self, target_id: str) -> bool:
        """Whether our tab for this target runs or waits on a job."""
        tab = self._tabs.get(target_id)
        return tab is not None and tab.busy

    def limit_parallel(self, n: int) -> None:
        """Let at most ``n`` tabs run a job at once (each tab runs one at a time anyway)."""
        with self._lock:
            self._gate = threading.BoundedSemaphore(n)
            for tab in self._tabs.values():
                tab.gate = self._gate

    def has_target(self, target_id: str) -> bool:
        with self._lock:
            info = self._targets.get(target_id)
            return info is not None and info.get("type") == "page" and target_id not in self.internal

    def opened_by(self, opener_id: str, known: set[str], timeout_s: float) -> str | None:
        """The id of a page target that ``opener_id`` opened and that is not in ``known``, waiting
        up to ``timeout_s`` for Chrome to report it; None when none comes."""
        def new_page() -> str | None:
            return next((tid for tid, t in self._targets.items() if t.get("type") == "page"
                         and t.get("openerId") == opener_id and tid not in known), None)

        with self._target_created:
            return self._target_created.wait_for(new_page, timeout_s)

    def new_tab(self, timeout_s: float = SETUP_TIMEOUT_S) -> Tab:
        """Open a blank tab and attach to it.

        The session browser-level auto-attach gave the new page (held, before its first script) is
        the tab's own: set up before the page runs, and no second attach round trip. A transport
        without auto-attach gets a session of its own by attachToTarget.
        """
        conn = self._conn()
        with self._lock:
            self._creating += 1
        target_id = ""
        try:
            # Headless, each tab gets a window of its own: a tab behind another in one window is
            # hidden, draws no frames, and a screenshot of it waits for a frame that never comes.
            target_id = conn.call("Target.createTarget", {"url": "about:blank", "newWindow": self.headless},
                                  timeout_s=timeout_s)["targetId"]
        finally:
            with self._lock:
                self._creating -= 1
                session = self._held.pop(target_id, None)
                others = list(self._held.values()) if not self._creating else []
                if not self._creating:
                    self._held.clear()
            for held in others:  # a page someone else opened meanwhile: let it run, leave it
                self._release(conn, held)
        if session is not None:
            return self._adopt(target_id, session, timeout_s, paused=True, background=True)
        return self._attach(target_id, timeout_s)

    def tab(self, target_id: str, timeout_s: float = SETUP_TIMEOUT_S) -> Tab:
        """The tab for a page target, attaching on first use (pages opened by pages, attach mode)."""
        with self._lock:
            adopting = self._adopting.get(target_id)
        if adopting is not None:
            adopting.wait(timeout_s)  # a popup being set up: its tab, not a second session
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
        return self._adopt(target_id, session_id, timeout_s)

    def _adopt(self, target_id: str, session_id: str, timeout_s: float, *, paused: bool = False,
               popup: bool = False, background: bool = False) -> Tab:
        """Our tab on an attached session, set up (``paused``: a page Chrome holds for us, let run;
        ``popup``: a page a tab opened, whose first URL the navigation policy judges;
        ``background``: returned once its setup is sent, not answered)."""
        conn = self._conn()
        tab = Tab(conn, target_id, session_id, world=WORLD, world_script=self._scripts, network=self.network)
        tab.extra_setup = lambda frame: self._session_setup(tab, frame)
        tab.auto_accept_dialogs = self.dialog_auto_accept
        tab.gate = self._gate
        if popup and self.url_check is not None:
            self._judge_first_url(tab, self.url_check)  # before its session is ours: no event comes earlier
        conn.claim(session_id, tab)

        def failed() -> None:
            tab.fail(TargetClosed("tab setup failed"))
            conn.release(session_id)
            with self._lock:
                if self._tabs.get(target_id) is tab:
                    del self._tabs[target_id]

        def setup() -> None:
            try:
                self._setup(tab, resume=paused)
            except Exception:
                failed()
                raise

        if background:
            # A page we opened answers its setup only once its renderer has started, tens of
            # milliseconds after the commands are sent and the page let run. Nothing the caller
            # does can come between: its first job waits behind the setup on the tab's worker,
            # and fails if the setup did.
            with self._lock:
                self._tabs[target_id] = tab
            tab.submit(setup, timeout_s)
            return tab  # about:blank, untitled, not navigated: as a Tab starts
        tab.run(setup, timeout_s)
        with self._lock:
            self._tabs[target_id] = tab
            info = self._targets.get(target_id, {})
        tab.url = info.get("url", tab.url) if tab.url == "about:blank" else tab.url
        tab.title = info.get("title", "")
        tab.navigated = tab.url not in ("", "about:blank")
        return tab

    def _judge_first_url(self, tab: Tab, check: Callable[[str], str | None]) -> None:
        """Close a popup whose first real URL ``check`` refuses, as its main frame starts to go there.

        Chrome holds a new page with no URL to judge yet (about:blank, or none): the opener's
        window.open or link names it only as the page starts navigating. So the first navigation of
        its main frame (the frame whose id is the target's) to anything but about:blank is judged,
        on the popup's worker, before any job of an agent can run there.
        """
        judged = False

        def started(session_id: str, p: dict[str, Any]) -> None:
            nonlocal judged
            url = p.get("url") or ""
            if judged or session_id != tab.session_id or p.get("frameId") != tab.id or url in ("", "about:blank"):
                return
            judged = True
            reason = check(url)
            if reason:
                self._close_refused(tab, reason)

        tab.on("Page.frameStartedNavigating", started)

    def _close_refused(self, tab: Tab, reason: str) -> None:
        """(The tab's worker: sends only.) Close a page the app refuses and forget it at once, so no
        request can reach it while Chrome closes it."""
        log.warning("closed page %s, which one of our tabs opened: %s", tab.id[:8], reason)
        with self._lock:
            self._tabs.pop(tab.id, None)
            self._targets.pop(tab.id, None)
        conn = self.conn
        if conn is not None and not conn.closed:
            conn.send("Target.closeTarget", {"targetId": tab.id})
            conn.release(tab.session_id)
        tab.fail(TargetClosed(f"tab {tab.id} was closed: {reason}"))

    def _session_setup(self, tab: Tab, frame: bool) -> list[tuple[str, dict[str, Any]]]:
        """The commands each session of ``tab`` runs at setup beyond the basics: stealth, the
        timezone (an attached browser has no TZ of ours; top-level targets only, frames follow
        their page), and for an out-of-process iframe the emulation its tab was given."""
        commands = self._stealth_setup(frame)
        if self.timezone and not frame:
            commands.append(("Emulation.setTimezoneOverride", {"timezoneId": self.timezone}))
        if frame:
            commands += emulation.session_commands(tab)
        return commands

    def _stealth_setup(self, frame: bool) -> list[tuple[str, dict[str, Any]]]:
        """The stealth commands of a session (a tab's, or an out-of-process iframe's)."""
        if self.stealth_level == "off":
            return []
        return stealth.setup_commands(self.stealth_level, self.version, user_agent=self.user_agent, frame=frame,
                                      persona=self.persona)

    def rotate_persona(self, seed: int, timeout_s: float = SETUP_TIMEOUT_S) -> int:
        """Pages get the persona of ``seed`` from their next document on: new tabs and frames by
        their setup, open tabs by swapping their stealth script. How many open tabs were updated."""
        self.persona = stealth.persona(seed)
        if self.stealth_level == "off":
            return 0
        source = stealth.script_source(self.stealth_level, self.version, persona=self.persona)
        updated = 0
        for tab in self.attached_tabs():
            def swap(tab: Tab = tab) -> None:
                old = tab.state.get(STEALTH_SCRIPT)
                if old:
                    tab.call("Page.removeScriptToEvaluateOnNewDocument", {"identifier": old})
                added = tab.call("Page.addScriptToEvaluateOnNewDocument", {"source": source})
                tab.state[STEALTH_SCRIPT] = added.get("identifier")

            try:
                tab.run(swap, timeout_s)
                updated += 1
            except (TargetClosed, CDPError, CDPTimeout):  # closed meanwhile, or stuck: it keeps the old one
                continue
        return updated

    def _setup(self, tab: Tab, resume: bool = False) -> None:
        """Enable what a tab needs, pipelined: one round trip's worth of waiting, not six.

        ``resume``: a page Chrome holds for us. It may not answer until it runs (a new window's
        renderer starts then), so it is let run right after the commands are sent, not after their
        answers: Chrome applies them in order, before the page's first document.
        """
        commands = [*tab.session_setup(), ("Page.getFrameTree", {})]
        futs = [(m, tab.send(m, p)) for m, p in commands]
        if resume:
            tab.send("Runtime.runIfWaitingForDebugger", {})
        results = [tab.wait_result(f, m) for m, f in futs]
        for (method, params), res in zip(commands, results, strict=True):
            if method == "Page.addScriptToEvaluateOnNewDocument" and stealth.TOKEN in params.get("source", ""):
                tab.state[STEALTH_SCRIPT] = res.get("identifier")  # swapped by rotate_persona
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
