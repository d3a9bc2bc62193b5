"""POST /action and /actions: act on elements by ref, selector, nodeId or point; one round trip a step.

With ``"snap": "compact"`` the answer carries the page's interactive snapshot after the action,
with ``"snap": "diff"`` what changed since this caller last looked, once the page has settled.
"""
from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, request

from cdp import actions as act
from cdp import formats
from cdp import snapshot as snap
from cdp.navigation import page_info
from cdp.tab import Tab

from ..browser_state import bridge
from ...errors import body as error_body, from_exception
from ..parser import from_body, from_query, load
from ..schemas import ActionSchema, ActionsSchema
from . import doc, tab_route
from .common import on_tab

bp = Blueprint("actions", __name__)

_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


def step_of(req: dict[str, Any]) -> act.Step:
    """The validated request as a step."""
    target = act.Target(ref=req.get("ref", ""), selector=req.get("selector", ""), node_id=req.get("nodeId"),
                        x=req.get("x"), y=req.get("y"), frame_w=req.get("frameW"), frame_h=req.get("frameH"))
    dx = req.get("deltaX", req.get("scrollX", 0)) or 0
    dy = req.get("deltaY", req.get("scrollY", 0)) or 0
    if req.get("direction"):
        sx, sy = _DIRECTIONS[req["direction"]]
        amount = req.get("pixels", 300)
        dx, dy = sx * amount, sy * amount
    return act.Step(kind=req["kind"], target=target, text=req.get("text", req.get("value", "")),
                    value=req.get("value"), key=req.get("key", ""), modifiers=req["modifiers"],
                    button=req["button"], dx=dx, dy=dy, drag_x=req["dragX"], drag_y=req["dragY"],
                    wait_nav=req["waitNav"], dialog_action=req["dialogAction"], dialog_text=req["dialogText"],
                    fast=req["fast"])


def run_step(tab: Tab, req: dict[str, Any], cfg: Any) -> dict[str, Any]:
    """On the tab's worker: one step with its guards (``cfg`` read in the request's thread)."""
    step = step_of(req)
    step.humanize = req.get("humanize", cfg.instance_defaults.humanize)
    return act.perform(tab, step, guard=cfg.security.enable_action_guards,
                       wait_nav_s=cfg.timeouts.wait_nav_ms / 1000, navigate_timeout_s=cfg.timeouts.navigate_sec)


def after_snapshot(tab: Tab, mode: str, caller: str) -> dict[str, Any]:
    """On the tab's worker: once the page settles, its compact snapshot or the diff since the caller's view."""
    snap.settle(tab)
    info = page_info(tab)
    if mode == "diff":
        # Whole trees: what the action changed includes text, not only controls.
        nodes = snap.take(tab, filter="all")
        previous = snap.remember(tab, caller, "all", nodes)
        if previous is not None:
            text = formats.render_diff_compact(formats.diff(previous, nodes), title=info["title"], url=info["url"],
                                               count=len(nodes))
            return {"snapshot": text, "snapshotFormat": "diff"}
    nodes = snap.take(tab, filter="interactive")
    snap.remember(tab, caller, "interactive", nodes)
    text = formats.render_compact(nodes, title=info["title"], url=info["url"], count=len(nodes), interactive=True)
    return {"snapshot": text, "snapshotFormat": "compact"}


def step_timeout(req: dict[str, Any], cfg: Any) -> float:
    """The action timeout, longer for humanized typing (about 0.1 s a character, in real time)."""
    base = float(cfg.timeouts.action_sec)
    if req.get("humanize", cfg.instance_defaults.humanize) and req.get("text"):
        return base + 0.2 * len(req["text"])
    return base


@tab_route(bp, "/action", methods=["POST", "GET"])
@doc("One action on an element, by ref, selector, nodeId or point", body=ActionSchema)
def action(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(ActionSchema, tab_id) if request.method == "GET" else from_body(ActionSchema, tab_id)
    br = bridge()
    tab = br.tab(req.get("tabId"))
    caller, cfg = br.caller(), br.config

    def job(t: Tab) -> dict[str, Any]:
        if req["snap"] == "diff":
            snap.ensure_view(t, caller)  # the page before the action, if the caller has no view of it
        out: dict[str, Any] = {"success": True, "result": run_step(t, req, cfg)}
        if req["snap"]:
            out.update(after_snapshot(t, req["snap"], caller))
        return out

    return jsonify(on_tab(tab, job, req.get("timeout") or step_timeout(req, cfg)))


@tab_route(bp, "/actions", methods=["POST"])
@doc("A batch of actions, each reported in its place", body=ActionsSchema)
def actions(tab_id: str | None):  # type: ignore[no-untyped-def]
    batch = from_body(ActionsSchema, tab_id)
    br = bridge()
    caller, cfg = br.caller(), br.config
    results: list[dict[str, Any]] = []
    last_tab: Tab | None = None
    if batch["snap"] == "diff":
        first = br.tab(batch.get("tabId") or (batch["actions"][0].get("tabId") if batch["actions"] else None))
        on_tab(first, lambda t: snap.ensure_view(t, caller))
    for i, raw in enumerate(batch["actions"]):
        try:
            req = load(ActionSchema, {**raw, "tabId": raw.get("tabId", batch.get("tabId"))} if
                       (raw.get("tabId") or batch.get("tabId")) else raw)
            tab = br.tab(req.get("tabId"))
            last_tab = tab
            results.append({"index": i, "success": True, "result": on_tab(tab, lambda t, req=req: run_step(t, req, cfg),
                                                                          req.get("timeout") or step_timeout(req, cfg))})
        except Exception as exc:  # a failed step is reported in its place, not as the request's error
            err = from_exception(exc)
            if err is None:
                raise
            results.append({"index": i, "success": False, **error_body(err)})
            if batch["stopOnError"]:
                break
    ok = sum(1 for r in results if r["success"])
    total = len(batch["actions"])
    out: dict[str, Any] = {"results": results, "total": total, "successful": ok, "failed": total - ok}
    if batch["snap"]:
        tab = last_tab or br.tab(batch.get("tabId"))
        out.update(on_tab(tab, lambda t: after_snapshot(t, batch["snap"], caller)))
    return jsonify(out)
