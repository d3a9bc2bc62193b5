"""The debug bridge protocol, version 1: every message as a marshmallow schema.

The wire is the public debug bridge's (``debug-bridge-types`` 0.2.1): an envelope
``{protocolVersion, sessionId, timestamp, type}`` and the type's fields. Unknown fields are kept
(a newer SDK may send more, and agents should see it), so parsing returns the message as it came.

Frames from apps are many (a page may log thousands of lines a second), so they are checked
cheaply: a JSON object, a known type, the fields that type requires (read once from the schemas).
Commands from agents are few and each is checked against its whole schema before it reaches an
app; a bad one is answered with ``INVALID_COMMAND`` when it says which request it was.
"""
from __future__ import annotations

import time
from typing import Any

from marshmallow import INCLUDE, Schema, ValidationError, fields, validate, validates_schema

from ..web import untrusted_json

PROTOCOL_VERSION = 1
ERROR_CODES = ("TARGET_NOT_FOUND", "TARGET_NOT_VISIBLE", "TARGET_DISABLED", "TIMEOUT", "EVAL_DISABLED",
               "EVAL_ERROR", "NAVIGATION_FAILED", "INVALID_COMMAND", "UNKNOWN_ERROR")
CAPABILITIES = ("dom_snapshot", "dom_mutations", "ui_tree", "console", "errors", "eval", "custom_state",
                "network", "navigation")
CONNECTION_EVENTS = ("app_connected", "agent_connected", "app_disconnected", "agent_disconnected")


class FrameError(ValueError):
    """A frame that cannot be routed: why, and which request it was when that much could be read."""

    def __init__(self, reason: str, request_id: str | None = None, type: str | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.request_id = request_id
        self.type = type


class Message(Schema):
    """The envelope every message carries."""

    class Meta:
        unknown = INCLUDE

    protocolVersion = fields.Integer(validate=validate.Equal(PROTOCOL_VERSION))
    sessionId = fields.String()
    timestamp = fields.Float()
    type = fields.String(required=True)


class Open(Schema):
    """A nested object that may carry more than the protocol names."""

    class Meta:
        unknown = INCLUDE


# --- app -> agent

class Viewport(Open):
    width = fields.Float(required=True)
    height = fields.Float(required=True)


class Hello(Message):
    appName = fields.String(allow_none=True)
    appVersion = fields.String(allow_none=True)
    url = fields.String(required=True)
    userAgent = fields.String()
    viewport = fields.Nested(Viewport)


class Capabilities(Message):
    capabilities = fields.List(fields.String(validate=validate.OneOf(CAPABILITIES)), required=True)


class DomSnapshot(Message):
    html = fields.String(required=True)
    requestId = fields.String()


class MutationNode(Open):
    type = fields.String(required=True)
    tagName = fields.String()
    html = fields.String()


class Mutation(Open):
    mutationType = fields.String(required=True, validate=validate.OneOf(("childList", "attributes", "characterData")))
    targetSelector = fields.String(required=True)
    attributeName = fields.String(allow_none=True)
    addedNodes = fields.List(fields.Nested(MutationNode))
    removedNodes = fields.List(fields.Nested(MutationNode))


class DomMutations(Message):
    batchId = fields.Raw(required=True)
    mutations = fields.List(fields.Nested(Mutation), required=True)


class UiTreeMeta(Open):
    tagName = fields.String(required=True)
    type = fields.String()
    name = fields.String()
    href = fields.Raw(metadata={"description": "a string; the npm SDK sends an object for an SVG link"})
    placeholder = fields.String()


class UiTreeItem(Open):
    stableId = fields.String(required=True)
    selector = fields.String(required=True)
    role = fields.String(required=True)
    text = fields.String()
    label = fields.String()
    disabled = fields.Boolean(required=True)
    visible = fields.Boolean(required=True)
    checked = fields.Boolean()
    value = fields.Raw(metadata={"description": "a string; a number for an <li value> in the npm SDK"})
    meta = fields.Nested(UiTreeMeta, required=True)


class UiTree(Message):
    requestId = fields.String()
    items = fields.List(fields.Nested(UiTreeItem), required=True)


class Console(Message):
    level = fields.String(required=True, validate=validate.OneOf(("log", "info", "warn", "error", "debug")))
    args = fields.List(fields.String(), required=True)


class Error(Message):
    errorType = fields.String(required=True, validate=validate.OneOf(("runtime", "unhandledrejection")))
    message = fields.String(required=True)
    stack = fields.String(allow_none=True)
    filename = fields.String(allow_none=True)
    lineno = fields.Integer(allow_none=True)
    colno = fields.Integer(allow_none=True)


class StateUpdate(Message):
    scope = fields.String(required=True)
    state = fields.Raw(required=True, allow_none=True)
    requestId = fields.String()


class Screenshot(Message):
    requestId = fields.String()
    data = fields.String(required=True, metadata={"description": "base64 PNG (the npm SDK: a data: URL; "
                                                                  "empty when it failed)"})
    width = fields.Float(required=True)
    height = fields.Float(required=True)
    error = fields.Nested(Open, metadata={"description": "the npm SDK's failure: {code: SCREENSHOT_FAILED, message}"})


class NetworkRequest(Message):
    requestId = fields.String(required=True)
    method = fields.String(required=True)
    url = fields.String(required=True)
    headers = fields.Dict(keys=fields.String())
    body = fields.String(allow_none=True)
    initiator = fields.String()


class NetworkResponse(Message):
    requestId = fields.String(required=True)
    status = fields.Integer(required=True)
    statusText = fields.String()
    headers = fields.Dict(keys=fields.String())
    body = fields.String(allow_none=True)
    duration = fields.Float()
    ok = fields.Boolean(required=True)


class Navigation(Message):
    url = fields.String(required=True)
    previousUrl = fields.String(allow_none=True)
    trigger = fields.String(required=True, validate=validate.OneOf(
        ("initial", "pushstate", "replacestate", "popstate", "hashchange")))


class ErrorDetail(Open):
    code = fields.String(required=True, validate=validate.OneOf(ERROR_CODES))
    message = fields.String(required=True)


class CommandResult(Message):
    requestId = fields.String(required=True)
    requestType = fields.String()
    success = fields.Boolean(required=True)
    error = fields.Nested(ErrorDetail, allow_none=True)
    result = fields.Raw(allow_none=True)
    duration = fields.Float()


APP_MESSAGES: dict[str, type[Message]] = {
    "hello": Hello, "capabilities": Capabilities, "dom_snapshot": DomSnapshot, "dom_mutations": DomMutations,
    "ui_tree": UiTree, "console": Console, "error": Error, "state_update": StateUpdate,
    "screenshot": Screenshot, "network_request": NetworkRequest, "network_response": NetworkResponse,
    "navigation": Navigation, "command_result": CommandResult,
}
TELEMETRY_TYPES = frozenset(APP_MESSAGES) - {"command_result"}


# --- agent -> app (commands)

class ElementTarget(Open):
    stableId = fields.String()
    selector = fields.String()
    text = fields.String()
    role = fields.String()

    @validates_schema
    def names_something(self, data: dict[str, Any], **_: Any) -> None:
        if not any(data.get(k) for k in ("stableId", "selector", "text", "role")):
            raise ValidationError("a target names a stableId, selector, text or role")


class Command(Message):
    requestId = fields.String(required=True)


class Targeted(Command):
    target = fields.Nested(ElementTarget, required=True)


class TypeOptions(Open):
    clear = fields.Boolean()
    delay = fields.Float(validate=validate.Range(min=0, max=1000))
    pressEnter = fields.Boolean()


class TypeText(Targeted):
    text = fields.String(required=True)
    options = fields.Nested(TypeOptions)


class Select(Targeted):
    value = fields.String()
    label = fields.String()
    index = fields.Integer(validate=validate.Range(min=0))


class Scroll(Command):
    target = fields.Nested(ElementTarget)
    x = fields.Float()
    y = fields.Float()


class Navigate(Command):
    url = fields.String(required=True, validate=validate.Length(min=1))


class Evaluate(Command):
    code = fields.String(required=True)


class RequestState(Command):
    scope = fields.String()


class RequestScreenshot(Command):
    selector = fields.String()
    fullPage = fields.Boolean()


COMMANDS: dict[str, type[Command]] = {
    "click": Targeted, "hover": Targeted, "focus": Targeted, "type": TypeText, "select": Select,
    "scroll": Scroll, "navigate": Navigate, "evaluate": Evaluate, "request_ui_tree": Command,
    "request_dom_snapshot": Command, "request_state": RequestState, "request_screenshot": RequestScreenshot,
}
COMMAND_TYPES = frozenset(COMMANDS)


# --- server -> everyone

class ConnectionEvent(Message):
    origin = fields.String(required=True, validate=validate.Equal("server"))
    event = fields.String(required=True, validate=validate.OneOf(CONNECTION_EVENTS))
    appId = fields.String()
    agentId = fields.String()
    connectedApps = fields.List(fields.String())
    connectedAgents = fields.Integer()


class Dropped(Message):
    """Ours: how many messages a peer missed because it fell behind (the oldest went first), or, in
    an event stream, one message too large for the session's record (``messageType``, ``bytes``)."""

    origin = fields.String(required=True)
    count = fields.Integer(required=True)
    total = fields.Integer()
    messageType = fields.String(metadata={"description": "the type of the one message not kept"})
    bytes = fields.Integer(metadata={"description": "its size, past debug.maxSessionBytes"})
    reason = fields.String()


SERVER_MESSAGES: dict[str, type[Message]] = {"connection_event": ConnectionEvent, "dropped": Dropped}
SCHEMAS: dict[str, type[Message]] = {**APP_MESSAGES, **COMMANDS, **SERVER_MESSAGES}

# The fast check of app frames: the top-level fields each type requires, read from its schema.
_REQUIRED = {kind: tuple(name for name, f in schema._declared_fields.items() if f.required and name != "type")
             for kind, schema in APP_MESSAGES.items()}
_SCHEMA_INSTANCES: dict[str, Schema] = {}


def schema_for(kind: str) -> Schema:
    schema = _SCHEMA_INSTANCES.get(kind)
    if schema is None:
        schema = _SCHEMA_INSTANCES[kind] = SCHEMAS[kind]()
    return schema


def validate_message(msg: dict[str, Any]) -> dict[str, Any]:
    """Every error of one message against its type's whole schema ({} when it conforms)."""
    kind = msg.get("type")
    if kind not in SCHEMAS:
        return {"type": [f"unknown message type {kind!r}"]}
    return schema_for(kind).validate(msg)


def _load_object(text: str) -> dict[str, Any]:
    try:
        msg = untrusted_json.loads(text)
    except ValueError:
        raise FrameError("not JSON") from None
    if not isinstance(msg, dict):
        raise FrameError("not a JSON object")
    return msg


def parse_app_frame(text: str) -> dict[str, Any]:
    """An app's frame, checked cheaply (type and required fields); FrameError says why not."""
    msg = _load_object(text)
    kind = msg.get("type")
    required = _REQUIRED.get(kind) if isinstance(kind, str) else None
    if required is None:
        raise FrameError(f"unknown message type {kind!r}" if kind is not None else "no type")
    missing = [name for name in required if name not in msg]
    if missing:
        raise FrameError(f"{kind} without {', '.join(missing)}")
    return msg


def parse_agent_frame(text: str) -> dict[str, Any]:
    """An agent's command, checked against its whole schema; FrameError names the problem."""
    msg = _load_object(text)
    request_id = msg.get("requestId") if isinstance(msg.get("requestId"), str) else None
    kind = msg.get("type")
    if not isinstance(kind, str):
        raise FrameError("no type", request_id)
    if kind not in COMMANDS:
        raise FrameError(f"unknown command type {kind!r}; one of {', '.join(sorted(COMMANDS))}", request_id, kind)
    errors = schema_for(kind).validate(msg)
    if errors:
        raise FrameError(f"invalid {kind}: {_describe(errors)}", request_id, kind)
    return msg


def _describe(errors: dict[str, Any], prefix: str = "") -> str:
    parts = []
    for name, problem in errors.items():
        path = f"{prefix}{name}"
        if isinstance(problem, dict):
            parts.append(_describe(problem, path + "."))
        else:
            parts.append(f"{path}: {' '.join(map(str, problem))}")
    return "; ".join(parts)


def envelope(session_id: str, type: str, **fields: Any) -> dict[str, Any]:
    return {"protocolVersion": PROTOCOL_VERSION, "sessionId": session_id,
            "timestamp": int(time.time() * 1000), "type": type, **fields}


def command_result(session_id: str, request_id: str, request_type: str, *, success: bool, duration_ms: float,
                   result: Any = None, error_code: str | None = None, message: str | None = None) -> dict[str, Any]:
    msg = envelope(session_id, "command_result", requestId=request_id, requestType=request_type,
                   success=success, duration=round(duration_ms, 3))
    if result is not None:
        msg["result"] = result
    if error_code:
        msg["error"] = {"code": error_code, "message": message or error_code}
    return msg


def connection_event(session_id: str, event: str, **fields: Any) -> dict[str, Any]:
    return envelope(session_id, "connection_event", origin="server", event=event, **fields)
