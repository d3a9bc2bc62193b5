"""CDP's RemoteObjects as the strings the page SDK would send: strings raw, the rest JSON-ish.

The console path must cost no round trip to the page, so everything here reads what the event
already holds (``value``, ``unserializableValue``, ``description`` and the object ``preview``
Chrome attaches to console arguments). Pure functions, no I/O.
"""
from __future__ import annotations

import json
from typing import Any

MAX_ARGS = 10          # the SDK's maxConsoleArgs default
MAX_ARG_CHARS = 1000   # the SDK's maxConsoleArgLength default


def console_args(args: list[dict[str, Any]], max_args: int = MAX_ARGS, max_chars: int = MAX_ARG_CHARS) -> list[str]:
    """The first ``max_args`` console arguments as strings, each cut at ``max_chars`` (with "...")."""
    out = []
    for arg in args[:max_args]:
        text = describe(arg)
        out.append(text[:max_chars] + "..." if len(text) > max_chars else text)
    return out


def describe(obj: dict[str, Any]) -> str:
    """One RemoteObject as a readable string."""
    kind = obj.get("type")
    if kind == "string":
        return str(obj.get("value", ""))
    if "unserializableValue" in obj:  # NaN, Infinity, -0, 12n
        return str(obj["unserializableValue"])
    if kind == "undefined":
        return "undefined"
    if kind in ("number", "boolean"):
        return _scalar(obj.get("value"))
    if kind == "object":
        subtype = obj.get("subtype")
        if subtype == "null":
            return "null"
        if subtype == "error":  # the message and stack, as a person reads an error
            return str(obj.get("description", "Error"))
        preview = obj.get("preview")
        if preview and subtype in (None, "array", "typedarray"):
            return _preview(preview)
        if "value" in obj:  # returned by value
            return json.dumps(obj["value"], ensure_ascii=False, separators=(",", ":"))
    return str(obj.get("description") or obj.get("value") or kind or "")


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _preview(p: dict[str, Any]) -> str:
    """An ObjectPreview as JSON-ish text: ``{"a":1,"b":[1,2]}``, ``[1,"x"]``; "…" where Chrome cut it."""
    array = p.get("subtype") in ("array", "typedarray")
    parts = []
    for prop in p.get("properties", []):
        value = _property(prop)
        parts.append(value if array else f"{json.dumps(prop.get('name', ''), ensure_ascii=False)}:{value}")
    if p.get("overflow"):
        parts.append("…")
    body = ",".join(parts)
    return f"[{body}]" if array else f"{{{body}}}"


def _property(prop: dict[str, Any]) -> str:
    kind, value = prop.get("type"), prop.get("value", "")
    if "valuePreview" in prop and prop.get("subtype") in (None, "array", "typedarray"):
        return _preview(prop["valuePreview"])
    if kind == "string":
        return json.dumps(value, ensure_ascii=False)
    if kind == "object" and prop.get("subtype") == "null":
        return "null"
    return str(value)
