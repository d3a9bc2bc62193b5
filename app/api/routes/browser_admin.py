"""The browser as a whole: ``POST /ensure-browser`` (and the legacy ``/ensure-chrome``),
``POST /browser/restart``, ``POST /cache/clear`` and ``GET /cache/status``.

The cache commands go to one of the browser's pages (Chrome's cache belongs to the browser
context, every page reaches the same one); with no page open there is nothing to ask, so one is
opened for the call and closed again.
"""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed
from cdp.tab import Tab

from ...web.openapi import Blueprint
from ...web.schemas import StatusResponse
from .browser_admin_contract import CacheStatusResponse
from .common import caller, state, tab_command

bp = Blueprint("browser", __name__)


@bp.route("/ensure-browser", methods=["POST"])
@bp.response(200, StatusResponse)
def ensure_browser() -> dict[str, Any]:
    """Make sure the browser runs (starting or restarting it when needed)."""
    state().ensure(caller())
    return {"status": "browser_ready"}


@bp.route("/ensure-chrome", methods=["POST"])
@bp.response(200, StatusResponse)
def ensure_chrome() -> dict[str, Any]:
    """The legacy name of /ensure-browser."""
    state().ensure(caller())
    return {"status": "chrome_ready"}


@bp.route("/browser/restart", methods=["POST"])
@bp.response(200, StatusResponse)
def restart() -> dict[str, Any]:
    """Stop the browser and start a fresh one; every tab closes."""
    state().restart()
    return {"status": "browser_restarted"}


@contextmanager
def _any_page() -> Iterator[Tab]:
    """A page of the browser for a browser-wide command: an open one, else a blank one for the call."""
    browser = state().ensure(caller())
    for page in browser.pages():
        if not page.get("agentTab", True):
            continue  # a person's own tab (extension mode) is not ours to use
        try:
            found = browser.tab(page["targetId"])
        except (KeyError, TargetClosed):
            continue  # closed meanwhile: try the next
        yield found
        return
    blank = browser.new_tab()
    try:
        yield blank
    finally:
        try:
            browser.close_tab(blank.id)
        except (CDPError, CDPTimeout, BrowserGone, TargetClosed):
            pass  # it is gone with the browser, or already closed


def _cache_call(method: str) -> dict[str, Any]:
    with _any_page() as page:
        return tab_command(page, method, {})


@bp.route("/cache/clear", methods=["POST"])
@bp.response(200, StatusResponse)
def clear_cache() -> dict[str, Any]:
    """Empty the browser's HTTP cache."""
    _cache_call("Network.clearBrowserCache")
    return {"status": "cleared"}


@bp.route("/cache/status", methods=["GET"])
@bp.response(200, CacheStatusResponse)
def cache_status() -> dict[str, Any]:
    """Whether the browser's HTTP cache can be cleared."""
    return {"canClear": bool(_cache_call("Network.canClearBrowserCache").get("result"))}
