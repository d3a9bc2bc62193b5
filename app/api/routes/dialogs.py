"""JavaScript dialogs and the tab's state: POST /dialog and GET /tabs/{id}/state.

A dialog nobody planned for (no ``dialogAction`` on the action that opened it) stays open and
blocks the page: every other call on the tab fails fast with 409 ``dialog_blocking`` until
POST /dialog answers it. GET /tabs/{id}/state says so without asking the page.
"""
from __future__ import annotations

from flask import Blueprint, jsonify

from cdp import inspect

from ..browser_state import bridge
from ...errors import BadRequest
from ..parser import from_body, from_query
from ..schemas import DialogSchema, TabQuerySchema
from . import doc, tab_route
from .common import on_tab

bp = Blueprint("dialogs", __name__)


@tab_route(bp, "/dialog", methods=["POST"])
@doc("Accept or dismiss the tab's open JavaScript dialog (text answers a prompt)", body=DialogSchema)
def dialog(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_body(DialogSchema, tab_id)
    tab = bridge().tab(req.get("tabId"))
    try:
        # Page.handleJavaScriptDialog is one of the few commands a blocked page still answers.
        return jsonify(on_tab(tab, lambda t: inspect.answer_dialog(t, req["action"] == "accept", req["text"])))
    except inspect.NoDialog as exc:
        raise BadRequest(str(exc), code="no_dialog") from None


@bp.get("/tabs/<tab_id>/state")
@doc("The tab's load state, open dialog and whether actions can run, from tracked state (no page call)",
     query=TabQuerySchema)
def tab_state(tab_id: str):  # type: ignore[no-untyped-def]
    from_query(TabQuerySchema, tab_id)
    # Read on the request thread, never queued behind the tab's worker: it must answer while a
    # dialog blocks the page or a long action holds the worker.
    return jsonify(inspect.page_state(bridge().tab(tab_id)))
