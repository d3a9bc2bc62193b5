"""Navigation: /navigate, /back, /forward, /reload."""
from __future__ import annotations

from typing import Any

from flask import Blueprint, jsonify, request

from cdp import navigation

from ..browser_state import bridge
from ..parser import from_body, from_query, load
from ..schemas import NavigateSchema, TabQuerySchema
from . import doc, tab_route
from .common import check_url, on_tab

bp = Blueprint("navigation", __name__)
NEW_TAB_TIMEOUT_S = 30.0


@tab_route(bp, "/navigate", methods=["POST", "GET"])
@doc("Open a URL in a tab (a new one for anonymous callers without tabId)", body=NavigateSchema)
def navigate(tab_id: str | None):  # type: ignore[no-untyped-def]
    if request.method == "GET":
        req = from_query(NavigateSchema, tab_id)
    else:
        req = from_body(NavigateSchema, tab_id)
    url = check_url(req["url"])
    br = bridge()
    cfg = br.config
    timeout_s = req.get("timeout") or cfg.timeouts.navigate_sec
    fresh = False
    if tab_id is not None or (req.get("tabId") and not req["newTab"]):
        tab = br.tab(req["tabId"])
    elif not req["newTab"] and br.agent() and br.has_current(br.agent() or ""):
        tab = br.tab(None)  # an identified caller keeps its current tab (while it is open)
    else:
        tab = br.new_tab()  # anonymous callers always get a new tab (the original's rule)
        fresh = True
        if req.get("timeout") is None:
            timeout_s = min(timeout_s, NEW_TAB_TIMEOUT_S)
    try:
        info = tab.run(lambda: navigation.navigate(tab, url, timeout_s=timeout_s, wait_for=req["waitFor"],
                                                   wait_selector=req["waitSelector"]), timeout_s + 2)
    except Exception:
        if fresh:  # a tab we opened for a navigation that failed is closed again
            try:
                br.browser.close_tab(tab.id)  # type: ignore[union-attr]
            except Exception:
                pass
        raise
    return jsonify({"tabId": tab.id, **info})


def _history(tab_id: str | None, fn: Any):  # type: ignore[no-untyped-def]
    req = load(TabQuerySchema, dict(request.args), tab_id)
    tab = bridge().tab(req.get("tabId"))
    timeout_s = bridge().config.timeouts.navigate_sec
    info = on_tab(tab, lambda t: fn(t, timeout_s), timeout_s + 2)
    return jsonify({"tabId": tab.id, **info})


@tab_route(bp, "/back", methods=["POST"])
@doc("Go back in the tab's history", query=TabQuerySchema)
def back(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _history(tab_id, lambda t, s: navigation.history_step(t, -1, s))


@tab_route(bp, "/forward", methods=["POST"])
@doc("Go forward in the tab's history", query=TabQuerySchema)
def forward(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _history(tab_id, lambda t, s: navigation.history_step(t, 1, s))


@tab_route(bp, "/reload", methods=["POST"])
@doc("Reload the tab", query=TabQuerySchema)
def reload(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _history(tab_id, navigation.reload)
