"""The contract of POST /dialog and GET /tabs/{tabId}/state: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Answer, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class DialogSchema(Loose, TabIdMixin):
    action = fields.String(required=True,
                           validate=validate.OneOf(("accept", "dismiss"), error="action must be 'accept' or 'dismiss'"),
                           error_messages={"required": "action required (accept or dismiss)"})
    text = fields.String(load_default="")


# --- what they answer ------------------------------------------------------------------------------------------------
class DialogResponse(Answer):
    type = fields.String(required=True, metadata={"enum": ["alert", "confirm", "prompt", "beforeunload"]})
    message = fields.String(required=True)
    handled = fields.Boolean(required=True)


class DialogInfo(Answer):
    type = fields.String(required=True)
    message = fields.String(required=True)
    defaultPrompt = fields.String()


class LoadState(Answer):
    readyState = fields.String(required=True, metadata={"enum": ["loading", "interactive", "complete"]})
    navigationInProgress = fields.Boolean(required=True)
    state = fields.String(required=True, metadata={"enum": ["loading", "domcontentloaded", "load", "networkidle"]})


class TabStateResponse(Answer):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    dialogPresent = fields.Boolean(required=True)
    dialog = fields.Nested(DialogInfo, metadata={"description": "the open dialog, when there is one"})
    load = fields.Nested(LoadState, required=True)
    actionability = fields.String(required=True, metadata={"enum": ["ready", "caution", "blocked"]})
