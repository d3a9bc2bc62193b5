"""WebSocket ``/debug?sessionId=&role=app|agent``: one connection, one peer of a debug session.

The connection is a served WebSocket (``app.sockets.served``: the request thread waits on the
socket's event, takes the peer's frames to the hub and sends its outbox, and is the only thread
that writes frames, as the deflate state is not thread-safe); our outbox sets the same event when
there is something to send.

Checks happen before the upgrade, as HTTP answers: a bad query is 400 (:class:`SocketQuery`), an
unknown session is 404 (the bridge; the standalone ``pinchtab debug connect`` accepts and closes
with 4000 "Invalid session" as the original did), the agent role needs the bearer token, and past
``debug.maxConnections`` the answer is 503 with Retry-After; app sockets get 503 past their share
of it (``app.sockets.limiter``), so agents and event streams always find a place. Which pages may
open it at all is the web-origin policy's (:func:`doors`).
"""
from __future__ import annotations

import itertools
import time
from typing import Any

from flask import Blueprint, Flask, current_app, g, request
from flask_sock import Sock
from marshmallow import fields, validate

from ..sockets import limiter, served
from ..web.errors import NotFound
from ..web.schemas import Loose
from . import protocol
from .hub import Hub, Peer, Session, dumps, queued_peer

bp = Blueprint("debug_socket", __name__)
sock = Sock()

INVALID_SESSION = 4000     # the original's close code for a wrong session id
_agent_ids = itertools.count(1)


def hub() -> Hub:
    return current_app.extensions["pinchtab.debug"]


class SocketQuery(Loose):
    """``/debug``'s query, checked before the upgrade."""

    role = fields.String(load_default="app", validate=validate.OneOf(("app", "agent")))
    sessionId = fields.String(load_default="")
    appId = fields.String(metadata={"description": "an app's id (default: app-<ms>); the same id again replaces it"})
    agentId = fields.String(metadata={"description": "an agent's id (default: agent-<n>)"})


@bp.before_request
def admit() -> None:
    h = hub()
    req = SocketQuery().load(request.args.to_dict())
    session = h.get(req["sessionId"])
    if session is None and h.strict_sessions:
        raise NotFound("unknown debug session", code="session_not_found")
    g.debug_hold = limiter.current().acquire(app=req["role"] == "app")
    g.debug_socket = (req, session)


@bp.teardown_request
def release(_exc: BaseException | None) -> None:
    hold = g.pop("debug_hold", None)
    if hold is not None:
        hold.release()


@sock.route("/debug", bp=bp)
def debug_socket(ws: Any) -> None:
    h = hub()
    req, session = g.debug_socket
    if session is None:   # standalone: the original's answer to a wrong session id
        ws.close(INVALID_SESSION, "Invalid session")
        return
    if req["role"] == "app":
        peer_id = req.get("appId") or f"app-{int(time.time() * 1000)}"
        info = {"origin": request.headers.get("Origin"), "kind": "sdk"}
    else:
        peer_id = req.get("agentId") or f"agent-{next(_agent_ids)}"
        info = {"remote": request.remote_addr}
    conn = Connection(ws, h, session, req["role"], peer_id, info)
    g.debug_hold.on_close(lambda: conn.close(1001, "server shutting down"))
    conn.run()


class Connection(served.ServedSocket):
    """One WebSocket peer: frames in to the hub, the outbox out to the socket."""

    def __init__(self, ws: Any, h: Hub, session: Session, role: str, peer_id: str, info: dict[str, Any]) -> None:
        super().__init__(ws)
        self.hub = h
        self.session = session
        self.peer: Peer = queued_peer(role, peer_id, ws.event.set, self.close, info, max_bytes=h.outbox_bytes)
        self._handle = h.from_app if role == "app" else h.from_agent

    def grace_s(self, code: int) -> float:
        return 0 if code == 1008 else served.CLOSE_GRACE_S  # a policy close (a stalled agent cut loose): at once

    def opened(self) -> None:
        self.hub.join(self.session, self.peer)
        if self.hub.closing or self.session.ended:   # ended between the upgrade and the join
            self.close(1001 if self.hub.closing else 1000, "session ended")

    def on_frame(self, frame: str | bytes) -> None:
        if isinstance(frame, bytes):
            frame = frame.decode("utf-8", "replace")
        self._handle(self.session, self.peer, frame)

    def tick(self) -> None:
        assert self.peer.outbox is not None
        items, dropped = self.peer.outbox.take()
        if dropped:
            notice = protocol.envelope(self.session.id, "dropped", origin="server", count=dropped,
                                       total=self.peer.outbox.total_dropped)
            self.send(dumps(notice))
        for text in items:
            self.send(text)

    def ended(self) -> None:
        self.hub.leave(self.session, self.peer)


def init_sockets(app: Flask, h: Hub, max_frame_bytes: int) -> None:
    """Serve ``/debug`` on ``app``; the hub's cap becomes the app's (its screencasts and streams
    take their places under it too)."""
    app.extensions["pinchtab.debug"] = h
    limiter.install(app, h.limiter)
    served.configure(app, max_frame_bytes=max_frame_bytes)
    app.register_blueprint(bp)
