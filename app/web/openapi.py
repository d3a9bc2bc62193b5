"""The API contract, in one place: flask-smorest blueprints whose schemas both check requests and
describe them (and describe every answer), served as ``GET /openapi.json``.

Both apps build their ``Api`` here; their blueprints are :class:`Blueprint`, bound to our request
parser (:mod:`app.web.parser`). Every operation documents the one error shape (:class:`ErrorSchema`)
as its default answer, and needs the bearer token except ``/health``.
"""
from __future__ import annotations

import functools
import re
import threading
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import Any, TypeVar

import flask_smorest
from apispec import APISpec, BasePlugin
from flask import Flask, Response, current_app
from flask_smorest.spec.plugins import FlaskPlugin
from flask_smorest.utils import resolve_schema_instance, set_status_and_headers_in_response, unpack_tuple_response
from marshmallow import Schema, fields
from webargs.flaskparser import FlaskParser

from .parser import VALIDATION_STATUS, reader
from .public import PUBLIC_PATHS

View = TypeVar("View", bound=Callable[..., Any])

# Schemas of answers that are not JSON (alt_response and raw content types).
BINARY = {"type": "string", "format": "binary"}
TEXT = {"type": "string"}


def package_version() -> str:
    """This package's version, from its installed metadata (setup.cfg is the one place it is written)."""
    try:
        return version("pinchtab")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


class ErrorSchema(Schema):
    """Every error answer: ``{"error", "code"}`` plus ``retryable``, ``details`` and ``available`` when useful."""

    error = fields.String(required=True, metadata={"description": "what went wrong, for people"})
    code = fields.String(required=True, metadata={"description": "a stable code, for programs"})
    retryable = fields.Boolean()
    details = fields.Dict()
    available = fields.List(fields.String(), metadata={"description": "the values a field may take, when the "
                                                                      "request named another (an export format)"})


class _DocParser(FlaskParser):
    """What flask-smorest asks of a parser to document ``@bp.arguments``: the status a refused
    request gets. Requests are read by :func:`app.web.parser.reader`."""

    DEFAULT_VALIDATION_STATUS = VALIDATION_STATUS


class Blueprint(flask_smorest.Blueprint):
    """flask-smorest's blueprint, documenting each route as it does; what runs per request is ours.

    flask-smorest's decorators each wrap the view, and its ``arguments`` parses with webargs: six
    layers and a general parser on every call, a sixth of a plain call's time in the app. Here
    ``arguments`` loads with :func:`app.web.parser.reader` and ``response`` dumps and answers, one
    layer each, and the decorators that only document (``alt_response``, ``doc``) add no layer.
    The document is flask-smorest's own: each decorator takes its ``_apidoc`` from flask-smorest's.
    """

    ARGUMENTS_PARSER = _DocParser()

    def arguments(self, schema: Any, *, location: str = "json", **kwargs: Any) -> Callable[[View], View]:
        document = super().arguments(schema, location=location, **kwargs)
        load = reader(schema, location, kwargs.get("unknown"))

        def decorator(view: View) -> View:
            @functools.wraps(view)
            def with_arguments(*args: Any, **kw: Any) -> Any:
                return view(*args, load(), **kw)  # after the arguments above it, as webargs passed them

            with_arguments._apidoc = document(view)._apidoc  # type: ignore[attr-defined]
            return with_arguments

        return decorator

    def response(self, status_code: int, schema: Any = None, **kwargs: Any) -> Callable[[View], View]:
        document = super().response(status_code, schema, **kwargs)
        # A dict schema (``TEXT``, ``BINARY``) only documents an answer the view makes itself.
        dump = getattr(resolve_schema_instance(schema), "dump", None) if schema is not None else None

        def decorator(view: View) -> View:
            @functools.wraps(view)
            def answered(*args: Any, **kw: Any) -> Any:
                result, status, headers = unpack_tuple_response(view(*args, **kw))
                if isinstance(result, Response):
                    set_status_and_headers_in_response(result, status, headers)
                    return result
                resp = current_app.json.response(dump(result) if dump is not None else result)
                set_status_and_headers_in_response(resp, status, headers)
                if status is None and resp.status_code != status_code:
                    resp.status_code = status_code
                return resp

            answered._apidoc = document(view)._apidoc  # type: ignore[attr-defined]
            return answered

        return decorator

    def alt_response(self, status_code: int, response: Any = None, **kwargs: Any) -> Callable[[View], View]:
        return _documents_only(super().alt_response(status_code, response, **kwargs))

    def doc(self, **kwargs: Any) -> Callable[[View], View]:
        return _documents_only(super().doc(**kwargs))


def _documents_only(document: Callable[[View], View]) -> Callable[[View], View]:
    """A flask-smorest decorator that only adds to the document, applied without its layer."""

    def decorator(view: View) -> View:
        view._apidoc = document(view)._apidoc  # type: ignore[attr-defined]
        return view

    return decorator


def tab_route(bp: Blueprint, rule: str, **options: Any) -> Callable:
    """Register ``rule`` and its twin ``/tabs/<tab_id><rule>``; the view gets ``tab_id`` (None on the first).

    Put it above ``@bp.arguments`` and ``@bp.response``, as ``@bp.route`` goes.
    """

    def wrap(view: Callable) -> Callable:
        bp.route(rule, defaults={"tab_id": None}, **options)(view)
        bp.route(f"/tabs/<tab_id>{rule}", **options)(view)
        return view

    return wrap


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)


def openapi_path(rule: str) -> str:
    """A Flask rule as an OpenAPI path, its parameters in the API's camelCase: ``/tabs/{tabId}/text``."""
    return re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", lambda m: "{" + _camel(m.group(1)) + "}", rule)


class _PathPlugin(FlaskPlugin):
    """Path parameters in the API's camelCase (``/tabs/{tabId}/...``), as clients send ``tabId``."""

    flaskpath2openapi = staticmethod(openapi_path)

    def rule_to_params(self, rule: Any) -> list[dict[str, Any]]:
        params = super().rule_to_params(rule)
        for p in params:
            p["name"] = _camel(p["name"])
        return params


class _PathTabPlugin(BasePlugin):
    """One place names the tab. On ``/tabs/{tabId}/...`` it is the path: the twin's query takes no
    ``tabId``. Where the path or the query names it (``POST /upload?tabId=``), the body takes none.

    The views share their schemas with the flat routes, so the schemas keep the field; the parser
    refuses a second ``tabId`` that differs from the first, and the document offers none at all.
    """

    def operation_helper(self, path: str | None = None, operations: dict[str, Any] | None = None,
                         **kwargs: Any) -> None:
        if not path or not operations:
            return
        for op in operations.values():
            if not isinstance(op, dict):
                continue
            params = op.get("parameters") or []
            if "{tabId}" in path:
                params = op["parameters"] = [p for p in params if not _is_param(p, "query", "tabId")]
            if "{tabId}" in path or any(_is_param(p, "query", "tabId") for p in params):
                for media in (op.get("requestBody") or {}).get("content", {}).values():
                    if "schema" in media:
                        media["schema"] = {"allOf": [media["schema"], {"not": {"required": ["tabId"]}}]}


def _is_param(param: Any, where: str, name: str) -> bool:
    return isinstance(param, dict) and param.get("in") == where and param.get("name") == name


class _SchemaRulesPlugin(BasePlugin):
    """A schema's rules across fields (its ``@validates_schema``), told to the document too: a
    schema class may set ``OPENAPI_RULES`` (JSON Schema keywords, e.g. ``anyOf``), kept next to the
    validator that enforces them."""

    def schema_helper(self, name: str, definition: dict[str, Any], **kwargs: Any) -> dict[str, Any] | None:
        schema = kwargs.get("schema")
        cls = schema if isinstance(schema, type) else type(schema)
        rules = getattr(cls, "OPENAPI_RULES", None)
        return {**definition, **rules} if rules else None


class _BearerPlugin(BasePlugin):
    """Every operation but the public ones (``app.web.public``) needs the bearer token."""

    def operation_helper(self, path: str | None = None, operations: dict[str, Any] | None = None,
                         **kwargs: Any) -> None:
        if path in PUBLIC_PATHS or not operations:
            return
        for op in operations.values():
            op.setdefault("security", [{"bearer": []}])


class Api(flask_smorest.Api):
    """flask-smorest's Api, describing blueprints when the document is first read, not at start.

    Describing converts every schema to JSON Schema: done at registration it made each bridge
    (and so each server-mode instance) start about 0.2 s later, for a document few callers read.
    """

    ERROR_SCHEMA = ErrorSchema

    def __init__(self, app: Flask | None = None, **kwargs: Any) -> None:
        self._undescribed: list[tuple[flask_smorest.Blueprint, str, Any]] = []
        self._describe_lock = threading.Lock()
        super().__init__(app, **kwargs)

    def register_blueprint(self, blp: flask_smorest.Blueprint, *, parameters: Any = None, **options: Any) -> None:
        name = options.get("name", blp.name)
        self._app.extensions["flask-smorest"]["blp_name_to_api"][name] = self
        self._app.register_blueprint(blp, **options)
        self._undescribed.append((blp, name, parameters))

    def document(self) -> APISpec:
        """The spec, with every blueprint registered so far described in it."""
        with self._describe_lock:
            while self._undescribed:
                blp, name, parameters = self._undescribed.pop(0)
                blp.register_views_in_doc(self, self._app, self.spec, name=name, parameters=parameters)
                self.spec.tag({"name": name, "description": blp.description})
        return self.spec

    def _openapi_json(self) -> Any:
        self.document()
        return super()._openapi_json()


def init_api(app: Flask, title: str, description: str) -> Api:
    """The app's Api: ``GET /openapi.json`` (and ``/help``), our error shape, the bearer scheme."""
    app.config.update(API_TITLE=title, API_VERSION=package_version(), OPENAPI_VERSION="3.0.3",
                      OPENAPI_URL_PREFIX="/", OPENAPI_JSON_PATH="openapi.json")
    plugins = [_PathTabPlugin(), _SchemaRulesPlugin(), _BearerPlugin()]
    api = Api(app, spec_kwargs={"flask_plugin": _PathPlugin(), "extra_plugins": plugins,
                                "info": {"description": description}})
    api.spec.components.security_scheme("bearer", {"type": "http", "scheme": "bearer"})
    app.add_url_rule("/help", endpoint="help", view_func=lambda: api.document().to_dict())
    return api
