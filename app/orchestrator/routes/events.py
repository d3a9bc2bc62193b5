"""GET /api/events: instance lifecycle events as Server-Sent Events.

Each event is ``id: <n>``, ``event: instance.started`` (``stopped``, ``error``, ``attached``) and
``data: {"type", "instance"}``. ``Last-Event-ID`` resumes from the manager's ring; without it the
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

from ...errors import BadRequest
from ...openapi import Blueprint
from ..errors import ManagerUnavailable
from ..state import server_state

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
    data = json.dumps({"type": event["type"], "instance": event["instance"]}, ensure_ascii=False, separators=(",", ":"))
    return f"id: {event['id']}\nevent: {event['type']}\ndata: {data}\n\n"


@bp.get("/api/events")
@bp.response(200, content_type="text/event-stream",
             description="id, event (instance.started, stopped, error, attached) and data {type, instance}")
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
