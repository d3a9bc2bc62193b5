"""Pictures of a tab with more than pixels: a screenshot with numbered boxes over its controls, a
screenshot and a snapshot from one document (``GET /capture``), and animations held still for either.

Everything here runs on the tab's worker, so nothing else acts on the tab between the snapshot
and the screenshot; only the page itself can move on (its timers, a navigation it starts), which
is what ``navigated`` reports.
"""
from __future__ import annotations

import secrets
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from . import annotate, content, selectors, snapshot
from .errors import CDPError
from .navigation import page_info
from .node_boxes import boxes
from .page import evaluate, frames_in_order, main_frame
from .tab import Tab
from .waits import settle

WAITS = ("stable", "load", "none")
STABLE_QUIET_MS = 250  # wait=stable: the DOM quiet this long...
STABLE_CAP_MS = 750    # ...or this long at most, for a page that never stops moving
LOAD_CAP_S = 10.0

# Holds every animation and transition where it is (CSS and Web Animations alike) and stops new
# transitions, until released; the paused animations are kept in our world to resume exactly those.
_PAUSE = """(() => {
  if (document.getElementById('__pinchtab_still__')) return 0;
  const style = document.createElement('style');
  style.id = '__pinchtab_still__';
  style.textContent = '*,*::before,*::after{animation-play-state:paused!important;transition:none!important;' +
    'caret-color:transparent!important}';
  (document.head || document.documentElement).appendChild(style);
  const running = document.getAnimations ? document.getAnimations().filter((a) => a.playState === 'running') : [];
  running.forEach((a) => a.pause());
  globalThis.__pinchtabPaused = running;
  return running.length;
})()"""

_RESUME = """(() => {
  const style = document.getElementById('__pinchtab_still__');
  if (style) style.remove();
  (globalThis.__pinchtabPaused || []).forEach((a) => { try { a.play(); } catch (e) {} });
  globalThis.__pinchtabPaused = null;
  return true;
})()"""


@contextmanager
def still(tab: Tab, enabled: bool = True) -> Iterator[None]:
    """Hold the page's animations and transitions still (every frame) while the block runs."""
    if not enabled:
        yield
        return
    frames = frames_in_order(tab)
    for frame in frames:
        try:
            evaluate(tab, frame, _PAUSE)
        except CDPError:
            pass  # a frame navigating away: nothing there to hold
    try:
        yield
    finally:
        for frame in frames:
            try:
                evaluate(tab, frame, _RESUME)
            except CDPError:
                pass


def screenshot(tab: Tab, *, fmt: str = "jpeg", quality: int = 80, full_page: bool = False, scale: float = 1.0,
               selector: str = "", annotated: bool = False,
               no_animations: bool = False) -> tuple[bytes, list[dict[str, Any]] | None]:
    """A screenshot (see ``content.screenshot``) and, with ``annotated``, the boxes drawn on it.

    ``annotated`` draws a numbered box over each visible interactive element (inside ``selector``
    when given) for the capture only, and answers them as ``{ref, role, name, tag, box}``, boxes in
    the picture's coordinates (the clip's with a selector, the document's with ``full_page``).
    """
    with still(tab, no_animations):
        params = content.screenshot_params(tab, fmt=fmt, quality=quality, full_page=full_page, scale=scale,
                                           selector=selector)
        if not annotated:
            return content.shoot(tab, params), None
        items = annotate.annotations(tab, selector)
        vp = _layout(tab)
        dx, dy = 0.0, 0.0
        if selector:
            dx, dy = params["clip"]["x"] - vp.get("pageX", 0), params["clip"]["y"] - vp.get("pageY", 0)
        elif full_page:
            dx, dy = -vp.get("pageX", 0), -vp.get("pageY", 0)
        annotate.draw(tab, items, annotate.SHOT_OVERLAY)
        try:
            data = content.shoot(tab, params)
        finally:
            annotate.remove(tab, annotate.SHOT_OVERLAY)
        return data, annotate.public(items, dx, dy)


@dataclass
class Capture:
    """A screenshot and a snapshot of one document, and what happened while they were taken."""

    image: bytes
    image_info: dict[str, Any]
    nodes: list[dict[str, Any]]
    url: str
    title: str
    frame_id: str
    loader_id: str
    dom_epoch: str
    navigated: bool
    captured_at: float
    duration_ms: int


def paired(tab: Tab, *, filter: str = "interactive", depth: int = -1, selector: str = "", fmt: str = "jpeg",
           quality: int = 80, scale: float = 1.0, beyond_viewport: bool = False, wait: str = "stable",
           with_bounds: bool = True, no_animations: bool = False) -> Capture:
    """The tab's screenshot and snapshot, taken back to back after the page settled (``wait``).

    Snapshot nodes get ``boundingBox`` (in the image's coordinate space: the viewport, the document
    with ``beyond_viewport``, the element's clip with ``selector``) and ``visible`` unless
    ``with_bounds`` is False. ``navigated`` says a new document started loading in between, so the
    two may not match.
    """
    _wait(tab, wait)
    started = time.monotonic()
    captured_at = time.time()
    main = main_frame(tab)
    frame_id, loader_id = main.frame_id, main.loader_id
    loads, epoch = tab.loads_started, tab.document_epoch
    full_page = beyond_viewport and not selector
    try:
        with still(tab, no_animations):
            params = content.screenshot_params(tab, fmt=fmt, quality=quality, full_page=full_page, scale=scale,
                                               selector=selector)
            root = selectors.snapshot_root(tab, selector)
            nodes = snapshot.take(tab, filter=filter, details=True, max_depth=depth, root=root)
            places = boxes(tab, nodes) if with_bounds else {}
            metrics = tab.call("Page.getLayoutMetrics")
            image = content.shoot(tab, params)
    except CDPError:
        if tab.loads_started == loads and tab.document_epoch == epoch:
            raise
        raise PairBroken() from None  # the document went away under us: no pair to answer with
    page = page_info(tab)  # one more round trip first: a navigation the page began meanwhile has been told
    navigated = tab.loads_started != loads or tab.document_epoch != epoch
    vp = metrics.get("cssLayoutViewport") or {}
    page_x, page_y = vp.get("pageX", 0), vp.get("pageY", 0)
    info: dict[str, Any] = {"format": fmt, "bytes": len(image), "devicePixelRatio": _device_pixel_ratio(metrics),
                            "viewport": {"w": vp.get("clientWidth", 0), "h": vp.get("clientHeight", 0),
                                         "scrollX": page_x, "scrollY": page_y}}
    if selector:
        clip = params["clip"]
        info["coordinateSpace"] = "clip"
        info["clip"] = {"x": clip["x"], "y": clip["y"], "w": clip["width"], "h": clip["height"]}
        dx, dy = clip["x"] - page_x, clip["y"] - page_y
    elif full_page:
        info["coordinateSpace"] = "document"
        dx, dy = -page_x, -page_y
    else:
        info["coordinateSpace"] = "viewport"
        dx = dy = 0.0
    if with_bounds:
        for node in nodes:
            place = places.get(node["ref"])
            if place is None:
                continue
            b = place["box"]
            node["boundingBox"] = {"x": round(b["x"] - dx, 2), "y": round(b["y"] - dy, 2),
                                   "width": b["width"], "height": b["height"]}
            node["visible"] = place["visible"]
    dom_epoch = "ep_" + secrets.token_hex(8)
    tab.state["dom_epoch"] = dom_epoch
    return Capture(image=image, image_info=info, nodes=nodes, url=page["url"], title=page["title"],
                   frame_id=frame_id, loader_id=loader_id, dom_epoch=dom_epoch, navigated=navigated,
                   captured_at=captured_at, duration_ms=int((time.monotonic() - started) * 1000))


class PairBroken(Exception):
    """The page loaded a new document while its capture was taken: no screenshot and snapshot pair."""

    def __init__(self) -> None:
        super().__init__("pairing broken: the page navigated during the capture; capture again")


def _wait(tab: Tab, wait: str) -> None:
    if wait == "stable":
        settle(tab, quiet_ms=STABLE_QUIET_MS, cap_ms=STABLE_CAP_MS)
    elif wait == "load":
        main = tab.frames.get(tab.main_frame_id or "")
        if main is not None:
            tab.wait_for(lambda: "load" in main.lifecycle, LOAD_CAP_S)


def _layout(tab: Tab) -> dict[str, Any]:
    return tab.call("Page.getLayoutMetrics").get("cssLayoutViewport") or {}


def _device_pixel_ratio(metrics: dict[str, Any]) -> float:
    """Device px per CSS px: the visual viewport in both units."""
    css = (metrics.get("cssVisualViewport") or {}).get("clientWidth") or 0
    dev = (metrics.get("visualViewport") or {}).get("clientWidth") or 0
    return round(dev / css, 3) if css and dev else 1.0
