"""The contract of POST /lock and /unlock: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import OWNER, Answer, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class LockSchema(Loose, TabIdMixin):
    owner = fields.String(required=True, validate=OWNER, error_messages={"required": "owner required"})
    timeoutSec = fields.Float(load_default=600.0, validate=validate.Range(min=1, max=86400))


class UnlockSchema(Loose, TabIdMixin):
    owner = fields.String(required=True, validate=OWNER, error_messages={"required": "owner required"})


# --- what they answer ------------------------------------------------------------------------------------------------
class LockResponse(Answer):
    locked = fields.Boolean(required=True)
    tabId = fields.String(required=True)
    owner = fields.String(required=True)
    expiresAt = fields.String(required=True)


class UnlockResponse(Answer):
    unlocked = fields.Boolean(required=True)
    tabId = fields.String(required=True)
    released = fields.Boolean(required=True, metadata={"description": "false: there was no lease to release"})
