"""The loop of a WebSocket we serve: one for the debug sockets, the screencast, the extension's
relay and its command channel.

flask-sock (simple-websocket) does the handshake and the framing on the same Flask app, under
gunicorn's gthread worker or werkzeug's threaded server alike. simple-websocket reads the socket on
a thread of its own and sets ``ws.event`` when a frame arrives (or the socket closes); a connection
sets the same event when it has something to send, so the request thread does both directions:
it waits on the event with a deadline (``IDLE_WAKE_S``, or sooner when the connection says so),
hands every frame received to :meth:`ServedSocket.on_frame`, then lets it send what is due
(:meth:`ServedSocket.tick`).

Frames are bounded in size by simple-websocket itself (:func:`configure`: past the bound it closes
with 1009), and an idle peer is pinged where the entry asks for it. A close may be asked for from
any thread (:meth:`ServedSocket.close`): it is noted, the request thread woken to send it with its
code and reason, and a peer too stalled to take it within the grace loses its socket, so no thread
waits on it for ever. Sends take one lock: a connection that also sends from other threads (the
extension's relay) never interleaves two frames.
"""
from __future__ import annotations

import logging
import socket
import threading
import time
from typing import Any

from flask import Flask
from simple_websocket import ConnectionClosed

from ..web import untrusted_json

log = logging.getLogger(__name__)
IDLE_WAKE_S = 5.0        # the request thread looks at the connection's state at least this often
CLOSE_GRACE_S = 1.0      # a close that cannot be sent in this time (a stalled peer) drops the socket
PING_INTERVAL_S = 25     # keeps idle connections alive through proxies and NAT


def configure(app: Flask, *, max_frame_bytes: int, ping_interval_s: float | None = PING_INTERVAL_S) -> None:
    """The bounds of every WebSocket ``app`` serves: a message larger than ``max_frame_bytes``
    closes its socket with 1009; with ``ping_interval_s``, idle peers are pinged that often (None:
    never, for a connection that must be the only writer of its socket's frames)."""
    options: dict[str, Any] = {"max_message_size": max_frame_bytes}
    if ping_interval_s:
        options["ping_interval"] = ping_interval_s
    app.config["SOCK_SERVER_OPTIONS"] = options


def await_frames(ws: Any, timeout_s: float) -> None:
    """Wait up to ``timeout_s`` for something for ``ws``'s reader: a frame, its close, or another
    wake of ``ws.event``; then take them with ``ws.receive(timeout=0)``.

    For a too-large message simple-websocket wakes the waiter before it marks the socket closed:
    a waiter that found nothing to read on a socket still open would wait on until its next idle
    wake (5 s), so the close is waited for here instead (bounded), and seen at once.
    """
    if ws.connected and not ws.input_buffer:
        if ws.event.wait(timeout_s):
            ws.event.clear()
        limit = ws.max_message_size
        if ws.connected and limit and ws.incoming_message_len > limit:
            ws.thread.join(CLOSE_GRACE_S)


def settimeout_unless_closed(ws: Any, timeout_s: float) -> None:
    """A timeout on ``ws``'s socket for our sends. A peer can close (a too-large first frame closes
    it with 1009) before the loop that serves it starts, and simple-websocket's reader has closed the
    socket then: the loop sees that close at once, and must still get to pass it on."""
    try:
        ws.sock.settimeout(timeout_s)
    except OSError:  # EBADF: closed already
        pass


def first_message(ws: Any, timeout_s: float) -> dict[str, Any] | None:
    """The peer's first frame as a JSON object, if one comes within ``timeout_s`` (None: it did
    not, it was no JSON object, or the socket closed)."""
    deadline = time.monotonic() + timeout_s
    try:
        while (left := deadline - time.monotonic()) > 0:
            frame = ws.receive(timeout=left)
            if frame is None:
                continue
            try:
                msg = untrusted_json.loads(frame)
            except ValueError:
                return None
            return msg if isinstance(msg, dict) else None
    except ConnectionClosed:
        return None
    return None


def json_object(frame: str | bytes, where: str) -> dict[str, Any] | None:
    """A frame as a JSON object, None when it is none (an unparsable one is logged, ``where`` naming
    the socket, and dropped: one bad frame does not end a connection)."""
    try:
        msg = untrusted_json.loads(frame)
    except ValueError:
        log.warning("%s: an unparsable frame dropped (%d bytes)", where, len(frame))
        return None
    return msg if isinstance(msg, dict) else None


class ServedSocket:
    """One served WebSocket: subclasses say what a frame means (:meth:`on_frame`), what to send when
    woken (:meth:`tick`), how long to wait at most (:meth:`wait_s`), and what to do first and last
    (:meth:`opened`, :meth:`ended`). :meth:`run` is the loop, on the request's thread."""

    send_timeout_s: float | None = None   # a peer that takes no frame for this long is dropped

    def __init__(self, ws: Any) -> None:
        self.ws = ws
        self.closing: tuple[int, str] | None = None
        self.broke: OSError | None = None      # why the socket failed, when it did
        self.send_lock = threading.Lock()

    # --- what a connection says
    def opened(self) -> None:
        """Before the first wait (may :meth:`close`)."""

    def on_frame(self, frame: str | bytes) -> None:
        """One frame from the peer."""

    def tick(self) -> None:
        """Send what is due (after every wake, and once more before a close goes out)."""

    def wait_s(self) -> float:
        return IDLE_WAKE_S

    def ended(self) -> None:
        """After the loop, whatever ended it."""

    def grace_s(self, code: int) -> float:
        """How long a close with ``code`` may take before the socket is dropped."""
        return CLOSE_GRACE_S

    # --- from any thread
    def send(self, text: str | bytes) -> None:
        with self.send_lock:
            self.ws.send(text)

    def close(self, code: int, reason: str) -> None:
        """End the connection with ``code`` and ``reason``: the request thread sends the close."""
        if self.closing is None:
            self.closing = (code, reason[:123])
        self.ws.event.set()
        timer = threading.Timer(self.grace_s(code), self.drop)
        timer.daemon = True
        timer.start()

    def drop(self) -> None:
        """Cut the socket under both threads (its reader ends; so does a blocked send)."""
        if self.ws.connected:
            try:
                self.ws.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    # --- the request thread
    def run(self) -> None:
        ws = self.ws
        if self.send_timeout_s:
            # simple-websocket's reader thread only reads when select says so: the timeout is ours alone.
            settimeout_unless_closed(ws, self.send_timeout_s)
        try:
            self.opened()
            while ws.connected and self.closing is None:
                await_frames(ws, max(0.0, min(IDLE_WAKE_S, self.wait_s())))
                while (frame := ws.receive(timeout=0)) is not None:
                    self.on_frame(frame)
                self.tick()
            # A peer's last frames can come with its close (a page answers, then navigates away):
            # they are in the buffer though the socket is no longer connected, so take them too.
            while not ws.connected and (frame := ws.receive(timeout=0)) is not None:
                self.on_frame(frame)
            if self.closing is not None and ws.connected:
                self.tick()
                with self.send_lock:
                    ws.close(*self.closing)
        except ConnectionClosed:
            pass
        except OSError as exc:
            self.broke = exc
        finally:
            try:
                self.ended()
            finally:
                # simple-websocket's reader thread (not a daemon) waits in select() for the peer's
                # answer to our close until its next ping; once the server closes the socket under
                # it, it sleeps on and holds up the worker's exit.
                ws.thread.join(CLOSE_GRACE_S)
                if ws.thread.is_alive():
                    self.drop()
