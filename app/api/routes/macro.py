"""POST /macro: a pipeline of action steps in one request (off unless security.allowMacro).

The steps are /actions steps, run in order on their tabs with the same guards (leases,
handoffs, engines); unlike /actions the pipeline stops at the first failure unless
``stopOnError`` is false, and ``stepTimeout`` bounds each step.
"""
from __future__ import annotations

from typing import Any

from ...web.errors import disabled
from ...web.openapi import Blueprint, ErrorSchema
from .actions import run_batch
from .common import before_reading, state
from .macro_contract import MacroResponse, MacroSchema

bp = Blueprint("macro", __name__)


def _enabled() -> None:
    if not state().config.security.allow_macro:
        raise disabled("macro", "security.allowMacro")


@bp.route("/macro", methods=["POST"])
@before_reading(_enabled)
@bp.arguments(MacroSchema)
@bp.response(200, MacroResponse)
@bp.alt_response(403, schema=ErrorSchema, description="macro is off unless security.allowMacro is set")
def macro(req: dict[str, Any]) -> dict[str, Any]:
    """Run ``steps`` (action objects) in order; each is reported in its place."""
    out, _last = run_batch(req["steps"], req.get("tabId"), req.get("owner"), req["stopOnError"],
                           req.get("stepTimeout"))
    return {"kind": "macro", **out}
