"""The contract of GET /console, GET /errors and their /clear: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import MAX_COUNT, Answer, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class LogsQuerySchema(Loose, TabIdMixin):
    """GET /console and /errors: the last ``limit`` entries (0: all that are kept)."""

    limit = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_COUNT))


# --- what they answer ------------------------------------------------------------------------------------------------
class ConsoleEntry(Answer):
    timestamp = fields.String(required=True)
    level = fields.String(required=True, metadata={"description": "log, info, warning, error, debug, ..."})
    message = fields.String(required=True)
    source = fields.String(metadata={"description": "the script's URL"})


class ErrorEntry(Answer):
    timestamp = fields.String(required=True)
    message = fields.String(required=True)
    url = fields.String()
    line = fields.Integer()
    column = fields.Integer()


class ConsoleResponse(Answer):
    tabId = fields.String(required=True)
    console = fields.List(fields.Nested(ConsoleEntry), required=True)


class ErrorsResponse(Answer):
    tabId = fields.String(required=True)
    errors = fields.List(fields.Nested(ErrorEntry), required=True)


class ClearedResponse(Answer):
    success = fields.Boolean(required=True)
    tabId = fields.String(required=True)
