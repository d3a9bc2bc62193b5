"""POST /evaluate: run JavaScript in the page's main world (off unless security.allowEvaluate)."""
from __future__ import annotations

from typing import Any

from ...web.errors import BadRequest, disabled
from ...web.openapi import Blueprint, ErrorSchema, tab_route
from .common import before_reading, state, tab, tab_command
from .evaluate_contract import EvaluateResponse, EvaluateSchema

bp = Blueprint("evaluate", __name__)


def _enabled() -> None:
    if not state().config.security.allow_evaluate:
        raise disabled("evaluate", "security.allowEvaluate")


@tab_route(bp, "/evaluate", methods=["POST"])
@before_reading(_enabled)
@bp.arguments(EvaluateSchema)
@bp.response(200, EvaluateResponse)
@bp.alt_response(403, schema=ErrorSchema, description="evaluate is off unless security.allowEvaluate is set")
def evaluate(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Run JavaScript in the page (off unless security.allowEvaluate)."""
    target = tab(req.get("tabId"))
    res = tab_command(target, "Runtime.evaluate", {
        "expression": req["expression"], "returnByValue": True, "awaitPromise": req["awaitPromise"],
        "userGesture": True})
    if "exceptionDetails" in res:
        d = res["exceptionDetails"]
        msg = (d.get("exception") or {}).get("description") or d.get("text", "script error")
        raise BadRequest(f"evaluate: {msg.splitlines()[0]}", code="evaluate_failed")
    result = res.get("result") or {}
    if "value" not in result and result.get("type") not in ("undefined",) and result.get("subtype") != "null":
        # Not serialisable by value (a DOM node, a function): describe it instead.
        return {"result": result.get("description") or result.get("type")}
    return {"result": result.get("value")}
