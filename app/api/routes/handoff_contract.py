"""The contract of POST|GET /tabs/{id}/handoff and POST /tabs/{id}/resume: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Answer


# --- what the routes take --------------------------------------------------------------------------------------------
class HandoffSchema(Loose):
    reason = fields.String(load_default="", validate=validate.Length(max=1000))
    # ms until the tab goes back to the agents by itself; 0 or absent: until POST /resume
    timeoutMs = fields.Integer(load_default=0, validate=validate.Range(min=0, max=86_400_000))


class ResumeSchema(Loose):
    status = fields.String(load_default="completed", validate=validate.Length(min=1, max=100))
    resolvedData = fields.Raw(load_default=None, allow_none=True)


# --- what they answer ------------------------------------------------------------------------------------------------
class Resolution(Answer):
    status = fields.String(required=True)
    resolvedData = fields.Raw(allow_none=True)
    resumedAt = fields.String(required=True)


class HandoffStateResponse(Answer):
    tabId = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": ["active", "paused_handoff"]})
    reason = fields.String(metadata={"description": "paused: why (the same as handoffReason)"})
    handoffReason = fields.String()
    pausedAt = fields.String()
    expiresAt = fields.String()
    lastResolution = fields.Nested(Resolution)


class ResumeResponse(Answer):
    tabId = fields.String(required=True)
    status = fields.String(required=True)
    resumed = fields.Boolean(required=True)
    resolution = fields.Nested(Resolution, required=True)
