"""Tabs: GET /tabs, POST /tab (new, focus), POST /close, and GET /health."""
from __future__ import annotations

from flask import Blueprint, jsonify

from cdp import navigation

from ..browser_state import bridge
from ...errors import BadRequest
from ..parser import from_body
from ..schemas import CloseSchema, TabActionSchema
from . import doc, tab_route
from .common import check_url

bp = Blueprint("tabs", __name__)


@bp.get("/health")
@doc("Whether the browser is up (no token needed)")
def health():  # type: ignore[no-untyped-def]
    status = bridge().status()
    return jsonify(status), (200 if status["status"] == "ok" else 503)


@bp.get("/tabs")
@doc("The open tabs, the caller's current tab first")
def list_tabs():  # type: ignore[no-untyped-def]
    tabs = [{"id": p["targetId"], "url": p.get("url", ""), "title": p.get("title", ""), "type": "page",
             "status": "active"} for p in bridge().visible_pages()]
    return jsonify({"tabs": tabs})


@bp.post("/tab")
@doc("Open a new tab or focus one", body=TabActionSchema)
def tab_action():  # type: ignore[no-untyped-def]
    req = from_body(TabActionSchema)
    br = bridge()
    action = req["action"]
    if action == "new":
        url = check_url(req["url"]) if req.get("url") else "about:blank"
        tab = br.new_tab()
        if url == "about:blank":
            return jsonify({"tabId": tab.id, "url": "about:blank", "title": ""})
        timeout_s = min(br.config.timeouts.navigate_sec, 30.0)
        info = tab.run(lambda: navigation.navigate(tab, url, timeout_s=timeout_s), timeout_s + 2)
        return jsonify({"tabId": tab.id, **info})
    if action == "focus":
        if not req.get("tabId"):
            raise BadRequest("tabId required", details={"field": "tabId"})
        tab = br.tab(req["tabId"])
        tab.run(lambda: tab.call("Page.bringToFront"), 10)
        return jsonify({"focused": True, "tabId": tab.id})
    raise BadRequest("action must be 'new' or 'focus'; use /close to close a tab", details={"field": "action"})


@tab_route(bp, "/close", methods=["POST"])
@doc("Close a tab", body=CloseSchema)
def close(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_body(CloseSchema, tab_id)
    br = bridge()
    tab = br.tab(req.get("tabId"))
    br.close(tab)
    return jsonify({"closed": True, "tabId": tab.id})
