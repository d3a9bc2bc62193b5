"""Reading a tab: readable or raw text, screenshots (of the page or of one element)."""
from __future__ import annotations

import base64
from typing import Any

from . import frame_scope, selectors
from .elements import element_clip
from .errors import CDPError, CDPTimeout, NoSuchElement, TargetClosed
from .page import call_on, evaluate
from .tab import Tab


def text(tab: Tab, *, raw: bool = False, timeout_s: float | None = None, frame_id: str = "") -> str:
    """The page's text: readable (article or body without page chrome) or raw ``innerText``.

    Every frame's text follows the main frame's, in document order, each after a blank line,
    cross-origin frames included. ``timeout_s`` bounds each frame's read (a frame too slow is skipped).
    With ``frame_id`` (else the tab's frame scope), that frame's text and its own frames' only;
    NoSuchElement when the tab has no such frame.
    """
    expr = "globalThis.__pinchtab.rawText()" if raw else "globalThis.__pinchtab.readable()"
    if frame_id:
        if frame_id not in tab.frames:
            raise NoSuchElement(f"no frame {frame_id} in the tab; a snapshot names frames (frameId, childFrameId)")
        frames = frame_scope.subtree(tab, tab.frames[frame_id])
    else:
        frames = frame_scope.search_frames(tab)
    parts = []
    for frame in frames:
        try:
            t = evaluate(tab, frame, expr, timeout_s=timeout_s)
        except (CDPError, CDPTimeout, TargetClosed):
            # A frame that navigated, hung or detached (an out-of-process iframe's session) mid-read
            # is skipped; the other frames' text is still worth answering with.
            continue
        if t and t.strip():
            parts.append(t.strip())
    return "\n\n".join(parts)


def element_text(tab: Tab, selector: str) -> str:
    """The rendered text (``innerText``) of the element a selector names, in the tab's frame scope."""
    el = selectors.resolve(tab, selector)
    return call_on(tab, el, "function() { return this.innerText ?? this.textContent ?? ''; }") or ""


def screenshot(tab: Tab, *, fmt: str = "jpeg", quality: int = 80, full_page: bool = False,
               scale: float = 1.0, selector: str = "") -> bytes:
    """The viewport (or the whole page, or one element with ``selector``) as jpeg or png bytes."""
    return shoot(tab, screenshot_params(tab, fmt=fmt, quality=quality, full_page=full_page, scale=scale,
                                        selector=selector))


def shoot(tab: Tab, params: dict[str, Any]) -> bytes:
    """``Page.captureScreenshot`` with ``params`` (from :func:`screenshot_params`): the image's bytes."""
    return base64.b64decode(tab.call("Page.captureScreenshot", params)["data"])


def screenshot_params(tab: Tab, *, fmt: str = "jpeg", quality: int = 80, full_page: bool = False,
                      scale: float = 1.0, selector: str = "") -> dict[str, Any]:
    """What to ask ``Page.captureScreenshot`` for; with ``selector``, ``clip`` is the element's box in
    document coordinates (it is scrolled into view first, so read positions after this)."""
    params: dict[str, Any] = {"format": fmt, "captureBeyondViewport": full_page}
    if fmt == "jpeg":
        params["quality"] = quality
    # A tab whose input pipeline is stuck draws no new frames, so a plain capture (which waits for
    # one) never answers; an off-screen capture of the same area still does.
    offscreen = tab.input_stuck
    if selector:
        # Clipped to the element; beyondViewport does not apply (the element decides the area).
        clip, beyond = element_clip(tab, selector)
        params["clip"] = {**clip, "scale": scale}
        params["captureBeyondViewport"] = beyond or offscreen
    elif full_page or scale != 1.0 or offscreen:
        metrics = tab.call("Page.getLayoutMetrics")
        size = metrics["cssContentSize"] if full_page else metrics["cssLayoutViewport"]
        x = 0 if full_page else size.get("pageX", 0)
        y = 0 if full_page else size.get("pageY", 0)
        params["clip"] = {"x": x, "y": y, "width": size.get("width", size.get("clientWidth")),
                          "height": size.get("height", size.get("clientHeight")), "scale": scale}
        params["captureBeyondViewport"] = full_page or offscreen
    return params
