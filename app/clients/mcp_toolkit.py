"""How ``pinchtab mcp`` declares its tools and checks the arguments a client sends.

A tool is a :class:`ToolSpec`: what the model reads (name, description, parameter schemas) and
the function behind it. Arguments are checked here, before any request, against the same
schemas the tool list publishes, so a tool cannot accept what it does not describe.

Clients written for the original PinchTab send its argument names; where ours differ, the
original's spelling is accepted as a hidden alias (``aliases``: alias -> parameter), so the list
the model reads each turn stays short and names each thing once.
"""
from __future__ import annotations

import difflib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from mcp import types

from .rest import Client, ClientError

__all__ = ["Content", "Handler", "ToolError", "ToolSpec", "as_json", "check_args", "check_tools", "declarer",
           "error_result", "no_such_route", "p", "text"]

Content = types.ContentBlock
Handler = Callable[[Client, dict[str, Any]], list[Content]]


class ToolError(Exception):
    """A call refused before any request: bad arguments, a URL we do not open."""


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the model sees it (name, description, parameters) and the function behind it.

    ``aliases`` maps other accepted argument names (the original's, older ones of ours) to the
    parameter they stand for; they are not listed. ``route`` names the REST call, for the error
    a server without that route gives.
    """

    name: str
    description: str
    properties: Mapping[str, Mapping[str, Any]]
    required: tuple[str, ...]
    read_only: bool
    handler: Handler
    aliases: Mapping[str, str] = field(default_factory=dict)
    route: str = ""

    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": {k: dict(v) for k, v in self.properties.items()}}
        if self.required:
            schema["required"] = list(self.required)
        return schema

    def to_mcp(self) -> types.Tool:
        return types.Tool(name=self.name, description=self.description, input_schema=self.input_schema(),
                          annotations=types.ToolAnnotations(read_only_hint=True) if self.read_only else None)


def declarer(specs: list[ToolSpec]) -> Callable[..., Callable[[Handler], Handler]]:
    """The ``@tool(name, description, route=..., **parameters)`` decorator of a family of tools: it adds
    each tool it declares to ``specs``, in the order declared (the order the tool list shows)."""

    def tool(name: str, description: str, /, *, route: str, required: tuple[str, ...] = (), read_only: bool = False,
             aliases: Mapping[str, str] | None = None, **properties: Mapping[str, Any]) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            specs.append(ToolSpec(name, description, properties, required, read_only, fn, dict(aliases or {}), route))
            return fn

        return register

    return tool


def p(type_: str | list[str], description: str, /, **extra: Any) -> dict[str, Any]:
    """A parameter's schema (``type_`` a JSON type, or a list of them)."""
    return {"type": type_, "description": description, **extra}


_SCHEMA_KEYWORDS = {"type", "description", "enum", "default", "minimum", "maximum", "items"}
_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)
    or isinstance(v, float) and v.is_integer(),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
    "array": lambda v: isinstance(v, list),
}


def _types(schema: Mapping[str, Any]) -> list[str]:
    t = schema["type"]
    return list(t) if isinstance(t, list | tuple) else [t]


def check_tools(specs: list[ToolSpec]) -> tuple[list[types.Tool], dict[str, Handler]]:
    """Build the tool list and the handler table from ``specs``; fail (at start) if they disagree.

    Also checks what the argument checker relies on: known types and keywords only, required
    parameters and alias targets that exist. Raises AssertionError naming the tool.
    """
    tools = [s.to_mcp() for s in specs]
    handlers = {s.name: s.handler for s in specs}
    assert len(handlers) == len(specs), "duplicate tool names"
    assert [t.name for t in tools] == list(handlers), "tool list and handler table differ"
    for s in specs:
        assert s.name.startswith("pinchtab_") and s.description, s.name
        assert callable(handlers[s.name]), f"{s.name} has no handler"
        assert set(s.required) <= set(s.properties), f"{s.name}: required parameter not declared"
        for alias, name in s.aliases.items():
            assert name in s.properties and alias not in s.properties, f"{s.name}: alias {alias!r}"
        for key, schema in s.properties.items():
            kinds = _types(schema)
            assert kinds and all(k in _TYPES for k in kinds) and schema.get("description"), f"{s.name}.{key}"
            assert set(schema) <= _SCHEMA_KEYWORDS, f"{s.name}.{key}: {set(schema) - _SCHEMA_KEYWORDS}"
            assert ("array" in kinds) == ("items" in schema), f"{s.name}.{key}: arrays say their items"
    return tools, handlers


def _unknown(spec: ToolSpec, names: list[str]) -> ToolError:
    """The error for arguments the tool does not take: each named, with the likeliest meant one."""
    known = [*spec.properties, *spec.aliases]
    parts = []
    for name in names:
        near = difflib.get_close_matches(name, known, n=1, cutoff=0.6) or [
            k for k in known if k.lower() == name.lower()]
        parts.append(f"{name!r} (did you mean {near[0]!r}?)" if near else repr(name))
    what = "argument" if len(names) == 1 else "arguments"
    takes = ", ".join(spec.properties) or "no arguments"
    return ToolError(f"{spec.name} does not take the {what} {', '.join(parts)}; it takes {takes}")


def check_args(spec: ToolSpec, args: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments validated against the tool's schema, aliases resolved, defaults filled in.

    A None value counts as absent (some clients send every parameter, unset ones as null).
    Raises :class:`ToolError` saying what is wrong.
    """
    given = {k: v for k, v in dict(args or {}).items() if v is not None}
    unknown = [k for k in given if k not in spec.properties and k not in spec.aliases]
    if unknown:
        raise _unknown(spec, unknown)
    for alias, name in spec.aliases.items():
        if alias not in given:
            continue
        value = given.pop(alias)
        if name in given and given[name] != value:
            raise ToolError(f"{alias!r} and {name!r} name the same thing; give one")
        given[name] = value
    for key in spec.required:
        if given.get(key) in (None, ""):
            raise ToolError(f"{key} is required")
    out: dict[str, Any] = {}
    for key, schema in spec.properties.items():
        if key not in given:
            if "default" in schema:
                out[key] = schema["default"]
            continue
        out[key] = _checked(key, schema, given[key])
    return out


def _checked(key: str, schema: Mapping[str, Any], value: Any) -> Any:
    kinds = _types(schema)
    kind = next((k for k in kinds if _TYPES[k](value)), None)
    if kind is None:
        raise ToolError(f"{key} must be a {' or '.join(kinds)}, not {type(value).__name__}")
    if kind == "integer":
        value = int(value)
    if kind == "array":
        item = schema["items"]["type"]
        if not all(_TYPES[item](v) for v in value):
            raise ToolError(f"{key} must be a list of {item}s")
    if "enum" in schema and value not in schema["enum"]:
        raise ToolError(f"{key} must be one of {', '.join(json.dumps(e) for e in schema['enum'])}")
    if "minimum" in schema and value < schema["minimum"]:
        raise ToolError(f"{key} must be at least {schema['minimum']}")
    if "maximum" in schema and value > schema["maximum"]:
        raise ToolError(f"{key} must be at most {schema['maximum']}")
    return value


# --------------------------------------------------------------------------
# Results


def text(s: str) -> list[Content]:
    return [types.TextContent(type="text", text=s)]


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def error_result(message: str) -> types.CallToolResult:
    """A tool error: the model reads it and can recover; it is never a protocol failure."""
    return types.CallToolResult(content=text(message), is_error=True)


def no_such_route(exc: ClientError) -> bool:
    """Whether the server answered that it has no such route (an older server, or a bridge
    without that feature), rather than that the route refused this request."""
    return (exc.status == 404 and exc.code == "not_found" and exc.message.startswith("no such route")
            or exc.status == 405 and exc.code == "method_not_allowed")
