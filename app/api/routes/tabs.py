"""Tabs: GET /tabs, POST /tab (new, focus), POST /close, and GET /health."""
from __future__ import annotations

from typing import Any

from cdp import navigation

from ...web.errors import BadRequest
from ...web.openapi import Blueprint, tab_route
from .common import caller, check_url, state, tab
from .tabs_contract import ClosedResponse, CloseSchema, HealthResponse, TabActionResponse, TabActionSchema, TabsResponse

bp = Blueprint("tabs", __name__)


@bp.route("/health", methods=["GET"])
@bp.response(200, HealthResponse)
@bp.alt_response(503, schema=HealthResponse, description="the browser is starting, or it failed to start")
def health() -> tuple[dict[str, Any], int]:
    """Whether the browser is up (no token needed)."""
    status = state().status()
    return status, (200 if status["status"] == "ok" else 503)


@bp.route("/tabs", methods=["GET"])
@bp.response(200, TabsResponse)
def list_tabs() -> dict[str, Any]:
    """The open tabs, the caller's current tab first."""
    st = state()
    tabs = [{"id": p["targetId"], "url": p.get("url", ""), "title": p.get("title", ""), "type": "page",
             **st.guards.describe(p["targetId"])} for p in st.visible_pages(caller())]
    return {"tabs": tabs}


@bp.route("/tab", methods=["POST"])
@bp.arguments(TabActionSchema)
@bp.response(200, TabActionResponse)
def tab_action(req: dict) -> dict[str, Any]:
    """Open a new tab (``action: new``, optionally at ``url``) or focus one (``action: focus``)."""
    st = state()
    action = req["action"]
    if action == "new":
        url = check_url(req["url"]) if req.get("url") else "about:blank"
        new = st.new_tab(caller())
        if url == "about:blank":
            return {"tabId": new.id, "url": "about:blank", "title": ""}
        timeout_s = min(st.config.timeouts.navigate_sec, 30.0)
        info = new.run(lambda: navigation.navigate(new, url, timeout_s=timeout_s), timeout_s + 2)
        return {"tabId": new.id, **info}
    if action == "focus":
        if not req.get("tabId"):
            raise BadRequest("tabId required", details={"field": "tabId"})
        focused = tab(req["tabId"])
        focused.run(lambda: focused.call("Page.bringToFront"), 10)
        return {"focused": True, "tabId": focused.id}
    raise BadRequest("action must be 'new' or 'focus'; use /close to close a tab", details={"field": "action"})


@tab_route(bp, "/close", methods=["POST"])
@bp.arguments(CloseSchema)
@bp.response(200, ClosedResponse)
def close(req: dict, tab_id: str | None) -> dict[str, Any]:
    """Close a tab (the last one stays: 409 ``last_tab``)."""
    closing = tab(req.get("tabId"))
    state().close(closing, caller())
    return {"closed": True, "tabId": closing.id}
