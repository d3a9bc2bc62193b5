"""The page's console and uncaught errors: GET /console, GET /errors and their /clear.

The tab records both from its creation (the Runtime domain is on before the first navigation),
in rings of 1,000. These routes read the rings from the request thread: a tab whose worker is
busy, or whose page a dialog blocks, still answers.
"""
from __future__ import annotations

import collections
from typing import Any

from flask import Blueprint, jsonify

from cdp.tab import CONSOLE_RING

from ..browser_state import bridge
from ..parser import from_query
from ..schemas import LogsQuerySchema, TabQuerySchema
from . import doc, tab_route

bp = Blueprint("logs", __name__)


def _last(ring: collections.deque[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    """The last ``limit`` entries (0: all), oldest first. ``list`` copies the ring in one step,
    so the worker appending meanwhile cannot break the read."""
    entries = list(ring)
    limit = min(limit, CONSOLE_RING)
    return entries[-limit:] if limit else entries


@tab_route(bp, "/console", methods=["GET"])
@doc("The page's console messages, oldest first (the last limit; 0 = all)", query=LogsQuerySchema)
def console(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(LogsQuerySchema, tab_id)
    tab = bridge().tab(req.get("tabId"))
    return jsonify({"tabId": tab.id, "console": _last(tab.console, req["limit"])})


@tab_route(bp, "/errors", methods=["GET"])
@doc("The page's uncaught exceptions and unhandled rejections, oldest first", query=LogsQuerySchema)
def errors(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(LogsQuerySchema, tab_id)
    tab = bridge().tab(req.get("tabId"))
    return jsonify({"tabId": tab.id, "errors": _last(tab.errors, req["limit"])})


@tab_route(bp, "/console/clear", methods=["POST"])
@doc("Forget the tab's console messages", query=TabQuerySchema)
def console_clear(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(TabQuerySchema, tab_id)
    tab = bridge().tab(req.get("tabId"))
    tab.console.clear()
    return jsonify({"success": True, "tabId": tab.id})


@tab_route(bp, "/errors/clear", methods=["POST"])
@doc("Forget the tab's errors", query=TabQuerySchema)
def errors_clear(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(TabQuerySchema, tab_id)
    tab = bridge().tab(req.get("tabId"))
    tab.errors.clear()
    return jsonify({"success": True, "tabId": tab.id})
