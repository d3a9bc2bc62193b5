"""The contract of POST|DELETE /tabs/{tabId}/debug: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields

from ...web.schemas import Loose
from ..contract import Answer


class TabDebugSchema(Loose):
    sessionId = fields.String(metadata={"description": "join this session (default: a new one)"})


class TabDebugResponse(Answer):
    sessionId = fields.String(required=True)
    tabId = fields.String(required=True)
    appId = fields.String(required=True)
    appUrl = fields.String()
    agentUrl = fields.String()
    sdkUrl = fields.String()
    eventsUrl = fields.String()


class TabDetached(Answer):
    detached = fields.Boolean(required=True)
    tabId = fields.String(required=True)
