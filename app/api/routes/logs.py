"""The page's console and uncaught errors: GET /console, GET /errors and their /clear.

The tab records both from its creation (the Runtime domain is on before the first navigation),
in rings of 1,000. These routes read the rings from the request thread: a tab whose worker is
busy, or whose page a dialog blocks, still answers.
"""
from __future__ import annotations

import collections
from typing import Any

from cdp.tab import CONSOLE_RING

from ...web.openapi import Blueprint, tab_route
from ..contract import TabQuerySchema
from .common import tab
from .logs_contract import ClearedResponse, ConsoleResponse, ErrorsResponse, LogsQuerySchema

bp = Blueprint("logs", __name__)


def _last(ring: collections.deque[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` entries (0: all), oldest first. ``list`` copies the ring in one step,
    so the worker appending meanwhile cannot break the read."""
    entries = list(ring)
    limit = min(limit, CONSOLE_RING)
    return entries[-limit:] if limit else entries


@tab_route(bp, "/console", methods=["GET"])
@bp.arguments(LogsQuerySchema, location="query")
@bp.response(200, ConsoleResponse)
def console(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The page's console messages, oldest first (the last limit; 0 = all)."""
    target = tab(req.get("tabId"))
    return {"tabId": target.id, "console": _last(target.console, req["limit"])}


@tab_route(bp, "/errors", methods=["GET"])
@bp.arguments(LogsQuerySchema, location="query")
@bp.response(200, ErrorsResponse)
def errors(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The page's uncaught exceptions and unhandled rejections, oldest first."""
    target = tab(req.get("tabId"))
    return {"tabId": target.id, "errors": _last(target.errors, req["limit"])}


@tab_route(bp, "/console/clear", methods=["POST"])
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, ClearedResponse)
def console_clear(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Forget the tab's console messages."""
    target = tab(req.get("tabId"))
    target.console.clear()
    return {"success": True, "tabId": target.id}


@tab_route(bp, "/errors/clear", methods=["POST"])
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, ClearedResponse)
def errors_clear(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Forget the tab's errors."""
    target = tab(req.get("tabId"))
    target.errors.clear()
    return {"success": True, "tabId": target.id}
