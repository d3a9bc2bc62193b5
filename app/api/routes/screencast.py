"""Live frames of a tab: the WebSocket ``GET /screencast?tabId=`` and ``GET /screencast/tabs``
(off unless security.allowScreencast).

The WebSocket is a served one (``app.sockets.served``): checks happen before the upgrade, as HTTP
answers (403 when off, 400 for a bad query, 404 for an unknown tab, 503 with Retry-After past the
cap on long-lived connections, ``app.sockets.limiter``, which it shares with the debug sockets and
event streams: they all hold a request thread); the connection's own thread is the only one that
writes frames; a shutdown closes every cast within a second (the cap ends what holds a place).

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
import time
from typing import Any

from flask import Blueprint as FlaskBlueprint
from flask import Flask, g, request
from flask_sock import Sock

from cdp.screencast import CastFrame, Viewer, cast_of
from cdp.tab import Tab

from ...sockets import limiter
from ...sockets.served import IDLE_WAKE_S, ServedSocket
from ...web.errors import disabled
from ...web.openapi import Blueprint, ErrorSchema
from ..browser_state import HIDDEN_PREFIXES
from ..contract import TabQuerySchema
from .common import before_reading, caller, state, tab
from .screencast_contract import ScreencastQuerySchema, ScreencastTab

bp = Blueprint("screencast", __name__)
socket_bp = FlaskBlueprint("screencast_socket", __name__)
sock = Sock()

REPEAT_S = 1.0         # a still page's last frame goes out again this often (never above the viewer's fps)
SEND_TIMEOUT_S = 15.0  # a viewer that takes no frame for this long is dropped


def enabled() -> None:
    """403 ``screencast_disabled`` unless security.allowScreencast (recording shares the gate)."""
    if not state().config.security.allow_screencast:
        raise disabled("screencast", "security.allowScreencast")


@socket_bp.before_request
def admit() -> None:
    enabled()
    req = ScreencastQuerySchema().load(request.args.to_dict())  # a ValidationError answers 400 naming the field
    target = tab(req.get("tabId"))
    g.screencast_hold = limiter.current().acquire()
    g.screencast = (req, target)


@socket_bp.teardown_request
def release(_exc: BaseException | None) -> None:
    hold = g.pop("screencast_hold", None)
    if hold is not None:
        hold.release()


@sock.route("/screencast", bp=socket_bp)
def screencast_socket(ws: Any) -> None:
    req, target = g.screencast
    conn = Connection(ws, target, req, state().config.timeouts.action_sec)
    g.screencast_hold.on_close(lambda: conn.close(1001, "server shutting down"))
    conn.run()


class Connection(ServedSocket):
    """One viewer's WebSocket: frames from the tab's cast out to the socket. What the viewer sends
    is read (its pings are answered) and ignored."""

    send_timeout_s = SEND_TIMEOUT_S   # a viewer that stops reading must not hold this thread in a send

    def __init__(self, ws: Any, target: Tab, req: dict[str, Any], timeout_s: float) -> None:
        super().__init__(ws)
        self.tab = target
        self.timeout_s = timeout_s
        self.viewer = Viewer(ws.event.set, fps=req["fps"])
        self.params = {"format": req["format"], "quality": req["quality"], "maxWidth": req["maxWidth"],
                       "maxHeight": req["maxHeight"], "everyNthFrame": req["everyNthFrame"]}
        self.fps = req["fps"]
        self.cast = cast_of(target)
        self.joined = False
        self.last: CastFrame | None = None
        self.sent_at = time.monotonic()
        self.repeat_s = max(REPEAT_S, 1.0 / self.fps)

    def opened(self) -> None:
        try:
            self.cast.join(self.viewer, self.params, self.timeout_s)
        except Exception as exc:  # the tab closed or refused: say why, as a close reason
            self.close(1011, f"screencast could not start: {type(exc).__name__}")
            return
        self.joined = True
        self.send(json.dumps({"type": "start", "tabId": self.tab.id, "format": self.cast.params.get("format"),
                              "maxWidth": self.cast.params.get("maxWidth"),
                              "maxHeight": self.cast.params.get("maxHeight"), "fps": self.fps}))

    def wait_s(self) -> float:
        return IDLE_WAKE_S if self.last is None else self.sent_at + self.repeat_s - time.monotonic()

    def tick(self) -> None:
        if not self.joined or self.closing is not None:
            return
        fresh = self.viewer.take()
        for frame in fresh:
            self._send(frame)
            self.last, self.sent_at = frame, time.monotonic()
        if not fresh and self.last is not None and time.monotonic() - self.sent_at >= self.repeat_s:
            self._send(self.last, repeat=True)
            self.sent_at = time.monotonic()
        if self.viewer.ended is not None:
            self.closing = (1001, self.viewer.ended)

    def ended(self) -> None:
        if self.joined:
            self.cast.leave(self.viewer, self.timeout_s)

    def _send(self, frame: CastFrame, repeat: bool = False) -> None:
        msg: dict[str, Any] = {"type": "frame", "tabId": self.tab.id, "seq": frame.seq, "format": frame.format,
                               "data": frame.data, "metadata": frame.metadata, "dropped": self.viewer.dropped}
        if repeat:
            msg["repeat"] = True
        self.send(json.dumps(msg))


@bp.route("/screencast/tabs", methods=["GET"])
@before_reading(enabled)
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, ScreencastTab(many=True), description="the tabs a WebSocket on /screencast can cast")
@bp.alt_response(403, schema=ErrorSchema, description="screencast is off unless security.allowScreencast is set")
def screencast_tabs(req: dict[str, Any]) -> list[dict[str, Any]]:
    """The tabs that can be cast: ``[{id, url, title}]`` (GET /screencast?tabId=<id> casts one)."""
    pages = state().ensure(caller()).pages()
    return [{"id": p["targetId"], "url": p.get("url", ""), "title": p.get("title", "")}
            for p in pages if not p.get("url", "").startswith(HIDDEN_PREFIXES)]


def init_screencast(app: Flask) -> None:
    """Serve the WebSocket on ``app`` (the JSON routes register with the API's blueprints)."""
    app.register_blueprint(socket_bp)
