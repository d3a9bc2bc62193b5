"""The contract of POST /action and /actions: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import SNAP, SnapshotAfterMixin, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class ActionsSchema(Loose, TabIdMixin):
    actions = fields.List(fields.Dict(), required=True, validate=validate.Length(min=1, error="actions array is empty"),
                          error_messages={"required": "actions array is empty"})
    stopOnError = fields.Boolean(load_default=False)
    snap = fields.String(load_default="", validate=validate.OneOf(SNAP, error="snap must be 'diff' or 'compact'"))
    owner = fields.String(validate=validate.Length(min=1, max=200))


# --- what they answer ------------------------------------------------------------------------------------------------
class ActionResponse(SnapshotAfterMixin):
    success = fields.Boolean(required=True)
    result = fields.Dict(required=True, metadata={"description": "what the action did, by kind"})
