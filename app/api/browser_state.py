"""The bridge's state: one browser, its tabs, and which tab each caller is on.

The browser starts with the server, in the background, so the server answers ``/health`` at
once; requests wait (bounded) for it. A browser that died is restarted by the next request,
which says so in its answer. Nothing here reads the HTTP request: each call names its
:class:`Caller`, and notes on it what the answer must tell (its tab, a restarted browser).
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cdp.browser import Browser
from cdp.errors import BrowserGone, CDPError, CDPTimeout, LaunchError, TargetClosed
from cdp.network import NetworkOptions
from cdp.tab import Tab

from ..config import Config
from ..policy import netguard
from ..policy.navigation import NavigationPolicy
from ..web.errors import BadRequest, Conflict, Forbidden, NotFound, Unavailable
from . import tab_policy
from .tab_guards import TabGuards

log = logging.getLogger(__name__)

START_WAIT_S = 45.0
HIDDEN_PREFIXES = ("chrome://", "chrome-extension://", "devtools://", "chrome-untrusted://")


@dataclass
class Caller:
    """Who asks (an ``X-Agent-Id``, or None for anonymous callers) and what their answer must say."""

    agent: str | None = None
    tab_id: str | None = None  # the tab the request was served on
    browser_restarted: bool = False  # the browser had died and this request restarted it

    @property
    def view(self) -> str:
        """Whose view of a page a snapshot diff compares with: the agent, or all anonymous callers."""
        return self.agent or ""


def network_options(c: Config) -> NetworkOptions:
    """How tabs capture their requests (``server.networkBufferSize`` and the body settings)."""
    return NetworkOptions(buffer_size=c.server.network_buffer_size, retain_bodies=c.server.retain_network_bodies,
                          body_max_bytes=c.server.retain_network_body_max_bytes)


class BrowserState:
    """Owns the browser and the current-tab bookkeeping of one bridge process."""

    def __init__(self, config: Config, browser_factory: Callable[[], Browser] | None = None,
                 resolver: netguard.Resolver = netguard.system_resolver) -> None:
        self.config = config
        self._factory = browser_factory or self._default_browser
        # What every page this bridge opens must pass (app.policy.navigation).
        self.navigation = NavigationPolicy.from_config(config.security, resolver)
        self.profile_lock: Any = None  # held while the browser runs on a named profile
        self._lock = threading.RLock()
        self._ready = threading.Event()
        self.browser: Browser | None = None
        self.start_error: Exception | None = None
        self.restarts = 0
        self.current: str | None = None  # the anonymous callers' current tab
        self.agent_tabs: dict[str, str] = {}  # X-Agent-Id -> that agent's current tab
        self.guards = TabGuards()  # tab leases and handoffs
        self._stopped = False

    def _default_browser(self) -> Browser:
        c = self.config
        data_dir = str(self.profile_lock.path) if self.profile_lock is not None else None
        return Browser(binary=c.browser.binary, headless=c.instance_defaults.headless,
                       cdp_url=c.browser.cdp_url, extra_flags=tuple(c.browser.extra_flags),
                       user_data_dir=data_dir, stealth_level=c.instance_defaults.stealth_level,
                       user_agent=c.instance_defaults.user_agent,
                       extensions=tuple(str(p) for p in c.browser.extension_paths),
                       timezone=c.instance_defaults.timezone,
                       dialog_auto_accept=c.instance_defaults.dialog_auto_accept)

    def lock_profile(self, owner: str) -> None:
        """Use (and lock, for this process's life) the configured profile, creating it if new.

        Raises the profile store's errors (ProfileLocked names the holder).
        """
        name = self.config.instance_defaults.profile
        if not name or self.config.browser.cdp_url:
            return
        from profiles import ProfileNotFound, ProfileStore

        store = ProfileStore(self.config.profiles.base_dir)
        try:
            try:
                store.get(name)
            except ProfileNotFound:
                store.create(name)
            self.profile_lock = store.lock(name, owner)
        finally:
            store.close()

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self, background: bool = True) -> None:
        """Start the browser now (in a thread when ``background``), not on the first request."""
        if background:
            threading.Thread(target=self._first_launch, name="browser-start", daemon=True).start()
        else:
            self._first_launch()

    def _first_launch(self) -> None:
        self._launch()
        with self._lock:
            tab_policy.reopen(self.browser, tab_policy.saved_urls(self.config), self.refusal)

    def _launch(self) -> None:
        with self._lock:
            self._ready.clear()
            browser = self._factory()
            browser.configure_network(network_options(self.config))
            browser.url_check = self.refusal  # the pages our tabs open (popups) pass the policy too
            try:
                if not browser.alive():  # a factory may hand over a browser that already runs
                    browser.start()
            except LaunchError as exc:
                log.error("browser failed to start: %s", exc)
                self.start_error = exc
                self.browser = None
            else:
                browser.limit_parallel(tab_policy.parallel_limit(self.config))
                self.browser = browser
                self.start_error = None
            finally:
                self._ready.set()

    def stop(self) -> None:
        with self._lock:
            self._stopped = True
            if self.browser is not None:
                tab_policy.save_for_restore(self.config, self.browser)
                self.browser.stop()  # Browser.close first: the profile's cookies reach the disk
                self.browser = None
            if self.profile_lock is not None:
                self.profile_lock.release()
                self.profile_lock = None

    def status(self) -> dict[str, Any]:
        if not self._ready.is_set():
            return {"status": "starting"}
        b = self.browser
        if b is None or not b.alive() or (b.process is not None and not b.process.alive()):
            reason = str(self.start_error) if self.start_error else "browser is not running"
            return {"status": "error", "reason": reason}
        return {"status": "ok", "tabs": len(b.pages()), "restarts": self.restarts}

    def ensure(self, caller: Caller | None = None) -> Browser:
        """The running browser; waits for the start, restarts a dead one (and tells ``caller``)."""
        if not self._ready.is_set() and not self._ready.wait(START_WAIT_S):
            raise Unavailable("the browser is still starting", code="browser_starting")
        b = self.browser
        if b is not None and b.alive():
            return b  # the common case, without the lock
        with self._lock:
            b = self.browser
            if b is not None and b.alive():
                return b
            if self._stopped:
                raise Unavailable("the bridge is shutting down", code="browser_draining")
            if b is not None:
                log.warning("browser is gone; restarting it")
            fresh = self._relaunch(b)
            if b is not None:
                self.restarts += 1
                if caller is not None:
                    caller.browser_restarted = True
            return fresh

    def restart(self) -> Browser:
        """Stop the browser and start a fresh one (``POST /browser/restart``): every tab is gone.

        The profile stays locked to this process throughout. Raises Unavailable when the new
        browser does not start.
        """
        with self._lock:
            if self._stopped:
                raise Unavailable("the bridge is shutting down", code="browser_draining")
            b, self.browser = self.browser, None
            return self._relaunch(b)

    def _relaunch(self, old: Browser | None) -> Browser:
        """Stop ``old`` (dead, half-dead or alive) and start a fresh browser, under the lock: every
        tab and current-tab pointer goes; the pages come back when tabs are restored."""
        urls = tab_policy.urls_to_restore(self.config, old)
        if old is not None:
            try:
                old.stop()
            except (CDPError, CDPTimeout, BrowserGone, OSError):  # going anyway: we only tidy up
                pass
        self.current = None
        self.agent_tabs.clear()
        self.guards.clear()
        self._launch()
        if self.browser is None:
            raise Unavailable(f"the browser could not be started: {self.start_error}", code="browser_launch_failed")
        tab_policy.reopen(self.browser, urls, self.refusal)
        return self.browser

    def refusal(self, url: str) -> str | None:
        """Why the browser must not open ``url`` on its own (a page a tab opened, a tab restored), or None.

        Only the policy's refusals count: a URL it cannot judge by its host (``blob:``, which is
        the opener's own origin) is no reason to close a page. A warning has nobody to reach here.
        """
        try:
            self.navigation.check(url)
        except Forbidden as refused:
            return refused.message
        except BadRequest:
            pass
        return None

    # --- tabs ------------------------------------------------------------------------------------
    def visible_pages(self, caller: Caller) -> list[dict[str, Any]]:
        b = self.ensure(caller)
        pages = [p for p in b.pages() if not p.get("url", "").startswith(HIDDEN_PREFIXES)
                 and p.get("url") != "about:blank"]
        # The caller's current tab first, then newest first: the tab an agent most likely means leads.
        cur = self.agent_tabs.get(caller.agent) if caller.agent else self.current
        pages.sort(key=lambda p: (p["targetId"] != cur,))
        return pages

    def has_current(self, agent: str) -> bool:
        """Whether ``agent`` has a current tab that is still open."""
        tab_id = self.agent_tabs.get(agent)
        return bool(tab_id) and self.browser is not None and self.browser.has_target(tab_id)  # type: ignore[arg-type]

    def mark(self, tab: Tab, caller: Caller) -> Tab:
        """Make ``tab`` the caller's current tab: an agent's own, or the anonymous callers' one.

        (Moving the anonymous current tab on every lookup, whoever looks, would let a dashboard
        polling screenshots, or any agent, pull anonymous callers' reads onto other tabs.)
        """
        if caller.agent:
            self.agent_tabs[caller.agent] = tab.id
        else:
            self.current = tab.id
        tab.last_used = time.time()
        caller.tab_id = tab.id
        return tab

    def tab(self, tab_id: str | None, caller: Caller) -> Tab:
        """The tab a request names, or the caller's current tab (reference §0.2)."""
        b = self.ensure(caller)
        if tab_id:
            try:
                return self.mark(b.tab(tab_id), caller)
            except KeyError:
                details = {"browserRestarted": True} if caller.browser_restarted else None
                raise NotFound(f"tab {tab_id} not found", code="tab_not_found", details=details) from None
            except TargetClosed:
                raise NotFound(f"tab {tab_id} not found (closed)", code="tab_not_found") from None
        if caller.agent:
            cur = self.agent_tabs.get(caller.agent)
            if cur and b.has_target(cur):
                return self.mark(b.tab(cur), caller)
            raise Conflict(f"agent {caller.agent!r} has no current tab: navigate first or pass tabId",
                           code="no_current_tab")
        for candidate in self._anonymous_order(b):
            try:
                return self.mark(b.tab(candidate), caller)
            except (KeyError, TargetClosed):
                continue
        raise NotFound("no tabs open: POST /navigate to open one", code="no_tabs")

    def _anonymous_order(self, b: Browser) -> list[str]:
        order = [self.current] if self.current and b.has_target(self.current) else []
        pages = [p for p in b.pages() if p.get("agentTab", True)]  # a person's own tabs: only when named
        pages.sort(key=lambda p: -b.last_used(p["targetId"]))
        return order + [p["targetId"] for p in pages]

    def new_tab(self, caller: Caller) -> Tab:
        b = self.ensure(caller)
        self._evict(b)
        return self.mark(b.new_tab(), caller)

    def _evict(self, b: Browser) -> None:
        """Make room for one more tab under ``instanceDefaults.maxTabs`` (``tabEvictionPolicy``).

        In extension mode only the agents' tabs count (and close): a person's own tabs are not ours.
        """
        tab_policy.make_room(b, self.config, self.guards.held)

    def close(self, tab: Tab, caller: Caller) -> None:
        b = self.ensure(caller)
        if len(b.pages()) <= 1:
            raise Conflict("cannot close the last tab: at least one tab must remain", code="last_tab")
        b.close_tab(tab.id)
        self.guards.forget(tab.id)
        if self.current == tab.id:
            self.current = None
        for agent, tid in list(self.agent_tabs.items()):
            if tid == tab.id:
                del self.agent_tabs[agent]
