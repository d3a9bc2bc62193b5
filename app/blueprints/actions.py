"""POST /action (and GET /action): one action on an element, by ref, selector, nodeId or point."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, request

from cdp import actions as act
from cdp.tab import Tab

from ..bridge import bridge
from ..params import from_body, from_query
from ..schemas import ActionSchema
from . import tab_route
from .common import on_tab

bp = Blueprint("actions", __name__)

_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def perform(tab: Tab, req: dict[str, Any]) -> dict[str, Any]:
    """Run one validated action on the tab's worker; returns the ``result`` object."""
    target = act.Target(ref=req.get("ref", ""), selector=req.get("selector", ""), node_id=req.get("nodeId"),
                        x=req.get("x"), y=req.get("y"))
    kind = req["kind"]
    text = req.get("text", req.get("value", ""))
    if kind == "click":
        return act.click(tab, target, button=req["button"], modifiers=req["modifiers"])
    if kind == "dblclick":
        res = act.click(tab, target, count=2, button=req["button"], modifiers=req["modifiers"])
        return {"doubleclicked": True, **{k: v for k, v in res.items() if k != "clicked"}}
    if kind == "type":
        return act.type_into(tab, target, text)
    if kind == "fill":
        return act.fill(tab, target, text)
    if kind == "press":
        return act.press(tab, target, req["key"], req["modifiers"])
    if kind == "hover":
        return act.hover(tab, target)
    if kind == "focus":
        return act.focus(tab, target)
    if kind == "select":
        return act.select(tab, target, req.get("value", req.get("text", "")))
    if kind in ("check", "uncheck"):
        return act.set_checked(tab, target, kind == "check")
    if kind == "scroll":
        dx = req.get("deltaX", req.get("scrollX", 0)) or 0
        dy = req.get("deltaY", req.get("scrollY", 0)) or 0
        if req.get("direction"):
            sx, sy = _DIRECTIONS[req["direction"]]
            amount = req.get("pixels", 300)
            dx, dy = sx * amount, sy * amount
        return act.scroll(tab, target, dx=dx, dy=dy)
    raise AssertionError(kind)  # the schema admits only the kinds above


@tab_route(bp, "/action", methods=["POST", "GET"])
def action(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(ActionSchema, tab_id) if request.method == "GET" else from_body(ActionSchema, tab_id)
    tab = bridge().tab(req.get("tabId"))
    result = on_tab(tab, lambda t: perform(t, req), req.get("timeout"))
    return jsonify({"success": True, "result": result})
