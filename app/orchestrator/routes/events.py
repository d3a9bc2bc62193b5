"""GET /api/events: instance lifecycle events as Server-Sent Events (and each instance's output,
``GET /instances/{id}/logs/stream``).

Each event is ``id: <n>``, ``event: instance.started`` (``stopped``, ``error``, ``attached``,
``lost``) and ``data: {"type", "instance"}``; a provider's (``provider.down``, ``provider.up``) carries
``provider`` instead. ``Last-Event-ID`` resumes from the manager's ring; without it the
stream starts with what happens next. A comment line goes out every 15 s when nothing happens:
it keeps proxies from closing the stream, and a write to a caller that went away ends it. A
shutdown ends every stream within a second (``pinchtab.on_shutdown``): the worker would otherwise
wait its graceful timeout for them.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

from flask import Flask, Response, current_app, request
from flask.blueprints import BlueprintSetupState

from ...sockets.limiter import Limiter
from ...web.errors import APIError, BadRequest
from ...web.openapi import Blueprint
from ..errors import ManagerUnavailable
from ..state import server_state
from .instances_contract import LogStreamQuerySchema

bp = Blueprint("events", __name__)

HEARTBEAT_S = 15.0
MAX_STREAM_S = 30 * 60.0  # then the stream ends and EventSource resumes it with Last-Event-ID
RETRY_MS = 2000
# The manager's long-poll is cut in slices this long, so a stream sees a shutdown within one.
SHUTDOWN_CHECK_S = 0.5
_STOPPING = "pinchtab.events_stopping"


@bp.record_once
def _end_streams_on_shutdown(setup: BlueprintSetupState) -> None:
    app: Flask = setup.app
    stopping = app.extensions[_STOPPING] = threading.Event()
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(stopping.set)


def sse(event: dict[str, Any]) -> str:
    """One event in the text/event-stream format."""
    about = "provider" if "provider" in event else "instance"
    data = json.dumps({"type": event["type"], about: event[about]}, ensure_ascii=False, separators=(",", ":"))
    return f"id: {event['id']}\nevent: {event['type']}\ndata: {data}\n\n"


@bp.get("/api/events")
@bp.response(200, content_type="text/event-stream",
             description="id, event (instance.started, stopped, error, attached, lost; provider.down, up) "
                         "and data {type, instance} (provider events: {type, provider})")
def events() -> Response:
    """Instance lifecycle events (Server-Sent Events; resumes from Last-Event-ID)."""
    raw = request.headers.get("Last-Event-ID") or request.args.get("lastEventId") or ""
    if raw and not raw.isdigit():
        raise BadRequest("Last-Event-ID must be an event id (a number)", details={"field": "Last-Event-ID"})
    client = server_state().client
    stopping: threading.Event = current_app.extensions[_STOPPING]
    # Before the 200: a dead manager is an error answer, not an empty stream.
    first = client.events_since(int(raw) if raw else None)

    def stream() -> Iterator[str]:
        yield f"retry: {RETRY_MS}\n\n"
        for ev in first["events"]:
            yield sse(ev)
        cursor = first["last"]
        deadline = time.monotonic() + MAX_STREAM_S
        heartbeat = time.monotonic() + HEARTBEAT_S
        while time.monotonic() < deadline and not stopping.is_set():
            try:
                res = client.events_since(cursor, SHUTDOWN_CHECK_S)
            except ManagerUnavailable as exc:
                yield f"event: error\ndata: {json.dumps({'error': exc.message, 'code': exc.code})}\n\n"
                return
            for ev in res["events"]:
                yield sse(ev)
            if res["events"]:
                heartbeat = time.monotonic() + HEARTBEAT_S
            elif time.monotonic() >= heartbeat:
                yield ": heartbeat\n\n"
                heartbeat = time.monotonic() + HEARTBEAT_S
            cursor = res["last"]

    return Response(stream(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})


LOG_POLL_S = 0.5
MAX_LOG_STREAMS = 8  # each holds a request thread: the rest stay free for ordinary calls
_log_streams = Limiter(MAX_LOG_STREAMS, what=f"log streams (at most {MAX_LOG_STREAMS} at once)",
                       code="too_many_streams")


@bp.get("/instances/<instance_id>/logs/stream")
@bp.arguments(LogStreamQuerySchema, location="query")
@bp.response(200, content_type="text/event-stream",
             description="event: log, data: {line}, one per line the instance prints; ends with event: end")
def instance_log_stream(req: dict[str, Any], instance_id: str) -> Response:
    """The instance's output as it is printed (Server-Sent Events), after its last ``lines`` lines.

    Ends when the instance is gone, after 30 minutes, or when the server shuts down.
    """
    client = server_state().client
    stopping: threading.Event = current_app.extensions[_STOPPING]
    last = client.log_lines(instance_id, None)["last"]  # a 404 for an unknown instance, before the 200
    hold = _log_streams.acquire()
    start = max(0, last - req["lines"])

    def stream() -> Iterator[str]:
        yield f"retry: {RETRY_MS}\n\n"
        cursor = start
        deadline = time.monotonic() + MAX_STREAM_S
        heartbeat = time.monotonic() + HEARTBEAT_S
        while time.monotonic() < deadline and not stopping.is_set():
            try:
                res = client.log_lines(instance_id, cursor)
            except (ManagerUnavailable, APIError) as exc:
                yield f"event: end\ndata: {json.dumps({'reason': getattr(exc, 'message', str(exc))})}\n\n"
                return
            for n, line in enumerate(res["lines"], start=res["last"] - len(res["lines"]) + 1):
                yield f"id: {n}\nevent: log\ndata: {json.dumps({'line': line}, ensure_ascii=False)}\n\n"
            if res["lines"]:
                heartbeat = time.monotonic() + HEARTBEAT_S
            elif time.monotonic() >= heartbeat:
                yield ": heartbeat\n\n"
                heartbeat = time.monotonic() + HEARTBEAT_S
            cursor = res["last"]
            stopping.wait(LOG_POLL_S)
        yield f"event: end\ndata: {json.dumps({'reason': 'server stopping' if stopping.is_set() else 'time'})}\n\n"

    resp = Response(stream(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    # On close, not in the generator: a stream closed before its first chunk never runs a finally.
    resp.call_on_close(hold.release)
    return resp
