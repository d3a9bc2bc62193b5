"""Debug sessions over HTTP: create, list, inspect, end; one command with its answer; SSE; the SDK.

``POST /debug/sessions`` hands out a new session id (128 random bits) with the URLs to use it: an
app joins with the id alone (a page cannot send a bearer token), an agent with the token too.
``GET /events`` streams a session's messages as Server-Sent Events with ids, resuming from
``Last-Event-ID`` while the messages are still held.
"""
from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from importlib import resources
from typing import Any
from urllib.parse import quote

from flask import Flask, Response, current_app, request
from marshmallow import EXCLUDE, Schema, fields, validate

from ..sockets import limiter
from ..web.errors import BadRequest, Conflict, NotFound, Unavailable
from ..web.openapi import TEXT, Blueprint
from ..web.parser import read_json
from . import protocol
from .hub import Hub, Session, TooManySessions, dumps

bp = Blueprint("debug", __name__)

HEARTBEAT_S = 15.0
RETRY_MS = 2000
COMMAND_WAIT_MAX_S = 120


def hub() -> Hub:
    return current_app.extensions["pinchtab.debug"]


def session_or_404(session_id: str) -> Session:
    session = hub().get(session_id)
    if session is None:
        raise NotFound("unknown debug session", code="session_not_found")
    return session


def session_urls(session_id: str) -> dict[str, str]:
    """Where to join: behind a proxy, the scheme and host the caller used (X-Forwarded-Proto)."""
    secure = request.headers.get("X-Forwarded-Proto", request.scheme) == "https"
    host = request.host
    sid = quote(session_id)
    ws = "wss" if secure else "ws"
    http = "https" if secure else "http"
    return {"appUrl": f"{ws}://{host}/debug?role=app&sessionId={sid}",
            "agentUrl": f"{ws}://{host}/debug?role=agent&sessionId={sid}",
            "sdkUrl": f"{http}://{host}/debug/sdk.js?sessionId={sid}",
            "eventsUrl": f"{http}://{host}/events?sessionId={sid}"}


class SessionCreated(Schema):
    sessionId = fields.String(required=True,
                              metadata={"description": "an unguessable id: whoever holds it may join as an app"})
    appUrl = fields.String(required=True)
    agentUrl = fields.String(required=True)
    sdkUrl = fields.String(required=True)
    eventsUrl = fields.String()


class SessionInfo(Schema):
    sessionId = fields.String(required=True)
    createdAt = fields.String()
    tabId = fields.String()
    apps = fields.List(fields.Dict(),
                       metadata={"description": "appId, appName, url, origin, kind (sdk or tab), connectedSince"})
    agents = fields.List(fields.Dict(), metadata={"description": "agentId, connectedSince, queued, dropped"})
    messages = fields.Integer()
    dropped = fields.Integer()
    invalid = fields.Integer()
    retained = fields.Integer(metadata={"description": "messages held for /events (and Last-Event-ID resumes)"})
    retainedBytes = fields.Integer(metadata={"description": "their size; at most maxBytes"})
    maxBytes = fields.Integer(metadata={"description": "debug.maxSessionBytes: past it the oldest go"})
    tooLarge = fields.Integer(metadata={"description": "messages larger than maxBytes: passed on live, "
                                                       "a dropped notice kept in their place"})


class SessionList(Schema):
    sessions = fields.List(fields.Nested(SessionInfo))
    connections = fields.Integer(metadata={"description": "open WebSockets and event streams"})
    maxConnections = fields.Integer()
    appConnections = fields.Integer(metadata={"description": "of connections, the app WebSockets"})
    maxAppConnections = fields.Integer(metadata={"description": "how many of maxConnections apps may hold; the "
                                                                "rest are kept for agents and streams"})


class CommandSchema(Schema):
    """A command of the protocol (its ``type`` and fields); the envelope is filled in."""

    class Meta:
        unknown = EXCLUDE

    type = fields.String(required=True, validate=validate.OneOf(sorted(protocol.COMMAND_TYPES)))
    requestId = fields.String()
    timeout = fields.Float(load_default=30.0, validate=validate.Range(min=0.1, max=COMMAND_WAIT_MAX_S),
                           metadata={"description": "seconds to wait for the app's answer"})


class SessionDeleted(Schema):
    deleted = fields.Boolean(required=True)
    sessionId = fields.String(required=True)


class EventsQuery(Schema):
    sessionId = fields.String()
    tabId = fields.String()
    types = fields.String(metadata={"description": "comma-separated message types to keep"})


@bp.post("/debug/sessions")
@bp.response(201, SessionCreated)
def create_session() -> Any:
    """Start a debug session: apps join with its id, agents with the id and the bearer token."""
    try:
        session = hub().create()
    except TooManySessions as e:
        raise Conflict(str(e), code="too_many_sessions") from None
    return {"sessionId": session.id, **session_urls(session.id)}


@bp.get("/debug/sessions")
@bp.response(200, SessionList)
def list_sessions() -> Any:
    """Every session: its apps (name, url, origin, connected since), agents, message and drop counts."""
    return {"sessions": [s.describe() for s in hub().sessions()], **limiter.current().describe()}


@bp.get("/debug/sessions/<session_id>")
@bp.response(200, SessionInfo)
def get_session(session_id: str) -> Any:
    """One session."""
    return session_or_404(session_id).describe()


@bp.delete("/debug/sessions/<session_id>")
@bp.response(200, SessionDeleted)
def delete_session(session_id: str) -> Any:
    """End a session: its apps and agents are disconnected (a tab it debugs is detached)."""
    session_or_404(session_id)
    hub().delete(session_id)   # a tab it debugs is detached as its app peer closes
    return {"deleted": True, "sessionId": session_id}


@bp.post("/debug/sessions/<session_id>/commands")
@bp.arguments(CommandSchema, unknown=EXCLUDE)
@bp.response(200, protocol.Message, description="the app's command_result (or its data reply: ui_tree, "
                                               "dom_snapshot, state_update, screenshot)")
def send_command(req: dict[str, Any], session_id: str) -> Any:
    """Send one command to the session's apps and wait for its answer (for callers without a WebSocket)."""
    session = session_or_404(session_id)
    # The command's own fields (target, text, ...), read as the arguments were: JSON whatever the
    # Content-Type (``curl -d`` sends a form one), so none is lost when no JSON type is sent.
    body = dict(read_json(request))
    body.pop("timeout", None)
    envelope_keys = ("protocolVersion", "sessionId", "timestamp", "type")
    msg = protocol.envelope(session.id, req["type"], **{k: v for k, v in body.items() if k not in envelope_keys})
    msg.setdefault("requestId", f"rest-{uuid.uuid4().hex[:12]}")
    try:
        msg = protocol.parse_agent_frame(dumps(msg))
    except protocol.FrameError as e:
        raise BadRequest(e.reason, code="invalid_command") from None
    done = threading.Event()
    answer: list[dict[str, Any]] = []

    def reply(text: str, parsed: dict[str, Any] | None) -> None:
        answer.append(parsed if parsed is not None else protocol.parse_app_frame(text))
        done.set()

    hub().command(session, msg, None, reply)
    if not done.wait(req["timeout"]):
        raise Unavailable(f"the app did not answer within {req['timeout']} s", code="command_timeout",
                          status=504, retryable=False)
    result = answer[0]
    if result.pop("noApp", False):
        raise Conflict(result["error"]["message"], code="no_app")
    # The message as the app sent it: dumped through the envelope's schema, its own fields would go.
    return Response(dumps(result), mimetype="application/json")


@bp.get("/events")
@bp.arguments(EventsQuery, location="query")
@bp.response(200, TEXT, content_type="text/event-stream",
             description="id: <n> and data: <one protocol message> per event; a comment line as heartbeat")
def events(req: dict[str, Any]) -> Response:
    """A session's messages (or a debugged tab's) as Server-Sent Events; resumes from Last-Event-ID."""
    h = hub()
    if req.get("sessionId"):
        session = session_or_404(req["sessionId"])
    elif req.get("tabId"):
        session = h.for_tab(req["tabId"])
        if session is None:
            raise NotFound("this tab is not being debugged: POST /tabs/{id}/debug first", code="session_not_found")
    else:
        raise BadRequest("give sessionId or tabId", code="missing_field", details={"field": "sessionId"})
    raw = request.headers.get("Last-Event-ID") or request.args.get("lastEventId") or "0"
    if not raw.isdigit():
        raise BadRequest("Last-Event-ID must be an event id (a number)", details={"field": "Last-Event-ID"})
    types = frozenset(t for t in (req.get("types") or "").split(",") if t) or None
    last = int(raw) if raw != "0" else session.last_event_id
    hold = limiter.current().acquire()

    def stream() -> Iterator[str]:
        yield f"retry: {RETRY_MS}\n\n"
        for event_id, text in h.stream(session, last, types, HEARTBEAT_S):
            if event_id is None:
                yield f"data: {text}\n\n" if text else ": heartbeat\n\n"
            else:
                yield f"id: {event_id}\ndata: {text}\n\n"

    resp = Response(stream(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    resp.call_on_close(hold.release)   # runs whether or not the stream was ever read
    return resp


SDK_JS = "sdk.js"


@bp.get("/debug/sdk.js")
@bp.response(200, TEXT, content_type="application/javascript", description="the page SDK (no token needed)")
def sdk() -> Response:
    """Our page SDK: ``<script src=".../debug/sdk.js?sessionId=S">`` joins session S by itself."""
    text = resources.files("app.debug.static").joinpath(SDK_JS).read_text(encoding="utf-8")
    resp = Response(text, mimetype="application/javascript")
    resp.headers["Cache-Control"] = "no-cache"
    return resp


def init_routes(app: Flask, api: Any) -> None:
    api.register_blueprint(bp)
