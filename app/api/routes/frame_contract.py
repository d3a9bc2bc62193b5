"""The contract of GET and POST /frame: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Answer, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class FrameSchema(Loose, TabIdMixin):
    target = fields.String(required=True, validate=validate.Length(min=1, error="missing required field 'target'"),
                           error_messages={"required": "missing required field 'target'"},
                           metadata={"description": "main, a ref, an iframe selector, or a frame's name or URL"})


# --- what they answer ------------------------------------------------------------------------------------------------
class FrameScopeInfo(Answer):
    frameId = fields.String(required=True)
    frameUrl = fields.String(required=True)
    frameName = fields.String(required=True)
    ownerRef = fields.String(metadata={"description": "the ref of its <iframe>, once a snapshot named it"})


class FrameResponse(Answer):
    tabId = fields.String(required=True)
    scoped = fields.Boolean(required=True)
    target = fields.String(required=True, metadata={"description": "main, or the scoped frame's id"})
    current = fields.Raw(required=True, metadata={"description": "main, or the scoped frame"})
    frame = fields.Nested(FrameScopeInfo)
