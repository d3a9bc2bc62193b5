"""Calling into the page from our isolated world: evaluating, calling on elements, frame order.

Every read and action runs its script in our isolated world of the frame (``Page.createIsolatedWorld``),
where page scripts cannot see or tamper with it; the world shares the page's DOM and storage. The
walker and DOM helpers (``scripts/``) live there as ``globalThis.__pinchtab`` and are loaded on
demand when a document lacks them. All of this runs on the tab's worker.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .browser import WORLD, world_scripts
from .errors import CDPError, NavigationError
from .tab import Frame, Tab

_MISSING = "__pinchtab_missing__"
_SCRIPT: str | None = None


def _script() -> str:
    global _SCRIPT
    if _SCRIPT is None:
        _SCRIPT = world_scripts()
    return _SCRIPT


@dataclass
class Element:
    """A DOM node we can act on: a remote object in our world of its frame."""

    object_id: str
    frame_id: str
    session_id: str
    ctx: int
    ref: str | None = None


def world(tab: Tab, frame: Frame) -> int:
    """Our isolated world's context in ``frame``, created if missing."""
    if frame.world_ctx is None:
        res = tab.call("Page.createIsolatedWorld", {"frameId": frame.frame_id, "worldName": WORLD},
                       session_id=frame.session_id)
        frame.world_ctx = res["executionContextId"]
    return frame.world_ctx


def _is_gone_context(exc: CDPError) -> bool:
    msg = exc.cdp_message.lower()
    return "context" in msg and ("not find" in msg or "destroyed" in msg or "not found" in msg)


def _exception_text(res: dict[str, Any]) -> str:
    """The first line of a script exception CDP reported (``exceptionDetails``)."""
    d = res["exceptionDetails"]
    text = (d.get("exception") or {}).get("description") or d.get("text", "script error")
    return str(text).split("\n")[0]


def evaluate(tab: Tab, frame: Frame, expression: str, *, by_value: bool = True, timeout_s: float | None = None,
             await_promise: bool = False) -> Any:
    """Evaluate ``expression`` in our world of ``frame`` (loading the walker first if needed).

    Returns the value (``by_value``) or the remote object. A context that vanished under us (the
    frame navigated) is recreated once. Raises CDPError for a script exception.
    """
    loaded = False
    for attempt in range(3):
        ctx = world(tab, frame)
        # The walker is normally there already (added to every new document); load it when not.
        expr = expression if loaded else f"globalThis.__pinchtab ? ({expression}) : {_MISSING!r}"
        try:
            res = tab.call("Runtime.evaluate", {"expression": expr, "contextId": ctx, "returnByValue": by_value,
                                                "awaitPromise": await_promise}, session_id=frame.session_id,
                           timeout_s=timeout_s)
        except CDPError as exc:
            if attempt < 2 and _is_gone_context(exc):
                frame.world_ctx = None
                continue
            raise
        if "exceptionDetails" in res:
            raise CDPError("Runtime.evaluate", _exception_text(res))
        result = res["result"]
        if not loaded and result.get("value") == _MISSING:
            tab.call("Runtime.evaluate", {"expression": _script(), "contextId": ctx}, session_id=frame.session_id)
            loaded = True
            continue
        return result.get("value") if by_value else result
    raise AssertionError("unreachable")


def main_frame(tab: Tab) -> Frame:
    """The tab's main frame; NavigationError while it has none (a tab still being set up)."""
    frame = tab.frames.get(tab.main_frame_id or "")
    if frame is None:
        raise NavigationError("the tab has no document yet")
    return frame


def call_on(tab: Tab, el: Element, function: str, *args: Any, by_value: bool = True) -> Any:
    """Call ``function`` with ``this`` = the element and JSON ``args``, in our world.

    Returns the value (``by_value``) or the remote object; raises CDPError for a script exception.
    """
    res = tab.call("Runtime.callFunctionOn", {
        "functionDeclaration": function, "objectId": el.object_id,
        "arguments": [{"value": a} for a in args], "returnByValue": by_value, "awaitPromise": False,
    }, session_id=el.session_id)
    if "exceptionDetails" in res:
        raise CDPError("Runtime.callFunctionOn", _exception_text(res))
    return res["result"].get("value") if by_value else res["result"]


def frames_in_order(tab: Tab) -> list[Frame]:
    """The tab's frames, the main frame first, each before the frames it holds."""
    children: dict[str | None, list[Frame]] = {}
    for f in tab.frames.values():
        children.setdefault(f.parent_id, []).append(f)
    out: list[Frame] = []

    def walk(fid: str) -> None:
        for child in children.get(fid, []):
            out.append(child)
            walk(child.frame_id)

    main = tab.frames.get(tab.main_frame_id or "")
    if main is None:
        return []
    out.append(main)
    walk(main.frame_id)
    return out
