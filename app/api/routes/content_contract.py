"""The contract of GET /text and GET /screenshot: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import MAX_COUNT, Annotation, IdpiWarned, InlineFileResponse, SavedFileResponse, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class TextQuerySchema(Loose, TabIdMixin):
    mode = fields.String(load_default="readable", validate=validate.OneOf(("readable", "raw")))
    format = fields.String(load_default="json", validate=validate.OneOf(("json", "text", "plain")))
    maxChars = fields.Integer(validate=validate.Range(min=1, max=100 * MAX_COUNT))
    selector = fields.String(load_default="", metadata={"description": "the text of this element alone"})
    ref = fields.String(load_default="", metadata={"description": "the same as selector (any selector)"})
    frameId = fields.String(load_default="", metadata={"description": "the text of this frame (and its frames)"})


class ScreenshotQuerySchema(Loose, TabIdMixin):
    format = fields.String(load_default="jpeg", validate=validate.OneOf(("jpeg", "jpg", "png")))
    quality = fields.Integer(load_default=80, validate=validate.Range(min=0, max=100))
    raw = fields.Boolean(load_default=False)
    beyondViewport = fields.Boolean(load_default=False)
    scale = fields.Float(load_default=1.0, validate=validate.Range(min=0.05, max=4))


class ScreenshotRequestSchema(ScreenshotQuerySchema):
    """The screenshot query, plus clipping to one element and saving to a file."""

    selector = fields.String(load_default="")
    output = fields.String(load_default="", validate=validate.OneOf(("", "inline", "json", "file")))
    path = fields.String(load_default="")
    annotate = fields.Boolean(load_default=False, metadata={
        "description": "draw numbered boxes over the interactive elements for this picture; answer them"})
    noAnimations = fields.Boolean(load_default=False, metadata={
        "description": "hold animations and transitions still for the capture"})


# --- what they answer ------------------------------------------------------------------------------------------------
class ScreenshotResponse(InlineFileResponse):
    """The picture in base64; with annotate=true, the boxes drawn on it (in its coordinates)."""

    annotations = fields.List(fields.Nested(Annotation))


class SavedScreenshotResponse(SavedFileResponse):
    annotations = fields.List(fields.Nested(Annotation))


class TextResponse(IdpiWarned):
    url = fields.String(required=True)
    title = fields.String(required=True)
    text = fields.String(required=True)
    truncated = fields.Boolean(required=True, metadata={"description": "cut at maxChars"})
