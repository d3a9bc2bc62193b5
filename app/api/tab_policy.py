"""What happens to tabs as a whole (config ``instanceDefaults``): how many, for how long, after a restart.

* ``maxTabs`` and ``tabEvictionPolicy``: a new tab past the limit closes the least recently used
  tab (``close_lru``), the oldest (``close_oldest``), or is refused (``reject``: 409
  ``tab_limit_reached``). Tabs a lease or a handoff holds are never closed for room.
* ``tabPolicy.lifecycle = close_idle``: as in the original, a read or an action on a tab (``/text``,
  ``/snapshot``, ``/action``, ...) arms its timer, the next one within ``closeDelaySec`` starts it
  again, and a ``/navigate`` of the tab disarms it (fresh work: the tab stays until read again).
  The tab closes when its timer runs out; held and busy tabs stay, and so does the browser's last page.
* ``tabPolicy.restore`` (unless ``noRestore``): after the browser restarts, the pages its tabs
  showed open again; a bridge that shuts down keeps them for its next start.
* ``maxParallelTabs``: how many tabs run CDP work at once (0: automatic).

The choices are pure functions of the tabs' times; ``IdleCloser`` is the one thread, started
only when ``close_idle`` is on, and an ``after_request`` hook arms and disarms its timers.
"""
from __future__ import annotations

import json
import logging
import os
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, Protocol

from flask import Response, g, request

from cdp.browser import Browser
from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed

from ..config import Config
from ..web.errors import Conflict, StorageError
from ..web.files import write_atomic
from .tab_guards import TabGuards


class BrowserState(Protocol):
    """What the idle closer needs of the bridge's browser state (``browser_state.BrowserState``,
    which uses this module, so it is not imported here)."""

    config: Config
    browser: Browser | None
    guards: TabGuards

log = logging.getLogger(__name__)

RESTORABLE = ("http://", "https://")
MAX_AUTO_PARALLEL = 16


def parallel_limit(config: Config) -> int:
    """``maxParallelTabs``, or for 0 twice the CPUs (tabs mostly wait on Chrome), at least 4."""
    n = config.instance_defaults.max_parallel_tabs
    return n if n > 0 else min(MAX_AUTO_PARALLEL, max(4, 2 * (os.cpu_count() or 2)))


# --- room for a new tab -------------------------------------------------------------------------
def eviction_victims(pages: list[dict[str, Any]], max_tabs: int, policy: str,
                     used_at: Callable[[str], float], created_at: Callable[[str], float],
                     held: Callable[[str], bool]) -> list[str]:
    """The tab ids to close so that one more tab fits in ``max_tabs``.

    Raises 409 ``tab_limit_reached`` for ``reject``, or when the tabs that could go are too few
    (held tabs never go).
    """
    excess = len(pages) + 1 - max_tabs
    if excess <= 0:
        return []
    if policy == "reject":
        raise _limit(max_tabs, "tabEvictionPolicy is reject: close a tab first (POST /close)")
    free = [p["targetId"] for p in pages if not held(p["targetId"])]
    if len(free) < excess:
        raise _limit(max_tabs, "the other tabs are locked or handed off")
    key = created_at if policy == "close_oldest" else used_at
    free.sort(key=key)
    return free[:excess]


def _limit(max_tabs: int, why: str) -> Conflict:
    return Conflict(f"{max_tabs} tabs are open, the most instanceDefaults.maxTabs allows; {why}",
                    code="tab_limit_reached",
                    details={"maxTabs": max_tabs, "setting": "instanceDefaults.maxTabs"})


def make_room(b: Browser, config: Config, held: Callable[[str], bool]) -> None:
    """Close tabs so a new one fits (see ``eviction_victims``); agents' tabs only in extension mode."""
    d = config.instance_defaults
    pages = [p for p in b.pages() if p.get("agentTab", True)]
    for target_id in eviction_victims(pages, d.max_tabs, d.tab_eviction_policy, b.last_used, b.created_at, held):
        try:
            b.close_tab(target_id)
        except (CDPError, CDPTimeout, BrowserGone, TargetClosed):  # closed meanwhile, or the browser went
            pass


# --- after a restart ----------------------------------------------------------------------------
def restores(config: Config) -> bool:
    """``tabPolicy.restore``, unless ``noRestore`` (the original's switch) says otherwise."""
    d = config.instance_defaults
    return d.tab_policy.restore and not d.no_restore


def urls_to_restore(config: Config, b: Browser | None) -> list[str]:
    """The web pages the (old) browser's tabs showed, when tabs are restored; else none."""
    if b is None or not restores(config):
        return []
    urls = [p.get("url", "") for p in b.pages() if p.get("agentTab", True)]
    return [u for u in urls if u.startswith(RESTORABLE)][: config.instance_defaults.max_tabs]


def _saved_path(config: Config) -> Path:
    return config.server.state_dir / "tabs" / "restore.json"


def save_for_restore(config: Config, b: Browser | None) -> None:
    """At shutdown: keep the tabs' pages, so the next start of this bridge reopens them."""
    urls = urls_to_restore(config, b)
    if not urls:
        return
    try:
        path = _saved_path(config)
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps({"urls": urls}).encode(), what="the tabs to restore")
    except (OSError, StorageError) as exc:  # a shutdown goes on without it
        log.warning("could not keep the tabs for the next start: %s", exc)


def saved_urls(config: Config) -> list[str]:
    """At start: the pages the last shutdown kept (once: the file is removed), when tabs are restored."""
    path = _saved_path(config)
    try:
        data = json.loads(path.read_bytes())
        path.unlink()
    except (OSError, ValueError):
        return []
    if not restores(config) or not isinstance(data, dict) or not isinstance(data.get("urls"), list):
        return []
    urls = [u for u in data["urls"] if isinstance(u, str) and u.startswith(RESTORABLE)]
    return urls[: config.instance_defaults.max_tabs]


def reopen(b: Browser | None, urls: Iterable[str], refusal: Callable[[str], str | None]) -> int:
    """Open a tab for each URL (Chrome loads them on its own) that ``refusal`` (the navigation
    policy, as it stands now) has nothing against; how many opened."""
    opened = 0
    if b is None or b.conn is None:
        return 0
    for url in urls:
        why = refusal(url)
        if why:  # the page was open before (a link can go anywhere), or the config changed since
            log.warning("not reopening a tab on %s: %s", url[:200], why)
            continue
        try:
            b.conn.call("Target.createTarget", {"url": url}, timeout_s=10)
            opened += 1
        except (CDPError, CDPTimeout, BrowserGone) as exc:
            log.warning("could not reopen a tab after the restart: %s", exc)
    return opened


# --- idle tabs ------------------------------------------------------------------------------------
# What arms a tab's timer: the original's reads and actions (``/tabs/{id}/...`` twins alike). A
# screenshot is not among them: a dashboard watching a tab must not start closing it.
ARMS = frozenset({
    ("GET", "/text"), ("GET", "/snapshot"), ("GET", "/capture"), ("GET", "/a11y/audit"), ("GET", "/timing"),
    ("GET", "/title"), ("GET", "/url"), ("GET", "/html"), ("GET", "/styles"), ("GET", "/value"), ("GET", "/attr"),
    ("GET", "/box"), ("GET", "/count"), ("GET", "/visible"), ("GET", "/enabled"), ("GET", "/checked"),
    ("POST", "/action"), ("GET", "/action"), ("POST", "/actions"), ("POST", "/find"),
})
DISARMS = frozenset({("POST", "/navigate"), ("GET", "/navigate")})
TWIN_PREFIX = "/tabs/<tab_id>"


def timer_change(method: str, rule: str) -> str:
    """What a request (its method and URL rule) does to its tab's timer: ``arm``, ``disarm`` or ``""``."""
    key = (method, rule.removeprefix(TWIN_PREFIX))
    return "arm" if key in ARMS else "disarm" if key in DISARMS else ""


def due_tabs(deadlines: dict[str, float], now: float, pages: list[str], keeps: Callable[[str], bool]) -> list[str]:
    """The open tabs (of ``pages``, the browser's page targets) whose timer ran out by ``now`` and that
    may close: not kept, and never every page (the latest armed stays, so the browser keeps one)."""
    due = [t for t in pages if t in deadlines and deadlines[t] <= now and not keeps(t)]
    if due and len(due) == len(pages):
        due.remove(max(due, key=deadlines.__getitem__))
    return due


class IdleCloser:
    """``tabPolicy.lifecycle = close_idle``: per-tab timers of ``closeDelaySec``, and a thread that
    closes the tabs whose timer ran out.

    Only armed tabs close (a page Chrome shows that no read touched is not an agent's). It holds its
    browser state weakly and ends with it, or on ``stop``.
    """

    def __init__(self, state: BrowserState) -> None:
        self._state = weakref.ref(state)
        self.delay_s = float(state.config.instance_defaults.tab_policy.close_delay_sec)
        self._deadlines: dict[str, float] = {}  # tab id -> time.monotonic() its timer runs out
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sweep_loop, name="tab-idle", daemon=True)

    def start(self) -> IdleCloser:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

    def arm(self, tab_id: str, now: float | None = None) -> None:
        """Start (or start again) the tab's timer."""
        with self._lock:
            self._deadlines[tab_id] = (time.monotonic() if now is None else now) + self.delay_s

    def disarm(self, tab_id: str) -> None:
        """Drop the tab's timer, if any: it stays open until a read arms it again."""
        with self._lock:
            self._deadlines.pop(tab_id, None)

    def armed(self, tab_id: str) -> bool:
        with self._lock:
            return tab_id in self._deadlines

    def _sweep_loop(self) -> None:
        interval = max(0.1, min(5.0, self.delay_s / 4))
        while not self._stop.wait(interval):
            state = self._state()
            if state is None:
                return
            try:
                self.sweep(state)
            except Exception:  # a bad sweep must not end the policy
                log.exception("idle tab sweep failed")
            del state

    def sweep(self, state: BrowserState, now: float | None = None) -> list[str]:
        """Close the tabs whose timer ran out; their ids."""
        b = state.browser
        if b is None or not b.alive():
            return []
        pages = b.pages()
        ids = [p["targetId"] for p in pages]
        ours = {p["targetId"] for p in pages if p.get("agentTab", True)}  # a person's own tabs: never
        with self._lock:
            for gone in set(self._deadlines) - set(ids):  # closed by someone else, or the browser restarted
                del self._deadlines[gone]
            deadlines = dict(self._deadlines)
        victims = due_tabs(deadlines, time.monotonic() if now is None else now, ids,
                           lambda t: t not in ours or state.guards.held(t) or b.busy(t))
        for target_id in victims:
            with self._lock:
                if self._deadlines.get(target_id) != deadlines[target_id]:
                    continue  # armed again or disarmed since the choice: a request just used it
                del self._deadlines[target_id]
            try:
                b.close_tab(target_id)
            except (CDPError, CDPTimeout, BrowserGone, TargetClosed):
                continue
            state.guards.forget(target_id)
            log.info("closed tab %s: unused for %.0f s after its last read (tabPolicy.closeDelaySec)",
                     target_id, self.delay_s)
        return victims


def register(app: Any, state: BrowserState) -> IdleCloser | None:
    """Start the idle-tab closer when ``tabPolicy.lifecycle`` is ``close_idle`` (stopped on shutdown), and
    the hook by which the requests that use a tab arm and disarm its timer."""
    if state.config.instance_defaults.tab_policy.lifecycle != "close_idle":
        return None
    closer = IdleCloser(state).start()
    app.extensions["pinchtab.tab_idle"] = closer
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(closer.stop)

    @app.after_request
    def _timer(resp: Response) -> Response:
        # After the work, as the original: a slow read does not count against its own tab's delay.
        caller = g.get("caller")
        tab_id = caller.tab_id if caller is not None else None
        if tab_id and request.url_rule is not None:
            change = timer_change(request.method, request.url_rule.rule)
            if change == "arm":
                closer.arm(tab_id)
            elif change == "disarm":
                closer.disarm(tab_id)
        return resp

    return closer
