"""WebSocket ``/debug?sessionId=&role=app|agent``: one connection, one peer of a debug session.

flask-sock (simple-websocket) does the handshake and the framing on the same Flask app, under
gunicorn's gthread worker or werkzeug's threaded server alike. simple-websocket reads the socket
on a thread of its own and sets ``ws.event`` when a frame arrives; our outbox sets the same event
when there is something to send, so the connection's request thread does both directions and is
the only thread that writes frames (the deflate state is not thread-safe).

Checks happen before the upgrade, as HTTP answers: an unknown session is 404 (the bridge; the
standalone ``pinchtab debug connect`` accepts and closes with 4000 "Invalid session" as the
original did), the agent role needs the bearer token, and past ``debug.maxConnections`` the answer
is 503 with Retry-After; app sockets get 503 past their share of it (:func:`~.hub.app_slot_limit`),
so agents and event streams always find a place. Which pages may open it at all is the web-origin
policy's (:func:`doors`).
"""
from __future__ import annotations

import itertools
import socket
import threading
import time
from typing import Any

from flask import Blueprint, Flask, current_app, g, request
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from ..access import web_origin
from ..web.errors import BadRequest, NotFound, Unavailable
from . import protocol
from .hub import Hub, Peer, Session, dumps, queued_peer

bp = Blueprint("debug_socket", __name__)
sock = Sock()

IDLE_WAKE_S = 5.0          # the connection thread looks at the hub's state at least this often
CLOSE_GRACE_S = 1.0        # a close that cannot be sent in this time (stalled client) drops the socket
RETRY_AFTER_S = 5
INVALID_SESSION = 4000     # the original's close code for a wrong session id
_agent_ids = itertools.count(1)


def hub() -> Hub:
    return current_app.extensions["pinchtab.debug"]


def doors(allowed_origins: tuple[str, ...]) -> list[web_origin.Door]:
    """What the debug bridge takes from pages beyond the server's own: apps from a loopback dev
    server (``localhost:*``, ``127.0.0.1:*``) or ``debug.allowedOrigins``, and the page SDK's script
    from anywhere (it holds no data). An agent with a web Origin needs ``server.allowedOrigins``."""
    listed = frozenset(web_origin.normalize_origin(o) for o in allowed_origins)

    def app_origin(origin: str) -> bool:
        return web_origin.is_loopback_origin(origin) or web_origin.normalize_origin(origin) in listed

    return [web_origin.Door("/debug", app_origin, when=lambda q: q.get("role", ["app"])[0] != "agent"),
            web_origin.Door("/debug/sdk.js")]


def is_public(req: Any) -> bool:
    """An app joins with the session id as its capability (a page cannot send a bearer token)."""
    return req.path == "/debug" and req.args.get("role", "app") != "agent"


@bp.before_request
def admit() -> None:
    h = hub()
    role = request.args.get("role", "app")
    if role not in ("app", "agent"):
        raise BadRequest(f"unknown role {role!r}: use app or agent", code="bad_role")
    session = h.get(request.args.get("sessionId", ""))
    if session is None and h.strict_sessions:
        raise NotFound("unknown debug session", code="session_not_found")
    is_app = role == "app"
    if not h.acquire_slot(app=is_app):
        if is_app and h.app_connections >= h.max_app_connections:
            message = (f"too many app connections: apps may hold {h.max_app_connections} of debug.maxConnections "
                       f"({h.max_connections}), the rest are kept for agents and event streams; try again later")
        else:
            message = "too many debug connections; try again later"
        raise Unavailable(message, code="too_many_connections", headers={"Retry-After": str(RETRY_AFTER_S)})
    g.debug_slot = role
    g.debug_session = session


@bp.teardown_request
def release(_exc: BaseException | None) -> None:
    role = g.pop("debug_slot", None)
    if role is not None:
        hub().release_slot(app=role == "app")


@sock.route("/debug", bp=bp)
def debug_socket(ws: Any) -> None:
    h = hub()
    session: Session | None = g.debug_session
    if session is None:   # standalone: the original's answer to a wrong session id
        ws.close(INVALID_SESSION, "Invalid session")
        return
    role = request.args.get("role", "app")
    if role == "app":
        peer_id = request.args.get("appId") or f"app-{int(time.time() * 1000)}"
        info = {"origin": request.headers.get("Origin"), "kind": "sdk"}
    else:
        peer_id = request.args.get("agentId") or f"agent-{next(_agent_ids)}"
        info = {"remote": request.remote_addr}
    Connection(ws, h, session, role, peer_id, info).run()


class ServedSocket:
    """A WebSocket served on its request thread and closed from any thread: the close is noted and
    the request thread woken to send it; a peer too stalled to take it within the grace loses its
    socket, so no thread waits on it for ever."""

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.closing: tuple[int, str] | None = None

    def grace_s(self, code: int) -> float:
        """How long a close with ``code`` may take before the socket is dropped."""
        return CLOSE_GRACE_S

    def close(self, code: int, reason: str) -> None:
        if self.closing is None:
            self.closing = (code, reason)
        self.ws.event.set()
        timer = threading.Timer(self.grace_s(code), self._drop)
        timer.daemon = True
        timer.start()

    def _drop(self) -> None:
        if self.ws.connected:
            try:
                self.ws.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


class Connection(ServedSocket):
    """The loop of one WebSocket peer: frames in to the hub, the outbox out to the socket."""

    def __init__(self, ws: Any, h: Hub, session: Session, role: str, peer_id: str, info: dict[str, Any]) -> None:
        super().__init__(ws)
        self.hub = h
        self.session = session
        self.peer: Peer = queued_peer(role, peer_id, ws.event.set, self.close, info, max_bytes=h.outbox_bytes)
        self._handle = h.from_app if role == "app" else h.from_agent

    def grace_s(self, code: int) -> float:
        return 0 if code == 1008 else CLOSE_GRACE_S  # a policy close (a stalled agent cut loose): at once

    def run(self) -> None:
        ws, peer = self.ws, self.peer
        self.hub.join(self.session, peer)
        if self.hub.closing or self.session.ended:   # ended between the upgrade and the join
            self.close(1001 if self.hub.closing else 1000, "session ended")
        try:
            while ws.connected and self.closing is None:
                ws.event.wait(IDLE_WAKE_S)
                ws.event.clear()
                while (frame := ws.receive(timeout=0)) is not None:
                    if isinstance(frame, bytes):
                        frame = frame.decode("utf-8", "replace")
                    self._handle(self.session, peer, frame)
                self._flush()
            if self.closing is not None and ws.connected:
                self._flush()
                ws.close(*self.closing)
        except (ConnectionClosed, OSError):
            pass
        finally:
            self.hub.leave(self.session, peer)
            # simple-websocket's reader thread (not a daemon) waits in select() for the other
            # side's answer to our close until its next ping (25 s); once the server closes the
            # socket under it, it sleeps on and holds up the worker's exit.
            ws.thread.join(CLOSE_GRACE_S)
            if ws.thread.is_alive():
                self._drop()

    def _flush(self) -> None:
        assert self.peer.outbox is not None
        items, dropped = self.peer.outbox.take()
        if dropped:
            notice = protocol.envelope(self.session.id, "dropped", origin="server", count=dropped,
                                       total=self.peer.outbox.total_dropped)
            self.ws.send(dumps(notice))
        for text in items:
            self.ws.send(text)


def init_sockets(app: Flask, h: Hub, max_frame_bytes: int) -> None:
    app.extensions["pinchtab.debug"] = h
    # simple-websocket closes with 1009 when a message grows past max_message_size.
    app.config["SOCK_SERVER_OPTIONS"] = {"max_message_size": max_frame_bytes, "ping_interval": 25}
    app.register_blueprint(bp)
