"""Tabs: GET /tabs, POST /tab (new, focus), POST /close, and GET /health."""
from __future__ import annotations

from flask import Response, jsonify

from cdp import navigation

from ...web.errors import BadRequest
from ...web.openapi import Blueprint, tab_route
from ..responses import ClosedResponse, HealthResponse, TabActionResponse, TabsResponse
from ..schemas import CloseSchema, TabActionSchema
from .common import caller, check_url, state, tab

bp = Blueprint("tabs", __name__)


@bp.route("/health", methods=["GET"])
@bp.response(200, HealthResponse)
@bp.alt_response(503, schema=HealthResponse, description="the browser is starting, or it failed to start")
def health() -> tuple[Response, int]:
    """Whether the browser is up (no token needed)."""
    status = state().status()
    return jsonify(status), (200 if status["status"] == "ok" else 503)


@bp.route("/tabs", methods=["GET"])
@bp.response(200, TabsResponse)
def list_tabs() -> Response:
    """The open tabs, the caller's current tab first."""
    st = state()
    tabs = [{"id": p["targetId"], "url": p.get("url", ""), "title": p.get("title", ""), "type": "page",
             **st.guards.describe(p["targetId"])} for p in st.visible_pages(caller())]
    return jsonify({"tabs": tabs})


@bp.route("/tab", methods=["POST"])
@bp.arguments(TabActionSchema)
@bp.response(200, TabActionResponse)
def tab_action(req: dict) -> Response:
    """Open a new tab (``action: new``, optionally at ``url``) or focus one (``action: focus``)."""
    st = state()
    action = req["action"]
    if action == "new":
        url = check_url(req["url"]) if req.get("url") else "about:blank"
        new = st.new_tab(caller())
        if url == "about:blank":
            return jsonify({"tabId": new.id, "url": "about:blank", "title": ""})
        timeout_s = min(st.config.timeouts.navigate_sec, 30.0)
        info = new.run(lambda: navigation.navigate(new, url, timeout_s=timeout_s), timeout_s + 2)
        return jsonify({"tabId": new.id, **info})
    if action == "focus":
        if not req.get("tabId"):
            raise BadRequest("tabId required", details={"field": "tabId"})
        focused = tab(req["tabId"])
        focused.run(lambda: focused.call("Page.bringToFront"), 10)
        return jsonify({"focused": True, "tabId": focused.id})
    raise BadRequest("action must be 'new' or 'focus'; use /close to close a tab", details={"field": "action"})


@tab_route(bp, "/close", methods=["POST"])
@bp.arguments(CloseSchema)
@bp.response(200, ClosedResponse)
def close(req: dict, tab_id: str | None) -> Response:
    """Close a tab (the last one stays: 409 ``last_tab``)."""
    closing = tab(req.get("tabId"))
    state().close(closing, caller())
    return jsonify({"closed": True, "tabId": closing.id})
