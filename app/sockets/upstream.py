"""A caller's WebSocket relayed to the same WebSocket on an upstream server of ours (server mode's
``/debug`` and ``/screencast``, relayed to the bridge instance that holds the session or the tab).

One sequence for every relayed entry, before the upgrade as HTTP answers: :func:`admit` takes a
place under the caller's cap (:mod:`.limiter`) and opens the upstream WebSocket with a deadline
(``CONNECT_TIMEOUT_S``), so the upstream's refusals (an unknown session, its own cap, a bad query)
become the caller's answers before anything is upgraded; :func:`serve` then pumps frames both ways,
one thread each way (:class:`SocketRelay`), and close codes pass through in both directions;
:func:`teardown` gives back the place and whatever was left open, however the request ended.
"""
from __future__ import annotations

import itertools
import json
import logging
import socket
import threading
from typing import Any

import websocket
from flask import g
from simple_websocket import ConnectionClosed

from ..web.errors import APIError
from .limiter import Limiter
from .served import CLOSE_GRACE_S, IDLE_WAKE_S, await_frames, settimeout_unless_closed

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0     # the WebSocket handshake with the upstream
SEND_TIMEOUT_S = 15.0       # a caller that takes no frame for this long is dropped
# Codes that describe a close but may never be sent in a close frame (RFC 6455, 7.4.1).
UNSENDABLE = frozenset({1005, 1006, 1015})
UPSTREAM_GONE = (1001, "the instance went away")
SHUTTING_DOWN = (1001, "server shutting down")
PASSED_THROUGH = frozenset({400, 403, 404, 503})   # the upstream's refusals the caller may see as they are


class Refused(APIError):
    """The upstream refused the WebSocket with ``status`` (its own answer, or a 502 of ours)."""

    def __init__(self, message: str, *, upstream_status: int, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.upstream_status = upstream_status


def connect(url: str, token: str, *, instance: str, origin: str | None = None) -> websocket.WebSocket:
    """The WebSocket at ``url`` (``ws://...``), opened with ``token``; the page's ``origin`` goes along
    for the upstream's own check. Its refusal is raised as the caller's answer (:class:`Refused`);
    an upstream that cannot be reached within the deadline is 502 ``instance_unreachable``."""
    try:
        return websocket.create_connection(
            url, timeout=CONNECT_TIMEOUT_S, header=[f"Authorization: Bearer {token}"], origin=origin,
            suppress_origin=origin is None, skip_utf8_validation=True, enable_multithread=True)
    except websocket.WebSocketBadStatusException as exc:
        raise refusal(exc, instance) from None
    except (websocket.WebSocketException, OSError) as exc:
        log.warning("instance %s: WebSocket failed: %s", instance, type(exc).__name__)
        raise APIError(f"instance {instance} is unreachable", status=502, code="instance_unreachable",
                       retryable=True, details={"instanceId": instance}) from None


def refusal(exc: websocket.WebSocketBadStatusException, instance: str) -> Refused:
    """An upstream's refusal of a relayed WebSocket, as the caller's answer."""
    try:
        data = json.loads(exc.resp_body or b"{}")
    except ValueError:
        data = {}
    if exc.status_code not in PASSED_THROUGH or not isinstance(data, dict):
        return Refused(f"instance {instance} refused the WebSocket ({exc.status_code})", status=502,
                       code="instance_refused", details={"instanceId": instance, "status": exc.status_code},
                       upstream_status=exc.status_code)
    retry = (exc.resp_headers or {}).get("retry-after")
    return Refused(str(data.get("error") or "refused by the instance"), status=exc.status_code,
                   code=str(data.get("code") or "refused"), retryable=exc.status_code == 503,
                   headers={"Retry-After": retry} if retry else None, upstream_status=exc.status_code)


def admit(limiter: Limiter, url: str, token: str, *, instance: str, origin: str | None = None,
          app: bool = False) -> None:
    """Before the upgrade: a place under ``limiter`` (an app's within its share), then the upstream
    WebSocket; both wait on ``g`` for :func:`serve`, and :func:`teardown` gives them back."""
    g.upstream_hold = limiter.acquire(app=app)
    g.upstream_socket = connect(url, token, instance=instance, origin=origin)


def teardown(_exc: BaseException | None) -> None:
    """After the request, however it ended: the upstream closed if the upgrade failed or the relay
    left it open, the place given back. Registered as the relaying blueprint's teardown."""
    upstream: websocket.WebSocket | None = g.pop("upstream_socket", None)
    if upstream is not None and upstream.connected:
        upstream.shutdown()
    hold = g.pop("upstream_hold", None)
    if hold is not None:
        hold.release()


def serve(ws: Any, label: str) -> None:
    """The upgraded caller's socket joined to the upstream :func:`admit` opened, until either closes."""
    relay = SocketRelay(ws, g.pop("upstream_socket"), label)
    g.upstream_hold.on_close(relay.shutdown)
    relay.run()


_relay_ids = itertools.count(1)


class SocketRelay:
    """One caller's WebSocket and the upstream's, joined: the request thread carries the caller's
    frames upstream, a thread of its own (``ws-relay:<n>``) the upstream's to the caller, so each
    socket has one writer of data frames. A close on either side closes the other with the same
    code and reason."""

    def __init__(self, client: Any, upstream: websocket.WebSocket, label: str) -> None:
        self.client = client              # simple_websocket.Server
        self.upstream = upstream
        self.label = label
        self.end = UPSTREAM_GONE          # the caller's close when the upstream's side breaks off
        self._upstream_closed = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        # A caller that stops reading must not hold the pump in a send forever: past this, the
        # send fails and the relay ends. (The reader thread only reads when select says so.)
        settimeout_unless_closed(self.client, SEND_TIMEOUT_S)
        pump = threading.Thread(target=self._upstream_loop, name=f"ws-relay:{next(_relay_ids)}", daemon=True)
        pump.start()
        try:
            self._client_loop()
        finally:
            pump.join(CLOSE_GRACE_S)      # the upstream answers our close, and the pump sees it
            if pump.is_alive():
                self._drop_upstream()
                pump.join(IDLE_WAKE_S)
            self.upstream.shutdown()      # its file descriptor
            # simple-websocket's reader thread waits in select() for the caller's answer to a
            # close, until its next ping: once the server closes the socket under it, it would
            # sleep on, and as a non-daemon thread hold up the worker's exit.
            reader = self.client.thread
            reader.join(CLOSE_GRACE_S)
            if reader.is_alive():
                self._drop_client()
                reader.join(CLOSE_GRACE_S)

    def shutdown(self) -> None:
        """From any thread (the server is stopping): both sides close with 1001 within a second."""
        self.end = SHUTTING_DOWN
        self._close_upstream(*SHUTTING_DOWN)
        timer = threading.Timer(CLOSE_GRACE_S, self._drop_upstream)
        timer.daemon = True
        timer.start()

    # -- caller -> upstream (the request thread)
    def _client_loop(self) -> None:
        while True:
            try:
                await_frames(self.client, IDLE_WAKE_S)
                data = self.client.receive(timeout=0)
            except ConnectionClosed as closed:
                self._close_upstream(self._client_close_code(closed), closed.message or "")
                return
            if data is None or self._upstream_closed.is_set():
                continue
            try:
                if isinstance(data, bytes):
                    self.upstream.send_binary(data)
                else:
                    self.upstream.send(data)
            except (websocket.WebSocketException, OSError):
                pass   # the upstream's side broke off: the pump sees it too and closes the caller

    def _client_close_code(self, closed: ConnectionClosed) -> int:
        code = int(closed.reason or 1005)
        limit = self.client.max_message_size
        if code == 1005 and limit and self.client.incoming_message_len > limit:
            # simple-websocket closed the caller itself (1009) for a too large message, and says
            # only that no code came from the caller: the upstream hears the real reason.
            return 1009
        return code

    # -- upstream -> caller (the pump thread)
    def _upstream_loop(self) -> None:
        self.upstream.settimeout(IDLE_WAKE_S)
        end: tuple[int, str] | None = None
        try:
            while True:
                try:
                    opcode, frame = self.upstream.recv_data_frame(control_frame=True)
                except websocket.WebSocketTimeoutException:
                    if self._upstream_closed.is_set():
                        return             # our close went unanswered; the request thread drops it
                    continue
                if opcode == websocket.ABNF.OPCODE_CLOSE:   # websocket-client has answered it
                    data = frame.data or b""
                    code = int.from_bytes(data[:2], "big") if len(data) >= 2 else 1000
                    end = (code, data[2:].decode("utf-8", "replace"))
                    return
                if opcode not in (websocket.ABNF.OPCODE_TEXT, websocket.ABNF.OPCODE_BINARY):
                    continue
                text = frame.data.decode("utf-8", "replace") if opcode == websocket.ABNF.OPCODE_TEXT else frame.data
                try:
                    self.client.send(text)
                except ConnectionClosed:
                    return                 # the caller left: the request thread passes its close on
                except OSError:
                    # The caller stalled past SEND_TIMEOUT_S (or its connection broke): a frame may
                    # be half sent, so nothing more can go to it; the upstream hears it went away.
                    log.info("relay %s: the caller stopped reading; dropping it", self.label)
                    self._drop_client()
                    self._close_upstream(1001, "the caller went away")
                    return
        except (websocket.WebSocketException, OSError) as exc:
            if not self._upstream_closed.is_set():
                log.info("relay %s: the upstream's side broke off: %s", self.label, type(exc).__name__)
        finally:
            self._upstream_closed.set()
            self._close_client(*(end or self.end))
            self._drop_upstream()

    # -- closing
    def _close_upstream(self, code: int, reason: str) -> None:
        with self._lock:
            if self._upstream_closed.is_set():
                return
            self._upstream_closed.set()
        try:
            self.upstream.send_close(1000 if code in UNSENDABLE else code, reason.encode("utf-8")[:123])
        except (websocket.WebSocketException, OSError):
            pass

    def _close_client(self, code: int, reason: str) -> None:
        with self._lock:
            if self.client.connected:
                try:
                    self.client.close(1000 if code in UNSENDABLE else code, reason[:123])
                except (ConnectionClosed, OSError):
                    self._drop_client()
        self.client.event.set()          # the request thread wakes and sees the close

    def _drop_client(self) -> None:
        try:
            self.client.sock.shutdown(socket.SHUT_RDWR)   # the reader thread ends; so does receive()
        except OSError:
            pass

    def _drop_upstream(self) -> None:
        # shutdown() wakes a recv blocked in the pump thread; websocket-client's own only closes.
        raw = self.upstream.sock
        if raw is not None:
            try:
                raw.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
