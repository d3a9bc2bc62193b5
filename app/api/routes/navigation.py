"""Navigation: /navigate, /back, /forward, /reload."""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from cdp import navigation
from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed
from cdp.tab import Tab

from ...config.settings import InstanceDefaultsConfig
from ...web.errors import APIError
from ...web.openapi import Blueprint, tab_route
from ...web.schemas import PageInfoResponse
from .. import idpi_hooks
from ..engines import check_engine
from .common import caller, check_url, on_tab, state, tab
from .navigation_contract import HistoryQuerySchema, NavigateSchema

bp = Blueprint("navigation", __name__)
log = logging.getLogger(__name__)
NEW_TAB_TIMEOUT_S = 30.0
MAX_TIMEOUT_S = 120.0
MAX_WAIT_TITLE_S = 30.0
BANNER_S = 2.0  # what dismissBanners may add to a navigation, at most
LEAVE_S = 5.0   # leaving a page a refused redirect reached, at most


@tab_route(bp, "/navigate", methods=["POST"])
@bp.arguments(NavigateSchema)
@bp.response(200, PageInfoResponse)
def navigate(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Open a URL in a tab (a new one for anonymous callers without tabId)."""
    return _navigate(req, tab_id)


@tab_route(bp, "/navigate", methods=["GET"])
@bp.arguments(NavigateSchema, location="query")
@bp.response(200, PageInfoResponse)
def navigate_by_query(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """``POST /navigate`` with its fields in the query."""
    return _navigate(req, tab_id)


def blocked_kinds(req: dict[str, Any], defaults: InstanceDefaultsConfig) -> list[str]:
    """The resource kinds this navigation refuses: the request's block* fields, else instanceDefaults'."""
    asked = {"images": req.get("blockImages"), "media": req.get("blockMedia"), "ads": req.get("blockAds")}
    return [kind for kind, on in asked.items() if (getattr(defaults, f"block_{kind}") if on is None else on)]


def _navigate(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    url = check_url(req["url"])
    st, who = state(), caller()
    check_engine(st.config, req.get("browser"))
    timeout_s = min(req.get("timeout") or st.config.timeouts.navigate_sec, MAX_TIMEOUT_S)
    wait_title_s = min(req["waitTitle"], MAX_WAIT_TITLE_S)
    blocks = blocked_kinds(req, st.config.instance_defaults)
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
    def load(t: Tab) -> tuple[dict[str, str], list[str]]:
        t.intercept.block(blocks)  # before the first request of the page
        info = navigation.navigate(t, url, timeout_s=timeout_s, wait_for=req["waitFor"],
                                   wait_selector=req["waitSelector"])
        return info, t.network.document_hops(t.main_frame_id or t.id)

    def settle(t: Tab, info: dict[str, str]) -> dict[str, str]:
        if wait_title_s and navigation.wait_title(t, wait_title_s):
            info = navigation.page_info(t)
        if req["dismissBanners"] and navigation.dismiss_banners(t):
            info = navigation.page_info(t)
        return info

    try:
        info, hops = target.run(lambda: load(target), timeout_s + 2)
        if len(hops) > 1:
            # Where its redirects took it, judged as a navigation there would be (app.policy.navigation),
            # before anything more of the page is read or clicked.
            try:
                idpi_hooks.record(st.navigation.check_redirects(hops))
            except APIError:
                if not fresh:
                    _leave(target)  # a tab we keep: off the page it was sent to
                raise
        if wait_title_s or req["dismissBanners"]:
            info = target.run(lambda: settle(target, info), wait_title_s + BANNER_S + 2)
    except Exception:
        if fresh:  # a tab we opened for a navigation that failed (or was refused) is closed again
            browser = st.browser
            try:
                if browser is not None:
                    browser.close_tab(target.id)
            except (CDPError, CDPTimeout, BrowserGone, TargetClosed):
                pass  # the browser went with it: nothing left to close
        raise
    return {"tabId": target.id, **info}


def _leave(target: Tab) -> None:
    """After a refused redirect: the tab goes to about:blank (best effort, bounded)."""
    try:
        target.run(lambda: target.call("Page.navigate", {"url": "about:blank"}), LEAVE_S)
    except Exception as exc:  # the tab is busy or gone: it stays as it is, and the refusal still stands
        log.info("tab %s: could not leave the page a refused redirect reached: %s", target.id[:8], exc)


def _history(req: dict[str, Any], step: Callable[[Tab, float], dict[str, Any]]) -> dict[str, Any]:
    target = tab(req.get("tabId"))
    timeout_s = state().config.timeouts.navigate_sec

    def run(t: Tab) -> dict[str, Any]:
        info = step(t, timeout_s)
        # A reload shows the banner again; back and forward may land on a page that has one.
        if req["dismissBanners"] and navigation.dismiss_banners(t):
            info = navigation.page_info(t)
        return info

    info = on_tab(target, run, timeout_s + BANNER_S + 2)
    return {"tabId": target.id, **info}


@tab_route(bp, "/back", methods=["POST"])
@bp.arguments(HistoryQuerySchema, location="query")
@bp.response(200, PageInfoResponse)
def back(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Go back in the tab's history."""
    return _history(req, lambda t, s: navigation.history_step(t, -1, s))


@tab_route(bp, "/forward", methods=["POST"])
@bp.arguments(HistoryQuerySchema, location="query")
@bp.response(200, PageInfoResponse)
def forward(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Go forward in the tab's history."""
    return _history(req, lambda t, s: navigation.history_step(t, 1, s))


@tab_route(bp, "/reload", methods=["POST"])
@bp.arguments(HistoryQuerySchema, location="query")
@bp.response(200, PageInfoResponse)
def reload(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Reload the tab."""
    return _history(req, navigation.reload)
