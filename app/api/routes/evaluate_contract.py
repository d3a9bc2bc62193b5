"""The contract of POST /evaluate: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Answer, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class EvaluateSchema(Loose, TabIdMixin):
    expression = fields.String(required=True, validate=validate.Length(min=1),
                               error_messages={"required": "expression required"})
    awaitPromise = fields.Boolean(load_default=False)


# --- what they answer ------------------------------------------------------------------------------------------------
class EvaluateResponse(Answer):
    result = fields.Raw(required=True, allow_none=True,
                        metadata={"description": "the value, or a description of what cannot be sent by value"})
