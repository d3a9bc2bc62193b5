"""The contract of GET /tabs, POST /tab, POST /close and GET /health: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Answer, TabIdMixin

# --- what the routes take --------------------------------------------------------------------------------------------
TAB_ACTION_ERROR = "action must be 'new' or 'focus'; use /close to close a tab"


class TabActionSchema(Loose, TabIdMixin):
    action = fields.String(required=True, validate=validate.OneOf(("new", "focus"), error=TAB_ACTION_ERROR),
                           error_messages={"required": TAB_ACTION_ERROR})
    url = fields.String()


class CloseSchema(Loose, TabIdMixin):
    pass


# --- what they answer ------------------------------------------------------------------------------------------------
class HealthResponse(Answer):
    status = fields.String(required=True, metadata={"description": "ok, starting or error"})
    tabs = fields.Integer()
    restarts = fields.Integer()
    reason = fields.String(metadata={"description": "why the browser is not up"})


class TabInfo(Answer):
    id = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": ["active", "paused_handoff"]})
    reason = fields.String(metadata={"description": "paused: why (the same as handoffReason)"})
    handoffReason = fields.String()
    pausedAt = fields.String()
    owner = fields.String(metadata={"description": "who holds the tab's lease"})
    lockedUntil = fields.String()


class TabsResponse(Answer):
    tabs = fields.List(fields.Nested(TabInfo), required=True)


class TabActionResponse(Answer):
    """``new``: the new tab's id, URL and title; ``focus``: ``focused`` and the id."""

    tabId = fields.String(required=True)
    url = fields.String()
    title = fields.String()
    focused = fields.Boolean()


class ClosedResponse(Answer):
    closed = fields.Boolean(required=True)
    tabId = fields.String(required=True)
