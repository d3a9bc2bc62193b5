"""Which frame a ``POST /frame`` target names: ``main``, a ref, a frame's name or URL, an iframe selector.

Tried in that order (a ref is unambiguous; an exact name or URL is what a person copies from a
snapshot's ``childFrameUrl``; then any unified selector naming an ``<iframe>`` or ``<frame>``
anywhere in the page; last, a part of one frame's URL). A ref of an element that is not a frame
owner scopes to the frame the element is in. Runs on the tab's worker.
"""
from __future__ import annotations

from . import selectors, snapshot
from .errors import BadFrameTarget, BadSelector, CDPError, NoSuchElement
from .page import Element, frames_in_order
from .tab import Frame, Tab


def resolve(tab: Tab, target: str) -> tuple[str | None, str]:
    """(frame id, the ref of its owner element or "") for ``target``; (None, "") for the whole page.

    Raises BadFrameTarget, or the selector errors of a ref (StaleRef, UnknownRef).
    """
    text = target.strip()
    if text.lower() == "main":
        return None, ""
    frames = [f for f in frames_in_order(tab) if f.frame_id != tab.main_frame_id]
    owners = snapshot.refs_of(tab).owners
    sel = selectors.parse(text) if text else None
    if sel is not None and sel.kind == "ref" and sel.which is None:
        el = selectors.resolve(tab, sel)
        child = _child_frame(tab, el)
        if child is not None:
            return child.frame_id, sel.value
        return (None, "") if el.frame_id == tab.main_frame_id else (el.frame_id, owners.get(el.frame_id, ""))
    exact = _one([f for f in frames if text in (f.name, f.url)], text)
    if exact is not None:
        return exact.frame_id, owners.get(exact.frame_id, "")
    try:
        el = selectors.resolve(tab, text, whole_page=True)
    except (BadSelector, NoSuchElement):
        el = None
    if el is not None:
        child = _child_frame(tab, el)
        if child is None:
            raise BadFrameTarget(f"frame target {text!r} names an element that is not an iframe or frame")
        return child.frame_id, owners.get(child.frame_id, "")
    partial = _one([f for f in frames if text in f.url], text)
    if partial is not None:
        return partial.frame_id, owners.get(partial.frame_id, "")
    raise BadFrameTarget(f"frame target {text!r} did not resolve to an iframe or frame (try main, a ref from "
                         "a snapshot, an iframe selector, or a frame's name or URL)")


def _one(matches: list[Frame], text: str) -> Frame | None:
    if len(matches) > 1:
        raise BadFrameTarget(f"frame target {text!r} matched {len(matches)} frames; name one by its ref or selector")
    return matches[0] if matches else None


def _child_frame(tab: Tab, el: Element) -> Frame | None:
    """The frame whose owner (``<iframe>``/``<frame>``) is ``el``, if it is one."""
    children = [f for f in tab.frames.values() if f.parent_id == el.frame_id]
    if not children:
        return None
    try:
        node = tab.call("DOM.describeNode", {"objectId": el.object_id}, session_id=el.session_id)["node"]
    except CDPError:
        return None
    if node.get("nodeName") not in ("IFRAME", "FRAME"):
        return None
    if node.get("frameId") in tab.frames:
        return tab.frames[node["frameId"]]
    parent = tab.frames.get(el.frame_id)
    for child in children:  # an owner whose frame runs in another process: match by the owner's node
        try:
            owner = tab.call("DOM.getFrameOwner", {"frameId": child.frame_id},
                             session_id=parent.session_id if parent else el.session_id)
        except CDPError:
            continue
        if owner.get("backendNodeId") == node.get("backendNodeId"):
            return child
    return None
