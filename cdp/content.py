"""Reading a tab: readable or raw text, screenshots (of the page or of one element)."""
from __future__ import annotations

import base64
from typing import Any

from .elements import element_clip
from .errors import CDPError, CDPTimeout, TargetClosed
from .page import evaluate, frames_in_order
from .tab import Tab


def text(tab: Tab, *, raw: bool = False) -> str:
    """The page's text: readable (article or body without page chrome) or raw ``innerText``.

    Every frame's text follows the main frame's, in document order, each after a blank line,
    cross-origin frames included.
    """
    expr = "globalThis.__pinchtab.rawText()" if raw else "globalThis.__pinchtab.readable()"
    parts = []
    for frame in frames_in_order(tab):
        try:
            t = evaluate(tab, frame, expr)
        except (CDPError, CDPTimeout, TargetClosed):
            # A frame that navigated, hung or detached (an out-of-process iframe's session) mid-read
            # is skipped; the other frames' text is still worth answering with.
            continue
        if t and t.strip():
            parts.append(t.strip())
    return "\n\n".join(parts)


def screenshot(tab: Tab, *, fmt: str = "jpeg", quality: int = 80, full_page: bool = False,
               scale: float = 1.0, selector: str = "") -> bytes:
    """The viewport (or the whole page, or one element with ``selector``) as jpeg or png bytes."""
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
    data = tab.call("Page.captureScreenshot", params)["data"]
    return base64.b64decode(data)
