"""The contract of POST /macro: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import OWNER, ActionsResponse, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class MacroSchema(Loose, TabIdMixin):
    owner = fields.String(validate=OWNER)
    steps = fields.List(fields.Dict(), required=True,
                        validate=validate.Length(min=1, max=200, error="steps must hold 1 to 200 actions"),
                        error_messages={"required": "steps required"})
    stopOnError = fields.Boolean(load_default=True)
    stepTimeout = fields.Float(validate=validate.Range(min=0.1, max=60))


# --- what they answer ------------------------------------------------------------------------------------------------
class MacroResponse(ActionsResponse):
    kind = fields.String(required=True, metadata={"enum": ["macro"]})
