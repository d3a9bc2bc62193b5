"""What happens to tabs as a whole (config ``instanceDefaults``): how many, for how long, after a restart.

* ``maxTabs`` and ``tabEvictionPolicy``: a new tab past the limit closes the least recently used
  tab (``close_lru``), the oldest (``close_oldest``), or is refused (``reject``: 409
  ``tab_limit_reached``). Tabs a lease or a handoff holds are never closed for room.
* ``tabPolicy.lifecycle = close_idle``: a tab no request has used for ``closeDelaySec`` closes
  (any use, a navigate or a read, starts its delay again); held and busy tabs stay.
* ``tabPolicy.restore`` (unless ``noRestore``): after the browser restarts, the pages its tabs
  showed open again; a bridge that shuts down keeps them for its next start.
* ``maxParallelTabs``: how many tabs run CDP work at once (0: automatic).

The choices are pure functions of the tabs' times; ``IdleCloser`` is the one thread, started
only when ``close_idle`` is on.
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

from cdp.browser import Browser
from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed

from ..config import Config
from ..errors import Conflict, StorageError
from ..files import write_atomic
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


def reopen(b: Browser | None, urls: Iterable[str]) -> int:
    """Open a tab for each URL (Chrome loads them on its own); how many opened."""
    opened = 0
    if b is None or b.conn is None:
        return 0
    for url in urls:
        try:
            b.conn.call("Target.createTarget", {"url": url}, timeout_s=10)
            opened += 1
        except (CDPError, CDPTimeout, BrowserGone) as exc:
            log.warning("could not reopen a tab after the restart: %s", exc)
    return opened


# --- idle tabs ------------------------------------------------------------------------------------
def idle_tabs(ids: list[str], now: float, delay_s: float, used_at: Callable[[str], float],
              keeps: Callable[[str], bool]) -> list[str]:
    """The tabs unused for ``delay_s`` that may close: not kept, and never every tab (the most
    recently used one stays, so the browser keeps a page)."""
    idle = [t for t in ids if now - used_at(t) >= delay_s and not keeps(t)]
    if idle and len(idle) == len(ids):
        idle.remove(max(idle, key=used_at))
    return idle


class IdleCloser:
    """``tabPolicy.lifecycle = close_idle``: a thread that closes tabs nobody used for ``closeDelaySec``.

    Only tabs that served requests count (a page Chrome shows that no request ever touched is not
    an agent's). It holds its browser state weakly and ends with it, or on ``stop``.
    """

    def __init__(self, state: BrowserState) -> None:
        self._state = weakref.ref(state)
        self.delay_s = float(state.config.instance_defaults.tab_policy.close_delay_sec)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sweep_loop, name="tab-idle", daemon=True)

    def start(self) -> IdleCloser:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)

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
        """Close the idle tabs now; their ids."""
        b = state.browser
        if b is None or not b.alive():
            return []
        ids = [p["targetId"] for p in b.pages() if p.get("agentTab", True) and b.last_used(p["targetId"])]
        victims = idle_tabs(ids, time.time() if now is None else now, self.delay_s, b.last_used,
                            lambda t: state.guards.held(t) or b.busy(t))
        for target_id in victims:
            try:
                b.close_tab(target_id)
            except (CDPError, CDPTimeout, BrowserGone, TargetClosed):
                continue
            state.guards.forget(target_id)
            log.info("closed tab %s: idle for %.0f s (tabPolicy.closeDelaySec)", target_id, self.delay_s)
        return victims


def register(app: Any, state: BrowserState) -> IdleCloser | None:
    """Start the idle-tab closer when ``tabPolicy.lifecycle`` is ``close_idle`` (stopped on shutdown)."""
    if state.config.instance_defaults.tab_policy.lifecycle != "close_idle":
        return None
    closer = IdleCloser(state).start()
    app.extensions["pinchtab.tab_idle"] = closer
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(closer.stop)
    return closer
