"""Reading requests: what every route's ``@bp.arguments`` hands its view.

flask-smorest documents each route's schema; the request itself is read here, in one step (webargs'
general parser cost more than loading the schema, on every call). The rules:

* A JSON body is read whatever its content type (``curl -d`` sends a form one), and a body that
  is not a JSON object is a 400 ``bad_json``. An empty body is ``{}``.
* A query string gives the first value of each name.
* On ``/tabs/{tabId}/...`` routes the path's tab id is the request's ``tabId``; a different one
  in the body or query is a 400.
* A validation error is raised with the schema's own messages: ``app.web.errors`` turns it into
  the one error shape (400, naming the first field as the client sent it), like every other error.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Request, request
from marshmallow import Schema

from . import untrusted_json
from .errors import BadRequest

VALIDATION_STATUS = 400  # what the document lists for a request its schema refuses
JSON_BODY = "pinchtab.json_body"  # the environ key of the JSON object a request's body held, once read


def read_json(req: Request) -> dict[str, Any]:
    """The request's JSON body, an object (``{}`` when empty)."""
    raw = body(req)
    if not raw.strip():
        return {}
    try:
        data = untrusted_json.loads(raw)
    except ValueError:
        raise BadRequest("invalid JSON body", code="bad_json") from None
    if not isinstance(data, dict):
        raise BadRequest("JSON body must be an object", code="bad_json")
    req.environ[JSON_BODY] = data  # for the activity log, which would otherwise parse it again
    return data


def body(req: Request) -> bytes:
    """The request's body, kept on the request for any later reader of it, as
    ``get_data(cache=True)`` keeps it.

    A body of declared length within ``MAX_CONTENT_LENGTH`` is read straight from the server's
    stream: werkzeug's wrapping of it (a limited stream read to its end) cost more than the rest
    of reading a small request. Anything else (no length, as a chunked body has; too long; the
    stream read already) goes through ``get_data``, which also answers the 413.
    """
    length = req.environ.get("CONTENT_LENGTH") or ""
    limit = req.max_content_length
    if (not length.isdigit() or (limit is not None and int(length) > limit)
            or getattr(req, "_cached_data", None) is not None or "stream" in req.__dict__):
        return req.get_data(cache=True)
    size = int(length)
    raw = req.environ["wsgi.input"].read(size) if size else b""
    req._cached_data = raw  # werkzeug's own cache of get_data(cache=True)
    return raw


def read_query(req: Request) -> dict[str, Any]:
    return dict(req.args.items())  # the first value of each name


READERS: dict[str, Callable[[Request], dict[str, Any]]] = {"json": read_json, "query": read_query}


def reader(schema: type[Schema] | Schema, location: str, unknown: str | None = None) -> Callable[[], Any]:
    """What ``@bp.arguments(schema, location=...)`` reads from the current request, loaded."""
    inst = schema_instance(schema) if isinstance(schema, type) else schema
    read = READERS[location]  # a KeyError here is a route declaring a place we do not read
    options = {"unknown": unknown} if unknown else {}  # else each schema's own Meta.unknown decides
    takes_tab = "tabId" in inst.fields

    def load() -> Any:
        req = current_request()
        data = read(req)
        if takes_tab:
            data = with_path_tab(data, (req.view_args or {}).get("tab_id"))
        return inst.load(data, **options)

    return load


def current_request() -> Request:
    """The request itself, not Flask's proxy to it: each use of ``flask.request`` looks the request
    up anew, and a reader that asks it a handful of things pays that each time."""
    return request._get_current_object()  # type: ignore[attr-defined,no-any-return]


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
    """Validate ``data`` outside a route's own arguments (a step of a batch, say), as a route would."""
    return schema_instance(schema).load(with_path_tab(data, path_tab_id))
