"""Where a tab's selectors look (``POST /frame``): the whole page, or one frame and the frames in it.

A scope is kept per tab for its current main-frame document: a navigation of the tab drops it
(the frame it named belongs to the old page), and a scoped frame that left the page drops it too,
with FrameGone, so the caller learns it once instead of searching the wrong place. Frames of
other sites (out-of-process, reached through their own sessions) are scoped like any other.

The scope decides which frames selectors search (``cdp.selectors``, and so actions, ``/find`` and
``/wait``), which frame's document ``/html`` and ``/styles`` read without a selector, the text
``/text`` and text waits read, and the root of a snapshot (``/snapshot``, ``/capture``); refs
stay valid everywhere (each names one node), and ``/evaluate`` always runs in the main frame.
Runs on the tab's worker.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .errors import FrameGone
from .page import Element, evaluate, frames_in_order, main_frame, world
from .tab import Frame, Tab

_KEY = "frame_scope"


@dataclass(frozen=True)
class Scope:
    frame_id: str
    epoch: int  # the tab's document the scope was set for
    owner_ref: str = ""


def scoped_frame(tab: Tab) -> Frame | None:
    """The frame the tab is scoped to; None for the whole page. Raises FrameGone (and forgets the
    scope) when that frame has left the page."""
    scope: Scope | None = tab.state.get(_KEY)
    if scope is None:
        return None
    if scope.epoch != tab.document_epoch:
        tab.state.pop(_KEY, None)  # the tab navigated: the scope named a frame of the old page
        return None
    frame = tab.frames.get(scope.frame_id)
    if frame is None:
        tab.state.pop(_KEY, None)
        raise FrameGone(f"the frame selectors were scoped to ({scope.frame_id}) is no longer in the page; "
                        "the scope is back to the whole page")
    return frame


def set_scope(tab: Tab, frame_id: str | None, owner_ref: str = "") -> None:
    """Scope the tab's selectors to ``frame_id`` (None or the main frame: the whole page)."""
    if frame_id is None or frame_id == tab.main_frame_id:
        tab.state.pop(_KEY, None)
    else:
        tab.state[_KEY] = Scope(frame_id, tab.document_epoch, owner_ref)


def owner_ref(tab: Tab) -> str:
    scope: Scope | None = tab.state.get(_KEY)
    return scope.owner_ref if scope is not None else ""


def subtree(tab: Tab, frame: Frame) -> list[Frame]:
    """``frame`` and the frames inside it (at any depth), in document order."""
    inside = {frame.frame_id}
    out = []
    for f in frames_in_order(tab):
        if f.frame_id in inside or f.parent_id in inside:
            inside.add(f.frame_id)
            out.append(f)
    return out


def search_frames(tab: Tab) -> list[Frame]:
    """The frames selectors search, in document order: the scoped frame's subtree, or every frame."""
    frame = scoped_frame(tab)
    return frames_in_order(tab) if frame is None else subtree(tab, frame)


def document_frame(tab: Tab) -> Frame:
    """The frame whose document a read without a selector means: the scoped one, else the main one."""
    return scoped_frame(tab) or main_frame(tab)


def describe(tab: Tab, frame: Frame) -> dict[str, Any]:
    """The scope's answer shape: ``{frameId, frameUrl, frameName, ownerRef?}``."""
    out: dict[str, Any] = {"frameId": frame.frame_id, "frameUrl": frame.url, "frameName": frame.name}
    ref = owner_ref(tab)
    if ref:
        out["ownerRef"] = ref
    return out


def scoped_root(tab: Tab) -> Element | None:
    """The scoped frame's root element, for a snapshot of that frame alone; None when unscoped."""
    frame = scoped_frame(tab)
    if frame is None:
        return None
    obj = evaluate(tab, frame, "document.documentElement", by_value=False)
    if "objectId" not in obj:
        raise FrameGone(f"the scoped frame ({frame.frame_id}) has no document yet")
    return Element(obj["objectId"], frame.frame_id, frame.session_id, world(tab, frame))
