"""The contract of GET, POST and DELETE /storage: what they take and what they answer."""
from __future__ import annotations

from marshmallow import ValidationError, fields, validate, validates_schema

from ...web.schemas import Loose
from ..contract import Answer, TabIdMixin

# --- what the routes take --------------------------------------------------------------------------------------------
_STORAGE_TYPE_ERROR = "type must be 'local' or 'session'"


class StorageQuerySchema(Loose, TabIdMixin):
    """GET /storage: both storages unless ``type`` names one; only ``key`` when given."""

    type = fields.String(load_default="", validate=validate.OneOf(("", "local", "session"), error=_STORAGE_TYPE_ERROR))
    key = fields.String(load_default="")


class StorageSetSchema(Loose, TabIdMixin):
    key = fields.String(required=True, validate=validate.Length(min=1, error="key is required"),
                        error_messages={"required": "key is required"})
    value = fields.String(load_default="")
    type = fields.String(required=True, validate=validate.OneOf(("local", "session"), error=_STORAGE_TYPE_ERROR),
                         error_messages={"required": "type is required (local or session)"})


class StorageDeleteSchema(Loose, TabIdMixin):
    """DELETE /storage: one key of one storage, one storage, or (the default) both."""

    type = fields.String(load_default="all", validate=validate.OneOf(
        ("local", "session", "all"), error="type must be 'local', 'session', or 'all'"))
    key = fields.String(load_default="")

    # _key_needs_one_storage, in the document's words (app/web/openapi.py reads it).
    OPENAPI_RULES = {"anyOf": [{"properties": {"key": {"maxLength": 0}}},
                               {"required": ["type"], "properties": {"type": {"enum": ["local", "session"]}}}]}

    @validates_schema
    def _key_needs_one_storage(self, data, **kwargs):  # type: ignore[no-untyped-def]
        if data.get("key") and data.get("type") == "all":
            raise ValidationError("key cannot be used with type=all; omit key to clear both storages", "key")


# --- what they answer ------------------------------------------------------------------------------------------------
class StorageItem(Answer):
    key = fields.String(required=True)
    value = fields.String(required=True)


class StorageResponse(Answer):
    local = fields.List(fields.Nested(StorageItem), required=True)
    session = fields.List(fields.Nested(StorageItem), required=True)
    origin = fields.String(required=True)


class StorageChangedResponse(Answer):
    success = fields.Boolean(required=True)
    origin = fields.String(required=True)
    action = fields.String(metadata={"enum": ["removeItem", "clear"]})
    key = fields.String()
    type = fields.String(metadata={"enum": ["all"]})
