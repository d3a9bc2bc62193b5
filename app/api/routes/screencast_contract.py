"""The contract of GET /screencast and /screencast/tabs: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Answer, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class ScreencastQuerySchema(Loose, TabIdMixin):
    format = fields.String(load_default="jpeg", validate=validate.OneOf(("jpeg", "png")))
    quality = fields.Integer(load_default=40, validate=validate.Range(min=1, max=100))
    maxWidth = fields.Integer(load_default=800, validate=validate.Range(min=16, max=4096))
    maxHeight = fields.Integer(load_default=600, validate=validate.Range(min=16, max=4096))
    everyNthFrame = fields.Integer(load_default=1, validate=validate.Range(min=1, max=60))
    fps = fields.Integer(load_default=5, validate=validate.Range(min=1, max=30),
                         metadata={"description": "at most this many frames a second reach the client"})


# --- what they answer ------------------------------------------------------------------------------------------------
class ScreencastTab(Answer):
    id = fields.String(required=True)
    url = fields.String()
    title = fields.String()
