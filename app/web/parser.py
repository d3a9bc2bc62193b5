"""Reading requests: the webargs parser every route's ``@bp.arguments`` uses.

Three things differ from webargs' stock Flask parser:

* A JSON body is read whatever its content type (``curl -d`` sends a form one), and a body that
  is not a JSON object is a 400 ``bad_json``.
* On ``/tabs/{tabId}/...`` routes the path's tab id is the request's ``tabId``; a different one
  in the body or query is a 400.
* A validation error is raised with the schema's own messages (not filed under the location):
  ``app.web.errors`` turns it into the one error shape (400, naming the first field as the client
  sent it), like every other error.
"""
from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError
from webargs.flaskparser import FlaskParser

from . import untrusted_json
from .errors import BadRequest


class Parser(FlaskParser):
    DEFAULT_VALIDATION_STATUS = 400  # what the docs list; the answer itself comes from app.web.errors

    def load_json(self, req: Any, schema: Schema) -> Any:
        raw = req.get_data(cache=True)  # cached: the activity log reads the body again
        if not raw.strip():
            return {}
        try:
            data = untrusted_json.loads(raw)
        except ValueError:
            raise BadRequest("invalid JSON body", code="bad_json") from None
        if not isinstance(data, dict):
            raise BadRequest("JSON body must be an object", code="bad_json")
        return data

    def load_querystring(self, req: Any, schema: Schema) -> Any:
        return dict(req.args.items())  # the first value of each name

    def _load_location_data(self, *, schema: Schema, req: Any, location: str) -> Any:
        data = super()._load_location_data(schema=schema, req=req, location=location)
        if "tabId" in schema.fields:
            data = with_path_tab(data, (req.view_args or {}).get("tab_id"))
        return data

    def _get_schema(self, argmap: Any, req: Any) -> Schema:
        # A route names its schema class; webargs would build an instance per request, which costs
        # more than loading with it. One instance per class serves every request (loading keeps no state).
        if isinstance(argmap, type) and issubclass(argmap, Schema):
            return schema_instance(argmap)
        return super()._get_schema(argmap, req)

    def handle_error(self, error: ValidationError, req: Any, schema: Schema, *, error_status_code: int | None,
                     error_headers: Any) -> Any:
        # webargs files the messages under the location ({"json": {"url": [...]}}); the answer
        # names the field as the client sent it.
        (error.messages,) = error.messages.values()
        raise error


# unknown=None: each schema's own Meta.unknown decides (webargs would exclude unknown query keys).
parser = Parser(unknown=None)


def with_path_tab(data: dict[str, Any], path_tab_id: str | None) -> dict[str, Any]:
    """``data`` with the path's tab id as its ``tabId``; a different ``tabId`` in it is a 400."""
    if path_tab_id is None:
        return data
    given = data.get("tabId")
    if given is not None and given != path_tab_id:
        if not isinstance(given, str) or not given:
            raise BadRequest("invalid tabId", details={"field": "tabId"})
        raise BadRequest("tabId in body does not match path id", details={"field": "tabId"})
    return {**data, "tabId": path_tab_id}


_SCHEMAS: dict[type[Schema], Schema] = {}


def schema_instance(schema: type[Schema]) -> Schema:
    """The one instance of ``schema`` that loads requests (building one costs more than loading with it)."""
    inst = _SCHEMAS.get(schema)
    if inst is None:
        inst = _SCHEMAS[schema] = schema()
    return inst


def load(schema: type[Schema], data: dict[str, Any], path_tab_id: str | None = None) -> Any:
    """Validate ``data`` outside a route's own arguments (a step of a batch, say), as the parser would."""
    return schema_instance(schema).load(with_path_tab(data, path_tab_id))
