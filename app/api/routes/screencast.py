"""Live frames of a tab: the WebSocket ``GET /screencast?tabId=`` and ``GET /screencast/tabs``
(off unless security.allowScreencast).

The WebSocket follows the debug sockets' conventions (``app/debug/sockets.py``): checks happen
before the upgrade, as HTTP answers (403 when off, 400 for a bad query, 404 for an unknown tab,
503 with Retry-After past the cap on long-lived connections, which it shares with the debug
sockets and event streams: they all hold a request thread); the connection's own thread is the
only one that writes frames; a shutdown closes every cast within a second.

Messages, JSON text: first ``{"type": "start", "tabId", "format", "maxWidth", "maxHeight", "fps"}``,
then ``{"type": "frame", "tabId", "seq", "format", "data": <base64 image>, "metadata": {...},
"dropped": <frames this viewer lost so far>}`` per frame (``metadata`` is CDP's: offsetTop,
pageScaleFactor, deviceWidth, deviceHeight, scrollOffsetX, scrollOffsetY, timestamp). Chrome
draws a frame only when the page changes, so on a still page the last frame is sent again every
REPEAT_S (``"repeat": true``, the same ``seq``): a viewer that joins or waits sees the cast is alive,
as the original's polled frames show it. The server closes with 1001 when the tab closes or the
server stops. What the client sends is ignored.
"""
from __future__ import annotations

import json
import threading
import time
from typing import Any

from flask import Blueprint as FlaskBlueprint
from flask import Flask, Response, current_app, g, jsonify, request
from flask.blueprints import BlueprintSetupState
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from cdp.screencast import CastFrame, Viewer, cast_of
from cdp.tab import Tab

from ...debug.sockets import CLOSE_GRACE_S, ServedSocket
from ...web.errors import Unavailable, disabled
from ...web.openapi import Blueprint, ErrorSchema
from ..browser_state import HIDDEN_PREFIXES
from ..responses import ScreencastTab
from ..schemas import ScreencastQuerySchema, TabQuerySchema
from .common import before_reading, caller, state, tab

bp = Blueprint("screencast", __name__)
socket_bp = FlaskBlueprint("screencast_socket", __name__)
sock = Sock()

IDLE_WAKE_S = 5.0      # the connection thread looks at its state at least this often
REPEAT_S = 1.0         # a still page's last frame goes out again this often (never above the viewer's fps)
SEND_TIMEOUT_S = 15.0  # a viewer that takes no frame for this long is dropped
RETRY_AFTER_S = 5
_CASTS = "pinchtab.screencasts"


def enabled() -> None:
    """403 ``screencast_disabled`` unless security.allowScreencast (recording shares the gate)."""
    if not state().config.security.allow_screencast:
        raise disabled("screencast", "security.allowScreencast")


class Casts:
    """The open screencast connections of one app, so that a shutdown can end them all."""

    def __init__(self) -> None:
        self._open: set[Connection] = set()
        self._lock = threading.Lock()
        self.closing = False

    def add(self, conn: Connection) -> None:
        with self._lock:
            self._open.add(conn)
        if self.closing:
            conn.close(1001, "server shutting down")

    def discard(self, conn: Connection) -> None:
        with self._lock:
            self._open.discard(conn)

    def close_all(self) -> None:
        self.closing = True
        with self._lock:
            conns = list(self._open)
        for conn in conns:
            conn.close(1001, "server shutting down")


@socket_bp.record_once
def _setup(setup: BlueprintSetupState) -> None:
    app: Flask = setup.app
    casts = app.extensions[_CASTS] = Casts()
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(casts.close_all)


def _slots() -> Any:
    """The cap on connections that hold a request thread: the debug hub keeps the one count."""
    return current_app.extensions["pinchtab.debug"]


@socket_bp.before_request
def admit() -> None:
    enabled()
    req = ScreencastQuerySchema().load(request.args.to_dict())  # a ValidationError answers 400 naming the field
    target = tab(req.get("tabId"))
    if current_app.extensions[_CASTS].closing or not _slots().acquire_slot():
        raise Unavailable("too many long-lived connections; try again later", code="too_many_connections",
                          headers={"Retry-After": str(RETRY_AFTER_S)})
    g.screencast_slot = True
    g.screencast = (req, target)


@socket_bp.teardown_request
def release(_exc: BaseException | None) -> None:
    if g.pop("screencast_slot", False):
        _slots().release_slot()


@sock.route("/screencast", bp=socket_bp)
def screencast_socket(ws: Any) -> None:
    req, target = g.screencast
    Connection(ws, target, req, current_app.extensions[_CASTS], state().config.timeouts.action_sec).run()


class Connection(ServedSocket):
    """One viewer's WebSocket: frames from the tab's cast out to the socket."""

    def __init__(self, ws: Any, target: Tab, req: dict[str, Any], casts: Casts, timeout_s: float) -> None:
        super().__init__(ws)
        self.tab = target
        self.casts = casts
        self.timeout_s = timeout_s
        self.viewer = Viewer(ws.event.set, fps=req["fps"])
        self.params = {"format": req["format"], "quality": req["quality"], "maxWidth": req["maxWidth"],
                       "maxHeight": req["maxHeight"], "everyNthFrame": req["everyNthFrame"]}
        self.fps = req["fps"]

    def run(self) -> None:
        ws, cast = self.ws, cast_of(self.tab)
        # A viewer that stops reading must not hold this thread in a send forever (simple-websocket's
        # reader thread only reads when select says so, so the timeout is ours alone).
        ws.sock.settimeout(SEND_TIMEOUT_S)
        self.casts.add(self)
        try:
            cast.join(self.viewer, self.params, self.timeout_s)
        except Exception as exc:  # the tab closed or refused: say why, as a close reason
            self.casts.discard(self)
            ws.close(1011, f"screencast could not start: {type(exc).__name__}"[:120])
            return
        try:
            ws.send(json.dumps({"type": "start", "tabId": self.tab.id, "format": cast.params.get("format"),
                                "maxWidth": cast.params.get("maxWidth"), "maxHeight": cast.params.get("maxHeight"),
                                "fps": self.fps}))
            last: CastFrame | None = None
            sent_at = time.monotonic()
            repeat_s = max(REPEAT_S, 1.0 / self.fps)
            while ws.connected and self.closing is None:
                due = IDLE_WAKE_S if last is None else sent_at + repeat_s - time.monotonic()
                ws.event.wait(min(IDLE_WAKE_S, max(0.0, due)))
                ws.event.clear()
                while ws.receive(timeout=0) is not None:
                    pass  # nothing to hear from a viewer; reading keeps its pings answered
                fresh = self.viewer.take()
                for frame in fresh:
                    self._send(frame)
                    last, sent_at = frame, time.monotonic()
                if not fresh and last is not None and time.monotonic() - sent_at >= repeat_s:
                    self._send(last, repeat=True)
                    sent_at = time.monotonic()
                if self.viewer.ended is not None and self.closing is None:
                    self.closing = (1001, self.viewer.ended)
            if self.closing is not None and ws.connected:
                ws.close(*self.closing)
        except (ConnectionClosed, OSError):
            pass
        finally:
            self.casts.discard(self)
            cast.leave(self.viewer, self.timeout_s)
            # simple-websocket's reader thread waits for the client's answer to our close; a client
            # that never answers must not hold the worker's exit (as in app/debug/sockets.py).
            ws.thread.join(CLOSE_GRACE_S)
            if ws.thread.is_alive():
                self._drop()

    def _send(self, frame: CastFrame, repeat: bool = False) -> None:
        msg: dict[str, Any] = {"type": "frame", "tabId": self.tab.id, "seq": frame.seq, "format": frame.format,
                               "data": frame.data, "metadata": frame.metadata, "dropped": self.viewer.dropped}
        if repeat:
            msg["repeat"] = True
        self.ws.send(json.dumps(msg))


@bp.route("/screencast/tabs", methods=["GET"])
@before_reading(enabled)
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, ScreencastTab(many=True), description="the tabs a WebSocket on /screencast can cast")
@bp.alt_response(403, schema=ErrorSchema, description="screencast is off unless security.allowScreencast is set")
def screencast_tabs(req: dict[str, Any]) -> Response:
    """The tabs that can be cast: ``[{id, url, title}]`` (GET /screencast?tabId=<id> casts one)."""
    pages = state().ensure(caller()).pages()
    return jsonify([{"id": p["targetId"], "url": p.get("url", ""), "title": p.get("title", "")}
                    for p in pages if not p.get("url", "").startswith(HIDDEN_PREFIXES)])


def init_screencast(app: Flask) -> None:
    """Serve the WebSocket on ``app`` (the JSON routes register with the API's blueprints)."""
    app.register_blueprint(socket_bp)
