"""The contract of POST /upload and GET /download: what they take and what they answer."""
from __future__ import annotations

from marshmallow import ValidationError, fields, validate, validates_schema

from ...web.schemas import Loose
from ..contract import Answer, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class UploadSchema(Loose, TabIdMixin):
    selector = fields.String(load_default="input[type=file]", validate=validate.Length(min=1))
    files = fields.List(fields.String(), load_default=list)
    paths = fields.List(fields.String(validate=validate.Length(min=1)), load_default=list)
    owner = fields.String(validate=validate.Length(min=1, max=200), metadata={"description": "the tab's lock owner"})

    # _needs_something, in the document's words (app/web/openapi.py reads it).
    OPENAPI_RULES = {"anyOf": [{"required": ["files"], "properties": {"files": {"minItems": 1}}},
                               {"required": ["paths"], "properties": {"paths": {"minItems": 1}}}]}

    @validates_schema
    def _needs_something(self, data, **kwargs):  # type: ignore[no-untyped-def]
        if not data.get("files") and not data.get("paths"):
            raise ValidationError("files or paths required", "files")


class DownloadQuerySchema(Loose, TabIdMixin):
    url = fields.String(required=True, validate=validate.Length(min=1, error="url required"),
                        error_messages={"required": "url required"})
    output = fields.String(load_default="", validate=validate.OneOf(("", "inline", "json", "file")))
    path = fields.String(load_default="")
    raw = fields.Boolean(load_default=False)


# --- what they answer ------------------------------------------------------------------------------------------------
class UploadResponse(Answer):
    status = fields.String(required=True)
    files = fields.Integer(required=True)


class DownloadResponse(Answer):
    data = fields.String(required=True, metadata={"description": "base64"})
    contentType = fields.String(required=True)
    size = fields.Integer(required=True)
    url = fields.String(required=True, metadata={"description": "the final URL, after redirects"})


class DownloadSavedResponse(Answer):
    status = fields.String(required=True)
    path = fields.String(required=True)
    size = fields.Integer(required=True)
    contentType = fields.String(required=True)
