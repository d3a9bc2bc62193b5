"""Navigation: /navigate, /back, /forward, /reload."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response, jsonify

from cdp import navigation
from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed
from cdp.tab import Tab

from ...openapi import Blueprint, tab_route
from ..responses import PageInfoResponse
from ..schemas import NavigateSchema, TabQuerySchema
from .common import caller, check_url, on_tab, state, tab

bp = Blueprint("navigation", __name__)
NEW_TAB_TIMEOUT_S = 30.0


@tab_route(bp, "/navigate", methods=["POST"])
@bp.arguments(NavigateSchema)
@bp.response(200, PageInfoResponse)
def navigate(req: dict[str, Any], tab_id: str | None) -> Response:
    """Open a URL in a tab (a new one for anonymous callers without tabId)."""
    return _navigate(req, tab_id)


@tab_route(bp, "/navigate", methods=["GET"])
@bp.arguments(NavigateSchema, location="query")
@bp.response(200, PageInfoResponse)
def navigate_by_query(req: dict[str, Any], tab_id: str | None) -> Response:
    """``POST /navigate`` with its fields in the query."""
    return _navigate(req, tab_id)


def _navigate(req: dict[str, Any], tab_id: str | None) -> Response:
    url = check_url(req["url"])
    st, who = state(), caller()
    timeout_s = req.get("timeout") or st.config.timeouts.navigate_sec
    fresh = False
    if tab_id is not None or (req.get("tabId") and not req["newTab"]):
        target = tab(req["tabId"])
    elif not req["newTab"] and who.agent and st.has_current(who.agent):
        target = tab(None)  # an identified caller keeps its current tab (while it is open)
    else:
        target = st.new_tab(who)  # anonymous callers always get a new tab
        fresh = True
        if req.get("timeout") is None:
            timeout_s = min(timeout_s, NEW_TAB_TIMEOUT_S)
    try:
        info = target.run(lambda: navigation.navigate(target, url, timeout_s=timeout_s, wait_for=req["waitFor"],
                                                      wait_selector=req["waitSelector"]), timeout_s + 2)
    except Exception:
        if fresh:  # a tab we opened for a navigation that failed is closed again
            browser = st.browser
            try:
                if browser is not None:
                    browser.close_tab(target.id)
            except (CDPError, CDPTimeout, BrowserGone, TargetClosed):
                pass  # the browser went with it: nothing left to close
        raise
    return jsonify({"tabId": target.id, **info})


def _history(req: dict[str, Any], step: Callable[[Tab, float], dict[str, Any]]) -> Response:
    target = tab(req.get("tabId"))
    timeout_s = state().config.timeouts.navigate_sec
    info = on_tab(target, lambda t: step(t, timeout_s), timeout_s + 2)
    return jsonify({"tabId": target.id, **info})


@tab_route(bp, "/back", methods=["POST"])
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, PageInfoResponse)
def back(req: dict[str, Any], tab_id: str | None) -> Response:
    """Go back in the tab's history."""
    return _history(req, lambda t, s: navigation.history_step(t, -1, s))


@tab_route(bp, "/forward", methods=["POST"])
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, PageInfoResponse)
def forward(req: dict[str, Any], tab_id: str | None) -> Response:
    """Go forward in the tab's history."""
    return _history(req, lambda t, s: navigation.history_step(t, 1, s))


@tab_route(bp, "/reload", methods=["POST"])
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, PageInfoResponse)
def reload(req: dict[str, Any], tab_id: str | None) -> Response:
    """Reload the tab."""
    return _history(req, navigation.reload)
