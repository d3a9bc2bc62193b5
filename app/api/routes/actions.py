"""POST /action and /actions: act on elements by ref, selector, nodeId or point; one round trip a step.

With ``"snap": "compact"`` the answer carries the page's interactive snapshot after the action,
with ``"snap": "diff"`` what changed since this caller last looked, once the page has settled.
"""
from __future__ import annotations

import dataclasses
from typing import Any

from flask import Response, jsonify

from cdp import snapshot_doc
from cdp.steps import perform
from cdp.tab import Tab

from ...config import Config
from ...errors import body as error_body, from_exception
from ...openapi import Blueprint, tab_route
from ...parser import load
from ..responses import ActionResponse, ActionsResponse
from ..schemas import ActionRequest, ActionSchema, ActionsSchema
from .common import caller, on_tab, state, tab

bp = Blueprint("actions", __name__)


def run_step(t: Tab, req: ActionRequest, cfg: Config) -> dict[str, Any]:
    """On the tab's worker: one step with its guards (``cfg`` read in the request's thread)."""
    humanize = cfg.instance_defaults.humanize if req.humanize is None else req.humanize
    return perform(t, dataclasses.replace(req.step, humanize=humanize), guard=cfg.security.enable_action_guards,
                       wait_nav_s=cfg.timeouts.wait_nav_ms / 1000, navigate_timeout_s=cfg.timeouts.navigate_sec)


def step_timeout(req: ActionRequest, cfg: Config) -> float:
    """The request's timeout, else the action timeout, longer for humanized typing (~0.1 s a character)."""
    if req.timeout_s:
        return req.timeout_s
    base = float(cfg.timeouts.action_sec)
    humanize = cfg.instance_defaults.humanize if req.humanize is None else req.humanize
    if humanize and req.step.text:
        return base + 0.2 * len(req.step.text)
    return base


def _action(req: ActionRequest) -> Response:
    target, view, cfg = tab(req.tab_id), caller().view, state().config

    def job(t: Tab) -> dict[str, Any]:
        if req.snap == "diff":
            snapshot_doc.ensure_view(t, view)  # the page before the action, if the caller has no view of it
        out: dict[str, Any] = {"success": True, "result": run_step(t, req, cfg)}
        if req.snap:
            out.update(snapshot_doc.after_action(t, req.snap, view))
        return out

    return jsonify(on_tab(target, job, step_timeout(req, cfg)))


@tab_route(bp, "/action", methods=["POST"])
@bp.arguments(ActionSchema)
@bp.response(200, ActionResponse)
def action(req: ActionRequest, tab_id: str | None) -> Response:
    """One action on an element, by ref, selector, nodeId or point."""
    return _action(req)


@tab_route(bp, "/action", methods=["GET"])
@bp.arguments(ActionSchema, location="query")
@bp.response(200, ActionResponse)
def action_by_query(req: ActionRequest, tab_id: str | None) -> Response:
    """``POST /action`` with its fields in the query."""
    return _action(req)


@tab_route(bp, "/actions", methods=["POST"])
@bp.arguments(ActionsSchema)
@bp.response(200, ActionsResponse)
def actions(batch: dict[str, Any], tab_id: str | None) -> Response:
    """A batch of actions, each reported in its place (``stopOnError`` ends it at the first failure)."""
    view, cfg = caller().view, state().config
    results: list[dict[str, Any]] = []
    last_tab: Tab | None = None
    if batch["snap"] == "diff":
        first = tab(batch.get("tabId") or (batch["actions"][0].get("tabId") if batch["actions"] else None))
        on_tab(first, lambda t: snapshot_doc.ensure_view(t, view))
    for i, raw in enumerate(batch["actions"]):
        try:
            tab_of_step = raw.get("tabId") or batch.get("tabId")
            req: ActionRequest = load(ActionSchema, {**raw, "tabId": tab_of_step} if tab_of_step else raw)
            target = tab(req.tab_id)
            last_tab = target
            results.append({"index": i, "success": True,
                            "result": on_tab(target, lambda t, req=req: run_step(t, req, cfg), step_timeout(req, cfg))})
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
        last = last_tab or tab(batch.get("tabId"))
        out.update(on_tab(last, lambda t: snapshot_doc.after_action(t, batch["snap"], view)))
    return jsonify(out)
