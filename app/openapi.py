"""``GET /openapi.json``: every route, generated from the marshmallow schemas that validate them."""
from __future__ import annotations

import re
from typing import Any

from apispec import APISpec
from apispec.ext.marshmallow import MarshmallowPlugin
from flask import Flask
from marshmallow import Schema, fields

VERSION = "0.1.0"


class ErrorSchema(Schema):
    error = fields.String(required=True, metadata={"description": "what went wrong, for people"})
    code = fields.String(required=True, metadata={"description": "a stable code, for programs"})
    retryable = fields.Boolean()
    details = fields.Dict()


def build(app: Flask) -> dict[str, Any]:
    """The OpenAPI 3 document of ``app``'s routes (views without ``@doc`` are listed bare)."""
    spec = APISpec(title="Pinchtab", version=VERSION, openapi_version="3.0.3", plugins=[MarshmallowPlugin()],
                   info={"description": "A browser API for AI agents."})
    spec.components.schema("Error", schema=ErrorSchema)
    spec.components.security_scheme("bearer", {"type": "http", "scheme": "bearer"})
    paths: dict[str, dict[str, Any]] = {}
    for rule in sorted(app.url_map.iter_rules(), key=lambda r: r.rule):
        if rule.endpoint == "static":
            continue
        view = app.view_functions[rule.endpoint]
        api = getattr(view, "__api__", {})
        path = re.sub(r"<(?:[^:>]+:)?([^>]+)>", lambda m: "{" + _camel(m.group(1)) + "}", rule.rule)
        ops = paths.setdefault(path, {})
        for method in sorted((rule.methods or set()) - {"HEAD", "OPTIONS"}):
            op: dict[str, Any] = {"summary": api.get("summary", rule.endpoint), "tags": [rule.endpoint.split(".")[0]],
                                  "responses": {"200": {"description": "success",
                                                        "content": {api.get("produces", "application/json"): {}}},
                                                "default": {"description": "an error",
                                                            "content": {"application/json": {"schema": "Error"}}}}}
            params = [{"in": "path", "name": _camel(a), "required": True, "schema": {"type": "string"}}
                      for a in rule.arguments if not (rule.defaults and a in rule.defaults)]
            if api.get("query") is not None:
                params.append({"in": "query", "schema": api["query"]})
            elif api.get("body") is not None and method == "GET":
                params.append({"in": "query", "schema": api["body"]})
            if params:
                op["parameters"] = params
            if api.get("body") is not None and method != "GET":
                op["requestBody"] = {"content": {"application/json": {"schema": api["body"]}}}
            if rule.rule != "/health":
                op["security"] = [{"bearer": []}]
            ops[method.lower()] = op
    for path, ops in paths.items():
        spec.path(path=path, operations=ops)
    return spec.to_dict()


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p.title() for p in rest)
