"""The contract of POST /find and POST /wait: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, post_load, validate

from ...web.schemas import Loose
from ..contract import Answer, IdpiWarned, Number, TabIdMixin

# The original's names; ``networkidle`` is its alias of ``network-idle`` (the wait answers the latter).
# --- what the routes take --------------------------------------------------------------------------------------------
LOAD_STATES = ("ready-state", "content-loaded", "network-idle", "networkidle")


class WaitSchema(Loose, TabIdMixin):
    ms = fields.Integer(validate=validate.Range(min=0, max=30000))
    selector = fields.String(validate=validate.Length(min=1))
    state = fields.String(load_default="visible",
                          validate=validate.OneOf(("visible", "hidden", "attached", "detached")))
    text = fields.String(validate=validate.Length(min=1))
    notText = fields.String(validate=validate.Length(min=1))
    url = fields.String(validate=validate.Length(min=1))
    load = fields.String(validate=validate.OneOf(LOAD_STATES, error="load must be one of " + ", ".join(LOAD_STATES)))
    fn = fields.String(validate=validate.Length(min=1))
    idleFor = fields.Integer(load_default=500, validate=validate.Range(min=0, max=10000),
                             metadata={"description": "ms with no request in flight that network-idle needs"})
    # ms; the wait view clamps it to 100..30000 rather than refusing a long one (as the original does)
    timeout = fields.Integer(load_default=10000, metadata={"description": "ms, clamped to 100..30000"})

    @post_load
    def _canonical_load(self, data, **kwargs):  # type: ignore[no-untyped-def]
        if data.get("load") == "networkidle":
            data["load"] = "network-idle"
        return data


class FindSchema(Loose, TabIdMixin):
    query = fields.String(required=True, validate=validate.Length(min=1, error="missing required field 'query'"),
                          error_messages={"required": "missing required field 'query'"})
    threshold = fields.Float(load_default=0.3, validate=validate.Range(min=0, max=1))
    topK = fields.Integer(load_default=3, validate=validate.Range(min=1, max=50))
    explain = fields.Boolean(load_default=False)


# --- what they answer ------------------------------------------------------------------------------------------------
class MatchExplained(Answer):
    lexical_score = Number(required=True)
    role_score = Number(required=True)
    composite = Number(required=True)


class FindMatch(Answer):
    ref = fields.String(required=True)
    score = Number(required=True)
    role = fields.String(required=True)
    name = fields.String(required=True)
    explain = fields.Nested(MatchExplained, metadata={"description": "with explain=true"})


class FindResponse(IdpiWarned):
    best_ref = fields.String(required=True, metadata={"description": "empty when nothing matched"})
    confidence = fields.String(required=True, metadata={"enum": ["high", "medium", "low"]})
    score = Number(required=True)
    matches = fields.List(fields.Nested(FindMatch), required=True)
    strategy = fields.String(required=True, metadata={"enum": ["lexical", "structured"]})
    threshold = Number(required=True)
    latency_ms = Number(required=True)
    element_count = fields.Integer(required=True)


class WaitResponse(Answer):
    waited = fields.Boolean(required=True, metadata={"description": "false: the wait timed out"})
    elapsed = fields.Integer(required=True, metadata={"description": "milliseconds"})
    match = fields.String(metadata={"description": "what was waited for"})
    error = fields.String(metadata={"description": "why the wait ended without a match"})
