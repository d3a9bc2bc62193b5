"""Reading a request: the JSON body or the query, validated by a schema, plus the path's tab id."""
from __future__ import annotations

import json
from typing import Any

from flask import request
from marshmallow import Schema

from ..errors import BadRequest


def json_body() -> dict[str, Any]:
    """The request's JSON object; an empty body is ``{}``."""
    raw = request.get_data(cache=True)  # cached: the activity log reads the body again
    if not raw.strip():
        return {}
    try:
        data = json.loads(raw)  # whatever the content type: curl -d sends a form one
    except ValueError:
        raise BadRequest("invalid JSON body", code="bad_json") from None
    if not isinstance(data, dict):
        raise BadRequest("JSON body must be an object", code="bad_json")
    return data


def query_args() -> dict[str, Any]:
    return {k: v for k, v in request.args.items()}


_SCHEMAS: dict[type[Schema], Schema] = {}


def schema_of(cls: type[Schema]) -> Schema:
    """One instance per schema class: building one costs more than loading with it (loads are stateless)."""
    inst = _SCHEMAS.get(cls)
    if inst is None:
        inst = _SCHEMAS[cls] = cls()
    return inst


def load(schema: type[Schema], data: dict[str, Any], path_tab_id: str | None = None) -> dict[str, Any]:
    """Validate ``data``; a ``/tabs/{id}/...`` path id wins, and a different body tabId is an error."""
    if path_tab_id is not None:
        given = data.get("tabId")
        if given is not None and given != path_tab_id:
            if not isinstance(given, str) or not given:
                raise BadRequest("invalid tabId", details={"field": "tabId"})
            raise BadRequest("tabId in body does not match path id", details={"field": "tabId"})
        data = {**data, "tabId": path_tab_id}
    return schema_of(schema).load(data)


def from_body(schema: type[Schema], tab_id: str | None = None) -> dict[str, Any]:
    return load(schema, json_body(), tab_id)


def from_query(schema: type[Schema], tab_id: str | None = None) -> dict[str, Any]:
    return load(schema, query_args(), tab_id)
