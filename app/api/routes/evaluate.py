"""POST /evaluate: run JavaScript in the page's main world (off unless security.allowEvaluate)."""
from __future__ import annotations

from flask import Blueprint, jsonify


from ..browser_state import bridge
from ...errors import BadRequest, disabled
from ..parser import from_body
from ..schemas import EvaluateSchema
from . import doc, tab_route
from .common import on_tab

bp = Blueprint("evaluate", __name__)


@tab_route(bp, "/evaluate", methods=["POST"])
@doc("Run JavaScript in the page (off unless security.allowEvaluate)", body=EvaluateSchema)
def evaluate(tab_id: str | None):  # type: ignore[no-untyped-def]
    br = bridge()
    if not br.config.security.allow_evaluate:
        raise disabled("evaluate", "security.allowEvaluate")
    req = from_body(EvaluateSchema, tab_id)
    tab = br.tab(req.get("tabId"))
    res = on_tab(tab, lambda t: t.call("Runtime.evaluate", {
        "expression": req["expression"], "returnByValue": True, "awaitPromise": req["awaitPromise"],
        "userGesture": True}))
    if "exceptionDetails" in res:
        d = res["exceptionDetails"]
        msg = (d.get("exception") or {}).get("description") or d.get("text", "script error")
        raise BadRequest(f"evaluate: {msg.splitlines()[0]}", code="evaluate_failed")
    result = res.get("result") or {}
    if "value" not in result and result.get("type") not in ("undefined",) and result.get("subtype") != "null":
        # Not serialisable by value (a DOM node, a function): describe it instead.
        return jsonify({"result": result.get("description") or result.get("type")})
    return jsonify({"result": result.get("value")})
