"""One connection to the browser, one reader thread, futures with deadlines.

Every tab and out-of-process iframe is a flat session on this one connection. The messages travel
over a ``Transport`` (a websocket to Chrome, or a relay in extension mode); only the reader thread
receives. It parses each message once, routes it (``routing.route``) and hands it on without
running anyone's code: replies complete a ``Future``, events go to the owning sink's ``deliver``
(which only queues them). The transport serialises sends.
"""
from __future__ import annotations

import itertools
import json
import logging
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol

from .errors import BrowserGone, CDPError, CDPTimeout, TargetClosed, TargetCrashed
from .routing import route, session_owner
from .transport import Transport, TransportClosed
from .websocket_transport import WebSocketTransport

log = logging.getLogger(__name__)

DEFAULT_CALL_TIMEOUT_S = 30.0
_compact = json.JSONEncoder(separators=(",", ":")).encode  # one encoder: json.dumps with options builds one per call
MAX_UNCLAIMED = 1000


class Sink(Protocol):
    """Receives the messages of the sessions it owns. Called on the reader thread: must only queue."""

    def deliver(self, session_id: str, msg: dict[str, Any]) -> None: ...

    def fail(self, exc: Exception) -> None: ...


class Connection:
    """A CDP connection over one transport; starts its reader thread at once.

    ``Connection.open(ws_url)`` connects to a browser's websocket; other transports (a relay, a
    fake in tests) are passed to the constructor.
    """

    def __init__(self, transport: Transport, *, browser_sink: Sink | None = None) -> None:
        self._transport = transport
        self._lock = threading.Lock()  # guards the tables below
        self._ids = itertools.count(1)
        self._pending: dict[int, tuple[Future, str | None, str]] = {}
        self._owners: dict[str, Sink] = {}
        self._unclaimed: dict[str, list[dict[str, Any]]] = {}  # messages for sessions nobody claimed yet
        self._browser_sink = browser_sink
        self._closed: Exception | None = None
        self._reader = threading.Thread(target=self._read_loop, name="cdp-reader", daemon=True)
        self._reader.start()

    @classmethod
    def open(cls, ws_url: str, *, open_timeout_s: float = 10.0, browser_sink: Sink | None = None) -> Connection:
        """Connect to a browser's websocket URL; raises websocket-client's errors or OSError if it cannot."""
        return cls(WebSocketTransport.connect(ws_url, timeout_s=open_timeout_s), browser_sink=browser_sink)

    # --- sending -----------------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        return self._closed is not None

    def send(self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None) -> Future:
        """Send a command; the returned future completes with its result or fails with CDPError."""
        fut: Future = Future()
        if self._closed is not None:
            fut.set_exception(self._closed)
            return fut
        with self._lock:
            call_id = next(self._ids)
            self._pending[call_id] = (fut, session_id, method)
        msg: dict[str, Any] = {"id": call_id, "method": method, "params": params or {}}
        if session_id:
            msg["sessionId"] = session_id
        data = _compact(msg)
        try:
            self._transport.send(data)
        except (TransportClosed, OSError) as exc:  # the connection died under us
            with self._lock:
                self._pending.pop(call_id, None)
            fut.set_exception(BrowserGone(f"browser connection lost: {exc}"))
        fut.call_id = call_id  # type: ignore[attr-defined]
        return fut

    def call(self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None,
             timeout_s: float = DEFAULT_CALL_TIMEOUT_S) -> dict[str, Any]:
        """Send a command and wait for its result, at most ``timeout_s``."""
        return self.result(self.send(method, params, session_id), method, timeout_s)

    def result(self, fut: Future, method: str, timeout_s: float) -> dict[str, Any]:
        try:
            return fut.result(timeout=max(timeout_s, 0.0))
        except FutureTimeout:
            self.forget(fut)
            raise CDPTimeout(f"{method} did not answer within {timeout_s:.1f} s") from None

    def forget(self, fut: Future) -> None:
        """Drop a pending call whose caller stopped waiting (a late reply is then ignored)."""
        with self._lock:
            self._pending.pop(getattr(fut, "call_id", -1), None)

    # --- sessions ------------------------------------------------------------------------------
    def claim(self, session_id: str, sink: Sink) -> None:
        """Make ``sink`` the owner of a session and hand it whatever arrived before the claim."""
        with self._lock:
            self._owners[session_id] = sink
            early = self._unclaimed.pop(session_id, [])
        for msg in early:
            sink.deliver(session_id, msg)

    def release(self, session_id: str) -> None:
        with self._lock:
            self._owners.pop(session_id, None)
            self._unclaimed.pop(session_id, None)

    # --- closing -------------------------------------------------------------------------------
    def close(self) -> None:
        """Fail every pending call with BrowserGone, close the transport and let the reader end."""
        self._shut(BrowserGone("browser connection closed"))
        self._transport.close()
        self._reader.join(timeout=2)

    def _shut(self, exc: Exception) -> None:
        with self._lock:
            if self._closed is not None:
                return
            self._closed = exc
            pending, self._pending = self._pending, {}
            owners = set(self._owners.values())
        for fut, _, _ in pending.values():
            if not fut.done():
                fut.set_exception(exc)
        for sink in owners:
            sink.fail(exc)
        if self._browser_sink is not None:
            self._browser_sink.fail(exc)

    def _fail_session(self, session_ids: set[str], exc: Exception) -> None:
        with self._lock:
            doomed = [cid for cid, (_, sid, _) in self._pending.items() if sid in session_ids]
            futs = [self._pending.pop(cid)[0] for cid in doomed]
        for fut in futs:
            if not fut.done():
                fut.set_exception(exc)

    # --- the reader thread ---------------------------------------------------------------------
    def _read_loop(self) -> None:
        while True:
            try:
                data = self._transport.receive()
            except TransportClosed:
                self._shut(BrowserGone("browser connection closed"))
                return
            # Any other error (a socket's OSError, a relay's own) ends the connection too: a reader
            # that died quietly would leave callers waiting out their deadlines on a connection that looks open.
            except Exception as exc:
                self._shut(BrowserGone(f"browser connection lost: {exc or type(exc).__name__}"))
                return
            try:
                msg = json.loads(data)
            except ValueError:
                log.warning("cdp: unparsable message dropped (%d bytes)", len(data))
                continue
            self._dispatch(msg)

    def _dispatch(self, msg: dict[str, Any]) -> None:
        r = route(msg)
        if r.kind == "reply":
            with self._lock:
                entry = self._pending.pop(r.call_id, None)  # type: ignore[arg-type]
            if entry is None:
                return  # its caller gave up
            fut, _, method = entry
            if fut.done():  # cancelled by its caller: nothing to complete
                return
            if "error" in msg:
                err = msg["error"]
                fut.set_exception(CDPError(method, err.get("message", "error"), err.get("code")))
            else:
                fut.set_result(msg.get("result") or {})
            return
        with self._lock:
            owner = session_owner(r.session_id, self._owners)
            if r.kind == "attached" and r.child_session_id and owner is not None:
                # A child of a session we own (an out-of-process iframe, a worker): same owner.
                self._owners[r.child_session_id] = owner
            elif r.kind == "detached" and r.child_session_id:
                gone_owner = self._owners.pop(r.child_session_id, None)
        if r.kind == "detached" and r.child_session_id:
            self._fail_session({r.child_session_id}, TargetClosed("target detached"))
            if gone_owner is not None and gone_owner is not owner:
                gone_owner.deliver(r.child_session_id, msg)
        if r.kind == "crashed" and r.session_id:
            self._fail_session({r.session_id}, TargetCrashed("the tab crashed"))
        if r.session_id is None:
            if self._browser_sink is not None:
                self._browser_sink.deliver("", msg)
            return
        if owner is None:
            with self._lock:
                if r.session_id not in self._owners:
                    early = self._unclaimed.setdefault(r.session_id, [])
                    if len(early) < MAX_UNCLAIMED:  # a session nobody claims must not grow forever
                        early.append(msg)
                    return
                owner = self._owners[r.session_id]
        owner.deliver(r.session_id, msg)
