"""The bridge's side of the CDP relay: our extension connects here and lends us its tabs.

``GET /extension/info`` (public) says this is a Pinchtab bridge in extension mode and whether an
extension is connected; the extension then opens the WebSocket ``/extension/relay`` and sends
``{"type": "hello", "pairing": ...}`` first (a WebSocket cannot carry an Authorization header, and a
frame keeps the token out of URLs and logs). A wrong token closes the socket with 4001.

After the welcome the bridge sends requests ``{"id", "op", ...}`` and the extension answers
``{"id", "result"}`` or ``{"id", "error"}``; it also sends events (``{"event": "cdp" | "detached" |
"tabRemoved" | "tabUpdated", ...}``), which go to whoever subscribed (``cdp.extension_transport``).

One extension at a time: a new connection replaces the old one (4002). The newer socket is the one
that works: a service worker that restarted, or a Chrome that came back, leaves a half-dead socket
behind that we would otherwise keep preferring.

Only the extension may open the relay: the web-origin policy's door (:func:`door`: its
``chrome-extension://`` Origin, one of ``extension.allowedIds`` when any are listed, as on the
polling endpoints). The socket is a served one (``app.sockets.served``): frames in on the request's
thread, requests out from any thread under its send lock.
"""
from __future__ import annotations

import itertools
import json
import logging
import socket
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from flask import Blueprint, Flask, current_app
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from cdp.errors import LaunchError
from cdp.extension_transport import ExtensionTransport, RelayClosed

from ..access import web_origin
from ..sockets import served
from . import pairing
from .commands import CommandQueue

log = logging.getLogger(__name__)

bp = Blueprint("extension_relay", __name__)
sock = Sock()

HELLO_TIMEOUT_S = 10.0
BAD_PAIRING = 4001
REPLACED = 4002
MAX_FRAME_BYTES = 64 * 1024 * 1024  # screenshots of big pages travel as one frame

EventHandler = Callable[[dict[str, Any]], None]
CloseHandler = Callable[[str], None]


class ExtensionLink(served.ServedSocket):
    """One connected extension: requests out (from any thread), answers and events in (its socket's thread)."""

    def __init__(self, ws: Any, hello: dict[str, Any]) -> None:
        super().__init__(ws)
        self.extension_id = str(hello.get("extensionId", ""))
        self.version = str(hello.get("version", ""))
        self.user_agent = str(hello.get("userAgent", ""))
        self.connected_at = time.time()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._pending: dict[int, Future] = {}
        self._on_event: EventHandler | None = None
        self._on_close: CloseHandler | None = None
        self.closed: str | None = None  # why, once closed

    @property
    def in_flight(self) -> int:
        """Requests sent and not answered yet."""
        return len(self._pending)

    # --- for the transport ---------------------------------------------------------------------
    def request(self, op: str, args: dict[str, Any] | None = None) -> Future:
        """Send an op; the future completes with its result or fails with RelayClosed or RuntimeError."""
        fut: Future = Future()
        with self._lock:
            if self.closed is not None:
                fut.set_exception(RelayClosed(self.closed))
                return fut
            op_id = next(self._ids)
            self._pending[op_id] = fut
        text = json.dumps({"id": op_id, "op": op, **(args or {})}, separators=(",", ":"))
        try:
            self.send(text)   # under the send lock: simple-websocket's send is not safe from several threads
        except (ConnectionClosed, OSError) as exc:
            with self._lock:
                self._pending.pop(op_id, None)
            if not fut.done():
                fut.set_exception(RelayClosed(f"the extension went away: {exc or type(exc).__name__}"))
        return fut

    def subscribe(self, on_event: EventHandler, on_close: CloseHandler) -> None:
        """Route events to ``on_event`` (called on the socket's thread: it must only queue) until
        another subscriber replaces it; ``on_close`` is called once the extension is gone."""
        with self._lock:
            self._on_event, self._on_close = on_event, on_close
            closed = self.closed
        if closed is not None:
            on_close(closed)

    def unsubscribe(self, on_event: EventHandler) -> None:
        with self._lock:
            if self._on_event is on_event:
                self._on_event = self._on_close = None

    # --- the socket's thread -------------------------------------------------------------------
    def on_frame(self, frame: str | bytes) -> None:
        self.handle_frame(frame)

    def ended(self) -> None:
        """The socket closed: fail every pending request at once."""
        self.shut(f"the extension connection failed: {self.broke}" if self.broke else "the extension disconnected")

    def handle_frame(self, frame: str | bytes) -> None:
        msg = served.json_object(frame, "extension relay")
        if msg is None:
            return
        if "id" in msg and "event" not in msg:
            with self._lock:
                fut = self._pending.pop(msg["id"], None) if isinstance(msg["id"], int) else None
            if fut is None or fut.done():
                return
            if "error" in msg:
                fut.set_exception(RuntimeError(str(msg["error"])))
            else:
                fut.set_result(msg.get("result"))
            return
        if msg.get("type") == "ping":
            self._send_quietly('{"type":"pong"}')
            return
        if "event" in msg:
            handler = self._on_event
            if handler is not None:
                handler(msg)

    def close(self, code: int, reason: str) -> None:
        """Close the socket (from any thread): what is pending fails now, the socket's thread sends the close."""
        super().close(code, reason)
        self.shut(reason)

    def shut(self, why: str) -> None:
        with self._lock:
            if self.closed is not None:
                return
            self.closed = why
            pending, self._pending = self._pending, {}
            on_close = self._on_close
        if on_close is not None:  # first: the transport ends, so its calls fail as "connection lost"
            on_close(why)
        for fut in pending.values():
            if not fut.done():
                fut.set_exception(RelayClosed(why))

    def _send_quietly(self, text: str) -> None:
        try:
            self.send(text)
        except (ConnectionClosed, OSError):
            pass


class Relay:
    """The bridge's end: the connected extension (at most one) and the pairing it must show."""

    def __init__(self, pairing_token: str, *, connect_wait_s: float = 5.0) -> None:
        self.pairing_token = pairing_token
        self.connect_wait_s = connect_wait_s
        self._cond = threading.Condition()
        self.link: ExtensionLink | None = None
        self.connections = 0
        self.commands: CommandQueue | None = None  # the polling side's queue, when served beside the relay
        self.on_connect: Callable[[], None] | None = None  # called (on its own thread) when an extension connects

    def info(self) -> dict[str, Any]:
        link = self.link
        out: dict[str, Any] = {"pinchtab": True, "mode": "extension", "connected": link is not None}
        if link is not None:
            out["extension"] = {"version": link.version, "connectedAt": link.connected_at}
        return out

    def attach(self, link: ExtensionLink) -> None:
        """Make ``link`` the connected extension, replacing (closing) the previous one."""
        with self._cond:
            old, self.link = self.link, link
            self.connections += 1
            self._cond.notify_all()
        if old is not None:
            log.info("extension relay: a new connection replaces the previous one")
            old.close(REPLACED, "replaced by a newer connection")
        if self.on_connect is not None:
            threading.Thread(target=self.on_connect, name="extension-connected", daemon=True).start()

    def detach(self, link: ExtensionLink) -> None:
        with self._cond:
            if self.link is link:
                self.link = None

    def wait_link(self, timeout_s: float) -> ExtensionLink | None:
        """The connected extension, waiting up to ``timeout_s`` for one."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while self.link is None or self.link.closed is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            return self.link

    def transport(self) -> ExtensionTransport:
        """A CDP transport over the connected extension; raises LaunchError when none connects in time.

        Once an extension has been here, a caller waits a little for it to come back (a service
        worker that restarted reconnects within a second or two); before that, not at all: the
        first connection starts the browser by itself (``on_connect``).
        """
        link = self.wait_link(self.connect_wait_s if self.connections else 0.0)
        if link is None:
            raise LaunchError("waiting for the extension: no Pinchtab extension is connected (install it from "
                              "`pinchtab extension path`, and set its pairing token from `pinchtab extension pair`)")
        return ExtensionTransport(link)


def relay() -> Relay:
    return current_app.extensions["pinchtab.relay"]


def door(allowed_ids: tuple[str, ...]) -> web_origin.Door:
    """Only the extension may open the relay (a web page on the same machine must not): a WebSocket
    it opens always names its Origin."""
    return web_origin.extension_only("/extension/relay", allowed_ids, web_origin.Refusal(
        "origin_not_allowed", "only the Pinchtab extension may open the relay"), origin_required=True)


@bp.get("/extension/info")
def extension_info() -> Any:
    return relay().info()


@sock.route("/extension/relay", bp=bp)
def relay_socket(ws: Any) -> None:
    r = relay()
    hello = read_hello(ws)
    if hello is None or not pairing.matches(str(hello.get("pairing", "")), r.pairing_token):
        log.warning("extension relay: refused a connection (missing or wrong pairing token)")
        ws.close(BAD_PAIRING, "bad pairing token: run `pinchtab extension pair` and set it in the extension")
        return
    try:  # small frames both ways, one waiting on the other: Nagle's delay would add to every call
        ws.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except (AttributeError, OSError):
        pass
    link = ExtensionLink(ws, hello)
    ws.send('{"type":"welcome"}')
    r.attach(link)
    log.info("extension relay: extension %s connected (version %s)", link.extension_id or "?", link.version or "?")
    try:
        link.run()
    finally:
        r.detach(link)
        log.info("extension relay: extension disconnected (%s)", link.closed)


def read_hello(ws: Any) -> dict[str, Any] | None:
    """The first frame, if it is ``{"type": "hello", ...}`` and comes within HELLO_TIMEOUT_S."""
    msg = served.first_message(ws, HELLO_TIMEOUT_S)
    return msg if msg is not None and msg.get("type") == "hello" else None


def init_relay(app: Flask, r: Relay, *, allowed_ids: tuple[str, ...] = ()) -> None:
    """Serve the relay on ``app`` (the extension port's app), to the extensions ``allowed_ids`` lists
    (any, when it lists none)."""
    app.extensions["pinchtab.relay"] = r
    web_origin.admit(app, door(tuple(allowed_ids)))
    # No server pings: simple-websocket would send them from its own thread, racing our sends; the
    # extension pings every 20 s, and a Chrome that exits closes its loopback socket at once.
    served.configure(app, max_frame_bytes=MAX_FRAME_BYTES, ping_interval_s=None)
    app.register_blueprint(bp)
