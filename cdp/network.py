"""Network capture: every request a tab makes, from its creation, in a bounded ring.

The tab's handlers (on its worker) record ``Network.*`` events; HTTP threads read copies under a
lock. Each field a page controls is capped, so a page cannot grow the ring past its budget, and
response bodies are kept only when the config asks, each cut at its byte cap and all of a tab's
together under ``BODY_BUDGET``. Streams subscribe to finished entries through bounded queues: a
slow reader loses the oldest entries (counted), never holds the tab.
"""
from __future__ import annotations

import collections
import threading
import time
from collections.abc import Callable, Iterable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol

Handler = Callable[[str, dict[str, Any]], None]


class Tab(Protocol):
    """What the log needs of its tab (a ``cdp.tab.Tab``, which builds its log as it starts)."""

    @property
    def closed(self) -> Exception | None: ...

    def on(self, method: str, handler: Handler) -> None: ...

    def when_closed(self, callback: Callable[[Exception], None]) -> Callable[[], None]: ...

    def send(self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None) -> Future: ...

MAX_URL = 8 * 1024
MAX_POST_DATA = 64 * 1024
MAX_HEADER_VALUE = 4 * 1024
MAX_HEADERS_TOTAL = 32 * 1024
MAX_TEXT = 2 * 1024          # status text, mime type, error text
MAX_INFLIGHT = 2000          # requests tracked as in flight (network-idle); a page cannot grow it further
BODY_BUDGET = 4 * 1024 * 1024  # retained bodies of one tab, all together (raised to one body's cap if larger)
SUBSCRIBER_QUEUE = 256


@dataclass(frozen=True, slots=True)
class NetworkOptions:
    """What the config says about capture (``server.networkBufferSize`` and the body settings)."""

    buffer_size: int = 100
    retain_bodies: bool = False
    body_max_bytes: int = 256 * 1024


def _cut(text: Any, limit: int) -> str:
    s = text if isinstance(text, str) else ("" if text is None else str(text))
    return s if len(s) <= limit else s[:limit]


def _headers(raw: Any) -> dict[str, str]:
    """Header names and values as strings, within MAX_HEADER_VALUE each and MAX_HEADERS_TOTAL in all."""
    out: dict[str, str] = {}
    left = MAX_HEADERS_TOTAL
    for name, value in (raw or {}).items() if isinstance(raw, dict) else ():
        key = _cut(name, 256)
        val = _cut(value, min(MAX_HEADER_VALUE, max(left - len(key), 0)))
        left -= len(key) + len(val)
        if left < 0:
            break
        out[key] = val
    return out


def _iso(epoch_s: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch_s)) + f".{int((epoch_s % 1) * 1000):03d}Z"


class Entry:
    """One request, as the API shows it (``to_dict``), with its body kept apart."""

    __slots__ = ("request_id", "url", "method", "resource_type", "request_headers", "post_data", "status",
                 "status_text", "response_headers", "mime_type", "remote_address", "protocol", "from_cache",
                 "size", "error", "finished", "failed", "started", "ended", "redirects", "frame_id",
                 "body", "body_base64", "body_state", "body_note", "body_truncated", "body_bytes", "seq")

    def __init__(self, request_id: str, seq: int) -> None:
        self.request_id = request_id
        self.seq = seq
        self.url = self.method = self.resource_type = self.post_data = ""
        self.request_headers: dict[str, str] = {}
        self.status = 0
        self.status_text = self.mime_type = self.remote_address = self.protocol = self.error = ""
        self.response_headers: dict[str, str] = {}
        self.from_cache = False
        self.size = 0
        self.finished = self.failed = False
        self.started = time.time()
        self.ended: float | None = None
        self.redirects: list[dict[str, Any]] = []
        self.frame_id = ""
        self.body: str | None = None
        self.body_base64 = False
        self.body_state = "none"  # none | pending | retained | skipped | error
        self.body_note = ""
        self.body_truncated = False
        self.body_bytes = 0

    @property
    def done(self) -> bool:
        return self.finished or self.failed

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "requestId": self.request_id, "url": self.url, "method": self.method,
            "status": self.status, "statusText": self.status_text, "resourceType": self.resource_type,
            "requestHeaders": dict(self.request_headers), "responseHeaders": dict(self.response_headers),
            "mimeType": self.mime_type, "startTime": _iso(self.started),
            "endTime": _iso(self.ended) if self.ended is not None else None,
            "duration": round((self.ended - self.started) * 1000, 1) if self.ended is not None else None,
            "size": self.size, "error": self.error, "finished": self.finished, "failed": self.failed,
        }
        if self.post_data:
            out["postData"] = self.post_data
        if self.redirects:
            out["redirects"] = [dict(r) for r in self.redirects]
        if self.from_cache:
            out["fromCache"] = True
        if self.remote_address:
            out["remoteAddress"] = self.remote_address
        return out

    def body_info(self) -> dict[str, Any]:
        """What became of the body: kept (and whether cut), still coming, or why not."""
        out: dict[str, Any] = {"bodyRetained": self.body_state == "retained"}
        if self.body_state == "retained":
            out.update(responseBody=self.body, base64Encoded=self.body_base64, bodyTruncated=self.body_truncated)
        elif self.body_state == "pending":
            out["bodyPending"] = True
        note = self.body_note
        if self.body_state == "none":
            note = "the request failed: it has no body" if self.failed else "the response has not finished loading"
        if note:
            out["bodyNote"] = note
        return out


class Subscription:
    """A stream's view of new finished entries: a bounded queue its reader drains."""

    def __init__(self) -> None:
        self._items: collections.deque[dict[str, Any]] = collections.deque(maxlen=SUBSCRIBER_QUEUE)
        self._ready = threading.Condition()
        self.dropped = 0
        self.closed = False

    def put(self, item: dict[str, Any]) -> None:
        with self._ready:
            if len(self._items) == SUBSCRIBER_QUEUE:
                self.dropped += 1
            self._items.append(item)
            self._ready.notify()

    def close(self) -> None:
        with self._ready:
            self.closed = True
            self._ready.notify_all()

    def take(self, timeout_s: float) -> tuple[list[dict[str, Any]], int]:
        """What arrived (waiting up to ``timeout_s`` for the first item; [] when none or closed),
        and how many were pushed out unread since the last take."""
        with self._ready:
            if not self._items and not self.closed:
                self._ready.wait(timeout_s)
            items, dropped = list(self._items), self.dropped
            self._items.clear()
            self.dropped = 0
            return items, dropped


class NetworkLog:
    """The network ring of one tab; its handlers run on the tab's worker."""

    def __init__(self, tab: Tab, options: NetworkOptions) -> None:
        self.tab = tab
        self.options = options
        self._lock = threading.Lock()
        self._body_changed = threading.Condition(self._lock)  # a response ended, a pending body arrived (or failed)
        self._entries: collections.OrderedDict[str, Entry] = collections.OrderedDict()
        self._inflight: set[str] = set()
        self._subs: list[Subscription] = []
        self._seq = 0
        self._body_total = 0
        self.last_activity = time.monotonic()  # when a request last started or ended (network-idle)
        self.dropped = 0  # entries pushed out of the ring
        for method, handler in (("Network.requestWillBeSent", self._on_request),
                                ("Network.responseReceived", self._on_response),
                                ("Network.requestServedFromCache", self._on_cached),
                                ("Network.loadingFinished", self._on_finished),
                                ("Network.loadingFailed", self._on_failed)):
            tab.on(method, handler)
        tab.when_closed(lambda _exc: self._close_subscribers())

    @staticmethod
    def setup_commands() -> list[tuple[str, dict[str, Any]]]:
        """What each session of the tab enables so capture starts before the first request."""
        return [("Network.enable", {})]

    # --- reading, from any thread ------------------------------------------------------------------
    def entries(self, match: Callable[[dict[str, Any]], bool] | None = None) -> list[dict[str, Any]]:
        """Every entry in the ring, oldest first, as the API shows it (those ``match`` keeps)."""
        with self._lock:
            items = [e.to_dict() for e in self._entries.values()]
        return [d for d in items if match is None or match(d)]

    def document_hops(self, frame_id: str) -> list[str]:
        """The URLs the frame's latest document request went through: where each redirect started,
        then where it landed ([] when the ring no longer holds it)."""
        with self._lock:
            for e in reversed(self._entries.values()):
                if e.resource_type == "Document" and e.frame_id == frame_id:
                    return [r["url"] for r in e.redirects] + [e.url]
        return []

    def get(self, request_id: str, *, body: bool = False,
            wait_s: float = 0.0) -> tuple[dict[str, Any], dict[str, Any]] | None:
        """An entry and, with ``body``, what became of its body; a body still on its way (its response
        still loading, or being kept) is waited for up to ``wait_s``. None when the ring does not hold
        the request."""
        with self._body_changed:
            if body:
                self._body_changed.wait_for(lambda: self._body_state(request_id) not in ("pending", "loading"),
                                            wait_s)
            e = self._entries.get(request_id)
            if e is None:
                return None
            return e.to_dict(), (e.body_info() if body else {})

    def _body_state(self, request_id: str) -> str:
        e = self._entries.get(request_id)
        if e is None:
            return "gone"
        if e.body_state == "none" and not e.finished and not e.failed:
            return "loading"
        return e.body_state

    def retained_body(self, request_id: str) -> tuple[str, bool] | None:
        """A kept body (text, base64?) for an export, None when none was kept."""
        with self._lock:
            e = self._entries.get(request_id)
            if e is None or e.body_state != "retained" or e.body is None:
                return None
            return e.body, e.body_base64

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._body_total = 0

    @property
    def inflight(self) -> int:
        with self._lock:
            return len(self._inflight)

    def idle_for(self) -> float:
        """Seconds since the tab last had a request in flight (0 while one is)."""
        with self._lock:
            return 0.0 if self._inflight else time.monotonic() - self.last_activity

    def subscribe(self) -> Subscription:
        sub = Subscription()
        with self._lock:
            self._subs.append(sub)
        if self.tab.closed is not None:
            sub.close()
        return sub

    def unsubscribe(self, sub: Subscription) -> None:
        with self._lock:
            if sub in self._subs:
                self._subs.remove(sub)
        sub.close()

    def _close_subscribers(self) -> None:
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            sub.close()

    # --- events, on the tab's worker --------------------------------------------------------------
    def _entry(self, request_id: str, create: bool = False) -> Entry | None:
        e = self._entries.get(request_id)
        if e is None and create:
            self._seq += 1
            e = self._entries[request_id] = Entry(request_id, self._seq)
            while len(self._entries) > self.options.buffer_size:
                _, old = self._entries.popitem(last=False)
                self._body_total -= old.body_bytes
                self.dropped += 1
        return e

    def _on_request(self, _sid: str, p: dict[str, Any]) -> None:
        rid = p.get("requestId")
        req = p.get("request") or {}
        if not rid:
            return
        with self._lock:
            e = self._entries.get(rid)
            if e is not None and p.get("redirectResponse"):  # the same request, sent on to a new URL
                redirect = p["redirectResponse"]
                if len(e.redirects) < 20:
                    e.redirects.append({"url": e.url, "status": redirect.get("status", 0)})
            else:
                e = self._entry(rid, create=True)
            assert e is not None
            e.url = _cut(req.get("url", "") + req.get("urlFragment", ""), MAX_URL)
            e.method = _cut(req.get("method", ""), 32)
            e.resource_type = _cut(p.get("type", "Other"), 64)
            e.request_headers = _headers(req.get("headers"))
            e.post_data = _cut(req.get("postData", ""), MAX_POST_DATA)
            e.frame_id = p.get("frameId", "")
            e.finished = e.failed = False
            if len(self._inflight) < MAX_INFLIGHT:
                self._inflight.add(rid)
            self.last_activity = time.monotonic()

    def _on_response(self, _sid: str, p: dict[str, Any]) -> None:
        resp = p.get("response") or {}
        with self._lock:
            e = self._entry(p.get("requestId", ""))
            if e is None:
                return
            e.status = int(resp.get("status") or 0)
            e.status_text = _cut(resp.get("statusText", ""), MAX_TEXT)
            e.mime_type = _cut(resp.get("mimeType", ""), MAX_TEXT)
            e.response_headers = _headers(resp.get("headers"))
            e.remote_address = _cut(f"{resp.get('remoteIPAddress', '')}:{resp.get('remotePort', '')}"
                                    if resp.get("remoteIPAddress") else "", 64)
            e.protocol = _cut(resp.get("protocol", ""), 32)
            e.from_cache = e.from_cache or bool(resp.get("fromDiskCache") or resp.get("fromMemoryCache"))
            e.size = int(resp.get("encodedDataLength") or 0)
            if p.get("type"):
                e.resource_type = _cut(p["type"], 64)

    def _on_cached(self, _sid: str, p: dict[str, Any]) -> None:
        with self._lock:
            e = self._entry(p.get("requestId", ""))
            if e is not None:
                e.from_cache = True

    def _on_finished(self, session_id: str, p: dict[str, Any]) -> None:
        rid = p.get("requestId", "")
        with self._lock:
            e = self._end(rid)
            if e is None:
                return
            e.finished = True
            if p.get("encodedDataLength"):
                e.size = int(p["encodedDataLength"])
            if not self.options.retain_bodies:
                e.body_state, e.body_note = "skipped", "bodies are not retained (server.retainNetworkBodies)"
            elif self._body_total >= max(BODY_BUDGET, self.options.body_max_bytes):
                e.body_state, e.body_note = "skipped", "the tab's body retention budget is spent"
            else:
                e.body_state = "pending"
            done = e.to_dict()
            pending = e.body_state == "pending"
            self._body_changed.notify_all()  # a reader waiting for the response to end (same lock)
        if pending:
            fut = self.tab.send("Network.getResponseBody", {"requestId": rid}, session_id)
            fut.add_done_callback(lambda f: self._keep_body(rid, f))
        self._publish(done)

    def _on_failed(self, _sid: str, p: dict[str, Any]) -> None:
        with self._lock:
            e = self._end(p.get("requestId", ""))
            if e is None:
                return
            e.failed = True
            e.error = _cut(p.get("errorText", "") or ("canceled" if p.get("canceled") else "failed"), MAX_TEXT)
            if p.get("blockedReason"):
                e.error = _cut(f"{e.error} ({p['blockedReason']})", MAX_TEXT)
            e.body_state = "none"
            done = e.to_dict()
            self._body_changed.notify_all()
        self._publish(done)

    def _end(self, request_id: str) -> Entry | None:
        """Called with the lock held: the request is no longer in flight."""
        self._inflight.discard(request_id)
        self.last_activity = time.monotonic()
        e = self._entries.get(request_id)
        if e is not None:
            e.ended = time.time()
        return e

    def _keep_body(self, request_id: str, fut: Future) -> None:
        """On the connection's reader thread: store (or explain) a body Chrome handed back."""
        try:
            res = fut.result()
            err = ""
        except Exception as exc:  # evicted by Chrome, a redirect without a body, the tab gone
            res, err = {}, str(exc) or type(exc).__name__
        with self._body_changed:
            self._body_changed.notify_all()
            e = self._entries.get(request_id)
            if e is None or e.body_state != "pending":
                return
            if err:
                e.body_state, e.body_note = "error", _cut(err, MAX_TEXT)
                return
            body = res.get("body", "")
            b64 = bool(res.get("base64Encoded"))
            # The cap is in bytes of the body: base64 holds 3 bytes in every 4 characters.
            limit = self.options.body_max_bytes
            limit_chars = (limit // 3) * 4 if b64 else limit
            truncated = len(body) > limit_chars
            if truncated:
                body = body[:limit_chars]
            e.body, e.body_base64, e.body_truncated = body, b64, truncated
            e.body_bytes = len(body)
            e.body_state = "retained"
            if truncated:
                e.body_note = f"cut at {limit} bytes (server.retainNetworkBodyMaxBytes)"
            self._body_total += e.body_bytes

    def _publish(self, entry: dict[str, Any]) -> None:
        with self._lock:
            subs = list(self._subs)
        for sub in subs:
            sub.put(entry)


def broken(entries: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The responses of 400 and above and the failed loads, in the original's short shape."""
    out = []
    for e in entries:
        if e["failed"] or e["status"] >= 400:
            item: dict[str, Any] = {"url": e["url"], "resourceType": e["resourceType"].lower(),
                                    "statusCode": e["status"]}
            if e["error"]:
                item["error"] = e["error"]
            out.append(item)
    return out
