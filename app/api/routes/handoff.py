"""A person takes a tab over: POST|GET /tabs/{id}/handoff and POST /tabs/{id}/resume.

An agent that meets what only a person can do (a captcha, a second factor, a payment) hands the
tab over; until someone resumes it, agents' actions on it answer 409 ``tab_paused_handoff``
(reads still work, so the agent can watch). Resuming leaves a resolution (``status`` and
``resolvedData``) that ``GET /tabs/{id}/handoff`` shows, so the waiting agent learns the outcome.
"""
from __future__ import annotations

from typing import Any

from ...web.openapi import Blueprint, ErrorSchema
from .common import state, tab
from .handoff_contract import HandoffSchema, HandoffStateResponse, ResumeResponse, ResumeSchema

bp = Blueprint("handoff", __name__)


@bp.route("/tabs/<tab_id>/handoff", methods=["POST"])
@bp.arguments(HandoffSchema)
@bp.response(200, HandoffStateResponse)
def handoff(req: dict[str, Any], tab_id: str) -> dict[str, Any]:
    """Pause agents' actions on the tab for a person (``reason``; ``timeoutMs``: give it back by itself)."""
    t = tab(tab_id)
    timeout_s = req["timeoutMs"] / 1000 if req["timeoutMs"] else None
    state().guards.pause(t.id, req["reason"], timeout_s)
    return state().guards.handoff_state(t.id)


@bp.route("/tabs/<tab_id>/handoff", methods=["GET"])
@bp.response(200, HandoffStateResponse)
def handoff_state(tab_id: str) -> dict[str, Any]:
    """The tab's handoff: paused (why, since when) or active (with how the last one ended)."""
    return state().guards.handoff_state(tab(tab_id).id)


@bp.route("/tabs/<tab_id>/resume", methods=["POST"])
@bp.arguments(ResumeSchema)
@bp.response(200, ResumeResponse)
@bp.alt_response(409, schema=ErrorSchema, description="the tab is not paused (tab_not_paused)")
def resume(req: dict[str, Any], tab_id: str) -> dict[str, Any]:
    """Give the tab back to the agents, with the outcome (``status``, ``resolvedData``) for them."""
    t = tab(tab_id)
    res = state().guards.resume(t.id, req["status"], req["resolvedData"])
    return {"tabId": t.id, "status": "active", "resumed": True, "resolution": res.to_dict()}
