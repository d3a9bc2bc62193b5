"""GET and POST /frame (and /tabs/{tabId}/frame): the frame a tab's selectors look in.

``POST {"target": ...}`` scopes the tab to one frame (``cdp.frame_target`` says how a target is
read); ``main`` goes back to the whole page. The scope holds for selectors in snapshots, actions,
reads, /text, /html and /styles until the tab navigates (``cdp.frame_scope``); /evaluate always
runs in the main frame.
"""
from __future__ import annotations

from typing import Any

from cdp import frame_scope, frame_target
from cdp.errors import FrameGone
from cdp.tab import Tab

from ...web.openapi import Blueprint, tab_route
from ..contract import TabQuerySchema
from .common import on_tab, tab
from .frame_contract import FrameResponse, FrameSchema

bp = Blueprint("frame", __name__)


def _answer(t: Tab) -> dict[str, Any]:
    try:
        frame = frame_scope.scoped_frame(t)
    except FrameGone:  # the scope ended with its frame: the page is whole again, which is the answer
        frame = None
    if frame is None:
        return {"tabId": t.id, "scoped": False, "target": "main", "current": "main"}
    scope = frame_scope.describe(t, frame)
    return {"tabId": t.id, "scoped": True, "target": frame.frame_id, "current": scope, "frame": scope}


@tab_route(bp, "/frame", methods=["GET"])
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, FrameResponse)
def get_frame(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The tab's frame scope: main (the whole page) or one frame."""
    return on_tab(tab(req.get("tabId")), _answer)


@tab_route(bp, "/frame", methods=["POST"])
@bp.arguments(FrameSchema)
@bp.response(200, FrameResponse)
def set_frame(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Scope the tab's selectors to one frame (a ref, an iframe selector, a frame's name or URL), or main."""

    def scope(t: Tab) -> dict[str, Any]:
        frame_id, owner = frame_target.resolve(t, req["target"])  # BadFrameTarget: a 400 naming the target
        frame_scope.set_scope(t, frame_id, owner)
        return _answer(t)

    return on_tab(tab(req.get("tabId")), scope)
