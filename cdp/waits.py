"""Waiting on a tab, always bounded: for a condition (``POST /wait``), polling only what has no
event, and for the page to settle before a snapshot is taken after an action."""
from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from typing import Any

from . import frame_scope, selectors
from .errors import CDPError
from .page import evaluate
from .tab import Tab

POLL_S = 0.1


def poll(tab: Tab, check: Callable[[], bool], timeout_s: float, interval_s: float = POLL_S) -> bool:
    """True once ``check()`` holds, False at the deadline; events are handled between checks."""
    deadline = time.monotonic() + timeout_s
    while True:
        if check():
            return True
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        tab.wait_for(lambda: False, min(interval_s, left))  # handles the tab's events meanwhile


def glob_match(pattern: str, url: str) -> bool:
    """``**`` any characters, ``*`` any but ``/``, ``?`` one character; a pattern without wildcards
    matches as a substring (people paste a path)."""
    if not any(c in pattern for c in "*?"):
        return pattern in url
    rx = ""
    i = 0
    while i < len(pattern):
        if pattern.startswith("**", i):
            rx += ".*"
            i += 2
        elif pattern[i] == "*":
            rx += "[^/]*"
            i += 1
        elif pattern[i] == "?":
            rx += "."
            i += 1
        else:
            rx += re.escape(pattern[i])
            i += 1
    return re.fullmatch(rx, url) is not None


_VISIBLE = """(kind, value) => globalThis.__pinchtab.matches(kind, value).some((el) => {
  const r = el.getBoundingClientRect(), s = getComputedStyle(el);
  return r.width > 0 && r.height > 0 && s.visibility !== 'hidden' && s.display !== 'none';
})"""


def condition(tab: Tab, mode: str, value: Any, *, state: str = "visible", idle_ms: int = 500) -> Callable[[], bool]:
    """The check for one wait mode (selector, text, notText, url, load, fn). Selectors and text
    are looked for in the tab's frame scope (``POST /frame``), as every selector is.

    ``load``: ``ready-state`` (the document loaded), ``content-loaded`` (parsed, or loaded), or
    ``network-idle``: no request of the tab in flight for ``idle_ms`` (its network capture counts).
    """
    main = lambda: tab.frames.get(tab.main_frame_id or "")  # noqa: E731 (the main frame may change)
    if mode == "selector":
        sel = selectors.parse(value)
        if sel.kind in ("css", "xpath", "text") and sel.which is None:
            expr = f"({_VISIBLE})({json.dumps(sel.kind)}, {json.dumps(sel.value)})"

            def seen() -> bool:
                return any(_safe_eval(tab, f, expr, sel) for f in frame_scope.search_frames(tab))
        else:
            def seen() -> bool:
                return selectors.count(tab, value) > 0
        return seen if state != "hidden" else (lambda: not seen())
    if mode in ("text", "notText"):
        expr = f"(document.body ? document.body.innerText : '').includes({json.dumps(value)})"

        def has_text() -> bool:
            return any(_safe_eval(tab, f, expr) for f in frame_scope.search_frames(tab))
        return has_text if mode == "text" else (lambda: not has_text())
    if mode == "url":
        return lambda: glob_match(value, tab.url)
    if mode == "load":
        if value in ("network-idle", "networkidle"):
            return lambda: tab.network.idle_for() * 1000 >= idle_ms
        want = {"ready-state": "load", "content-loaded": "DOMContentLoaded"}[value]

        def loaded() -> bool:
            f = main()
            return f is not None and (want in f.lifecycle or (want == "DOMContentLoaded" and "load" in f.lifecycle))
        return loaded
    if mode == "fn":
        def truthy() -> bool:
            try:
                res = tab.call("Runtime.evaluate", {"expression": value, "returnByValue": True, "awaitPromise": True})
            except CDPError:
                return False
            return bool((res.get("result") or {}).get("value")) and "exceptionDetails" not in res
        return truthy
    raise ValueError(f"unknown wait mode {mode!r}")


def _safe_eval(tab: Tab, frame: Any, expr: str, sel: selectors.Selector | None = None) -> bool:
    try:
        return bool(evaluate(tab, frame, expr))
    except CDPError as exc:
        if sel is not None:
            selectors.refuse_invalid(sel, exc)  # a selector the page cannot read never matches: say so now
        return False  # a frame mid-navigation: ask again next time


def settle(tab: Tab, *, quiet_ms: int = 60, cap_ms: int = 1500) -> None:
    """Wait until the page has settled: its document parsed, then the DOM quiet for ``quiet_ms``.

    Bounded by ``cap_ms`` (a page that never stops animating still answers), not a fixed sleep.
    """
    main = tab.frames.get(tab.main_frame_id or "")
    if main is None:
        return
    tab.wait_for(lambda: "DOMContentLoaded" in main.lifecycle or "load" in main.lifecycle, cap_ms / 1000)
    try:
        evaluate(tab, main, f"globalThis.__pinchtab.quiet({quiet_ms}, {cap_ms})", await_promise=True,
                 timeout_s=cap_ms / 1000 + 2)
    except CDPError:
        pass  # the document was replaced while we waited: the snapshot reads the new one
