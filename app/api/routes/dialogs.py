"""JavaScript dialogs and the tab's state: POST /dialog and GET /tabs/{tabId}/state.

A dialog nobody planned for (no ``dialogAction`` on the action that opened it) stays open and
blocks the page: every other call on the tab fails fast with 409 ``dialog_blocking`` until
POST /dialog answers it. GET /tabs/{tabId}/state says so without asking the page.
"""
from __future__ import annotations

from typing import Any

from cdp.dialogs import answer_dialog
from cdp.errors import NoDialog
from cdp.page_state import page_state

from ...web.errors import BadRequest
from ...web.openapi import Blueprint, tab_route
from ..contract import TabQuerySchema
from .common import on_tab, tab
from .dialogs_contract import DialogResponse, DialogSchema, TabStateResponse

bp = Blueprint("dialogs", __name__)


@tab_route(bp, "/dialog", methods=["POST"])
@bp.arguments(DialogSchema)
@bp.response(200, DialogResponse)
def dialog(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Accept or dismiss the tab's open JavaScript dialog (text answers a prompt)."""
    target = tab(req.get("tabId"))
    try:
        # Page.handleJavaScriptDialog is one of the few commands a blocked page still answers.
        return on_tab(target, lambda t: answer_dialog(t, req["action"] == "accept", req["text"]))
    except NoDialog as exc:
        raise BadRequest(str(exc), code="no_dialog") from None


@bp.route("/tabs/<tab_id>/state", methods=["GET"])
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, TabStateResponse)
def tab_state(req: dict[str, Any], tab_id: str) -> dict[str, Any]:
    """The tab's load state, open dialog and whether actions can run, from tracked state (no page call)."""
    # Read on the request thread, never queued behind the tab's worker: it must answer while a
    # dialog blocks the page or a long action holds the worker.
    return page_state(tab(tab_id))
