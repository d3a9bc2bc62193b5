"""The contract of saved and live state (/state/...): what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.files import STATE_NAME
from ...web.schemas import Loose
from ..contract import MAX_COUNT, Answer, Number, RawList, TabIdMixin

# --- what the routes take --------------------------------------------------------------------------------------------
_STATE_NAME_ERROR = ("name must be 1-64 letters, digits, '-', '_' or '.', not starting with a dot "
                     "(no slashes: state files stay in <stateDir>/sessions)")


def _state_name(**kwargs):  # type: ignore[no-untyped-def]
    return fields.String(validate=validate.Regexp(STATE_NAME, error=_STATE_NAME_ERROR), **kwargs)


class StateSaveSchema(Loose, TabIdMixin):
    name = _state_name()
    encrypt = fields.Boolean(load_default=False)
    metadata = fields.Dict(load_default=dict)


class StateLoadSchema(Loose, TabIdMixin):
    name = _state_name(required=True, error_messages={"required": "name required"})


class StateNameQuerySchema(Loose):
    name = _state_name(required=True, error_messages={"required": "name required"})
    reveal = fields.Boolean(load_default=False)


class StateCleanSchema(Loose):
    olderThanHours = fields.Float(load_default=24.0, validate=validate.Range(min=0, max=MAX_COUNT))


# --- what they answer ------------------------------------------------------------------------------------------------
class StateSavedResponse(Answer):
    name = fields.String(required=True)
    path = fields.String(required=True)
    cookies = fields.Integer(required=True, metadata={"description": "how many cookies were saved"})
    origins = fields.List(fields.String(), required=True)
    encrypted = fields.Boolean(required=True)


class StateLoadedResponse(Answer):
    name = fields.String(required=True, allow_none=True)
    cookiesRestored = fields.Integer(required=True)
    storageItemsRestored = fields.Integer(required=True)
    origins = fields.List(fields.String(), required=True)
    skippedOrigins = fields.List(fields.String(), required=True,
                                 metadata={"description": "origins the tab is not on: load there to restore them"})


class StateEntry(Answer):
    name = fields.String(required=True)
    savedAt = fields.String(required=True)
    size = fields.Integer(required=True)


class StateListResponse(Answer):
    states = fields.List(fields.Nested(StateEntry), required=True)
    count = fields.Integer(required=True)


class StateRecordResponse(Answer):
    """A saved state as its file holds it (cookie values masked unless reveal=true)."""

    version = fields.Integer()
    name = fields.String()
    savedAt = fields.String()
    origins = fields.List(fields.String())
    cookies = RawList(fields.Dict())
    storage = fields.Dict(metadata={"description": "by origin: local and session storage"})
    metadata = fields.Dict()
    encrypted = fields.Boolean()


class StateDeletedResponse(Answer):
    deleted = fields.String(required=True)


class StateCleanedResponse(Answer):
    removed = fields.Integer(required=True)
    olderThanHours = Number(required=True, metadata={"description": "a whole number when it is one"})
    sessionsDir = fields.String(required=True)


class LiveStateResponse(Answer):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    origins = fields.List(fields.String(), required=True)
    cookies = RawList(fields.Dict(), required=True)
    storage = fields.Dict(required=True, metadata={"description": "by origin: local and session storage"})
    metadata = fields.Dict(required=True, metadata={"description": "url, title, origin, userAgent"})
