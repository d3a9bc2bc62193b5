"""The tab's network: its captured requests (GET /network, /network/{requestId}, the streams, the
HAR and NDJSON exports, POST /network/clear) and request interception (GET|POST|DELETE /network/route).

Capture runs from each tab's creation (cdp/network.py); these routes read its ring from the request
thread, so a busy tab still answers. Interception is off unless ``security.allowNetworkIntercept``;
its rules live on the tab (cdp/intercept.py) and change on the tab's worker.

The streams hold a request thread each, so they share the bridge's cap on long-lived connections
(``debug.maxConnections``: 503 past it), last at most MAX_STREAM_S, and end within a second of a
shutdown or of their tab closing.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Flask, Response, current_app
from flask.blueprints import BlueprintSetupState

from cdp import intercept
from cdp.errors import CDPError, CDPTimeout
from cdp.network import broken
from cdp.tab import Tab

from ...sockets import limiter
from ...web import files
from ...web.errors import BadRequest, NotFound, disabled
from ...web.openapi import TEXT, Blueprint, ErrorSchema, tab_route
from .. import har
from ..contract import OneOf, TabQuerySchema
from .common import before_reading, on_tab, state, tab
from .network_contract import (
    HarResponse,
    NetworkClearedResponse,
    NetworkClearQuerySchema,
    NetworkDetailQuerySchema,
    NetworkDetailResponse,
    NetworkExportQuerySchema,
    NetworkExportStreamQuerySchema,
    NetworkFilterSchema,
    NetworkQuerySchema,
    NetworkResponse,
    RouteSchema,
    RoutesResponse,
    SavedExportResponse,
    UnrouteQuerySchema,
)

bp = Blueprint("network", __name__)

HEARTBEAT_S = 15.0
MAX_STREAM_S = 30 * 60.0
SHUTDOWN_CHECK_S = 0.5  # a stream notices a shutdown (or its tab closing) within this
# fetch() and XMLHttpRequest are one kind to a caller: the original's clients ask type=xhr for both.
SCRIPT_REQUESTS = frozenset({"xhr", "fetch"})
MAX_EXPORT_BODY = 10 * 1024 * 1024
MAX_STREAM_ENTRIES = 10_000  # a streamed export ends (and is written) at this many entries
_STOPPING = "pinchtab.network_streams_stopping"


@bp.record_once
def _end_streams_on_shutdown(setup: BlueprintSetupState) -> None:
    app: Flask = setup.app
    stopping = app.extensions[_STOPPING] = threading.Event()
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(stopping.set)


# --- export formats (what the routes take and answer: network_contract.py) ---------------------------
def _export_format(name: str) -> str:
    """``name`` as a known export format (any case); raises 400 ``unknown_format`` listing them."""
    fmt = name.strip().lower()
    if fmt not in har.FORMATS:
        raise BadRequest(f"unknown export format {name[:40]!r}; available: {', '.join(har.FORMATS)}",
                         code="unknown_format", details={"field": "format"}, available=list(har.FORMATS))
    return fmt


# --- capture ---------------------------------------------------------------------------------------
def _matcher(req: dict[str, Any]) -> Callable[[dict[str, Any]], bool]:
    url_part, method, rtype = req["filter"], req["method"].upper(), req["type"].lower()
    types = SCRIPT_REQUESTS if rtype in SCRIPT_REQUESTS else {rtype}
    status = req["status"]
    if status.endswith("xx"):
        low, high = int(status[0]) * 100, int(status[0]) * 100 + 99
    elif "-" in status:
        low, high = (int(x) for x in status.split("-"))
    elif status:
        low = high = int(status)

    def keep(e: dict[str, Any]) -> bool:
        return ((not url_part or url_part in e["url"]) and (not method or e["method"].upper() == method)
                and (not rtype or e["resourceType"].lower() in types)
                and (not status or low <= e["status"] <= high))
    return keep


def _limited(entries: list[dict[str, Any]], limit: int) -> list[dict[str, Any]]:
    return entries[-limit:] if limit else entries


@tab_route(bp, "/network", methods=["GET"])
@bp.arguments(NetworkQuerySchema, location="query")
@bp.response(200, NetworkResponse)
def network(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The tab's requests since it opened (the last server.networkBufferSize), oldest first."""
    target = tab(req.get("tabId"))
    entries = _limited(target.network.entries(_matcher(req)), req["limit"])
    if req["broken"]:
        found = broken(entries)
        return {"broken": found, "count": len(found), "tabId": target.id}
    return {"entries": entries, "items": entries, "count": len(entries), "tabId": target.id}


@tab_route(bp, "/network/<request_id>", methods=["GET"])
@bp.arguments(NetworkDetailQuerySchema, location="query")
@bp.response(200, NetworkDetailResponse)
def network_entry(req: dict[str, Any], request_id: str, tab_id: str | None) -> dict[str, Any]:
    """One request in full; with body=true, its response body when server.retainNetworkBodies keeps them
    (one still being kept is waited for, up to timeoutMs)."""
    target = tab(req.get("tabId"))
    found = target.network.get(request_id, body=req["body"], wait_s=req["timeoutMs"] / 1000)
    if found is None:
        raise NotFound(f"request {request_id} not found in tab {target.id}'s network log",
                       code="request_not_found")
    entry, body = found
    if body.get("bodyRetained"):
        body["bodySource"] = "retained"
    return {"entry": entry, "tabId": target.id, **body}


@bp.post("/network/clear")
@bp.arguments(NetworkClearQuerySchema, location="query")
@bp.response(200, NetworkClearedResponse)
def network_clear(req: dict[str, Any]) -> dict[str, Any]:
    """Forget the captured requests of one tab (tabId), or of every tab."""
    if req.get("tabId"):
        target = tab(req["tabId"])
        target.network.clear()
        return {"cleared": True, "tabId": target.id}
    for t in state().ensure().attached_tabs():
        t.network.clear()
    return {"cleared": True, "all": True}


# --- streams ------------------------------------------------------------------------------------------
def _sse(event: str, data: Any) -> str:
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


def _stream(target: Tab, keep: Callable[[dict[str, Any]], bool],
            on_entry: Callable[[dict[str, Any]], Iterator[str]], on_end: Callable[[str], Iterator[str]]) -> Response:
    """A text/event-stream of the tab's newly finished requests that ``keep`` keeps, under the
    connection cap; ``on_end(reason)`` says the last words (shutdown, tab_closed, max_duration)."""
    stopping: threading.Event = current_app.extensions[_STOPPING]
    hold = limiter.current().acquire()
    sub = target.network.subscribe()

    def events() -> Iterator[str]:
        yield ": stream open\n\n"
        deadline = time.monotonic() + MAX_STREAM_S
        heartbeat = time.monotonic() + HEARTBEAT_S
        reason = "max_duration"
        while time.monotonic() < deadline:
            if stopping.is_set():
                reason = "shutdown"
                break
            items, dropped = sub.take(SHUTDOWN_CHECK_S)
            if dropped:  # a reader slower than the page: say how many it missed, then go on
                yield _sse("dropped", {"count": dropped})
            for item in items:
                if keep(item):
                    yield from on_entry(item)
            if sub.closed and not items:
                reason = "tab_closed"
                break
            if time.monotonic() >= heartbeat:
                yield ": heartbeat\n\n"
                heartbeat = time.monotonic() + HEARTBEAT_S
        yield from on_end(reason)

    def release() -> None:
        target.network.unsubscribe(sub)
        hold.release()

    resp = Response(events(), mimetype="text/event-stream",
                    headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    resp.call_on_close(release)  # runs whether or not the stream was ever read
    return resp


@tab_route(bp, "/network/stream", methods=["GET"])
@bp.arguments(NetworkFilterSchema, location="query")
@bp.response(200, TEXT, content_type="text/event-stream",
             description="event: network, data: one finished request (as in GET /network), per request; "
                         "event: dropped, data: {count} when a slow reader missed some; "
                         "event: end, data: {reason} when the stream ends")
def network_stream(req: dict[str, Any], tab_id: str | None) -> Response:
    """The tab's requests as they finish, as Server-Sent Events."""
    target = tab(req.get("tabId"))
    return _stream(target, _matcher(req), lambda e: iter([_sse("network", e)]),
                   lambda reason: iter([_sse("end", {"reason": reason})]))


# --- HAR export --------------------------------------------------------------------------------------
def _bodies(t: Tab, entries: list[dict[str, Any]]) -> dict[str, tuple[str, bool]]:
    """On the worker: the bodies of finished requests, kept ones first, else asked of Chrome
    (all asked at once, each answer waited within the job's deadline); too large ones left out."""
    out: dict[str, tuple[str, bool]] = {}
    asked = []
    for e in entries:
        if not e["finished"] or e["failed"]:
            continue
        kept = t.network.retained_body(e["requestId"])
        if kept is not None:
            out[e["requestId"]] = kept
        else:
            asked.append((e["requestId"], t.send("Network.getResponseBody", {"requestId": e["requestId"]})))
    for rid, fut in asked:
        try:
            res = t.wait_result(fut, "Network.getResponseBody")
        except CDPError:
            continue  # Chrome no longer holds it: the entry goes without its body
        except CDPTimeout:
            break  # the job's time is up: the export goes out with the bodies it has
        if len(res.get("body", "")) <= MAX_EXPORT_BODY:
            out[rid] = (res.get("body", ""), bool(res.get("base64Encoded")))
    return out


def _har_entries(target: Tab, entries: list[dict[str, Any]], *, with_bodies: bool,
                 redact: bool) -> list[dict[str, Any]]:
    bodies = on_tab(target, lambda t: _bodies(t, entries)) if with_bodies and entries else {}
    return [har.entry(e, redact=redact, body=bodies.get(e["requestId"])) for e in entries]


@tab_route(bp, "/network/export", methods=["GET"])
@bp.arguments(NetworkExportQuerySchema, location="query")
@bp.alt_response(200, content_type="application/x-ndjson", schema=TEXT,
                 description="format=ndjson: one HAR entry a line")
@bp.response(200, OneOf(HarResponse, SavedExportResponse),
             description="HAR 1.2 ({log: {version, creator, pages, entries}}), or where it was written (output=file)")
def network_export(req: dict[str, Any], tab_id: str | None) -> Response | dict[str, Any]:
    """The tab's captured requests as a HAR 1.2 document or as NDJSON (format=ndjson: one HAR entry a
    line), credentials redacted unless redact=false; with output=file, written to the state dir."""
    fmt = _export_format(req["format"])
    target = tab(req.get("tabId"))
    state_dir = state().config.server.state_dir
    ctype, ext = har.FORMATS[fmt]
    target_file = (files.output_file(state_dir, req["path"], f"exports/network-{files.stamp()}{ext}")
                   if req["output"] == "file" else None)
    entries = _limited(target.network.entries(_matcher(req)), req["limit"])
    converted = _har_entries(target, entries, with_bodies=req["body"], redact=req["redact"])
    if fmt == "ndjson":
        data = har.ndjson(converted).encode()
        if target_file is None:
            return Response(data, content_type=ctype)
    else:
        doc = har.document(converted)
        if target_file is None:
            return doc
        data = json.dumps(doc, ensure_ascii=False).encode()
    size = files.write_atomic(target_file, data, what=f"the {fmt.upper()} export")
    return {**files.saved(target_file, size, fmt), "entries": len(entries)}


@tab_route(bp, "/network/export/stream", methods=["GET"])
@bp.arguments(NetworkExportStreamQuerySchema, location="query")
@bp.response(200, TEXT, content_type="text/event-stream",
             description="event: export, data: {entries, url} per request written; then event: done, data: "
                         "{entries, path?, reason} once the HAR file is written (when it holds any entry)")
def network_export_stream(req: dict[str, Any], tab_id: str | None) -> Response:
    """Record the tab's requests as they finish into a HAR (or NDJSON) file, reporting each as a
    Server-Sent Event."""
    fmt = _export_format(req["format"])
    target = tab(req.get("tabId"))
    path = files.output_file(state().config.server.state_dir, req["path"], f"exports/network{har.FORMATS[fmt][1]}")
    collected: list[dict[str, Any]] = []
    keep = _matcher(req)
    what = f"the {fmt.upper()} export"

    def on_entry(e: dict[str, Any]) -> Iterator[str]:
        if len(collected) >= MAX_STREAM_ENTRIES:
            return
        body = target.network.retained_body(e["requestId"]) if req["body"] else None
        collected.append(har.entry(e, redact=req["redact"], body=body))
        yield _sse("export", {"entries": len(collected), "url": e["url"][:120]})

    def on_end(reason: str) -> Iterator[str]:
        done: dict[str, Any] = {"entries": len(collected), "reason": reason}
        if collected:
            text = har.ndjson(collected) if fmt == "ndjson" else json.dumps(har.document(collected),
                                                                               ensure_ascii=False)
            try:
                files.write_atomic(path, text.encode(), what=what)
                done["path"] = str(path)
            except OSError as exc:
                done["error"] = f"could not write {what}: {exc.strerror or exc}"
        yield _sse("done", done)

    return _stream(target, keep, on_entry, on_end)


# --- interception -----------------------------------------------------------------------------------
def _intercept_enabled() -> None:
    if not state().config.security.allow_network_intercept:
        raise disabled("network_intercept", "security.allowNetworkIntercept")


def _routes_answer(target: Tab, **extra: Any) -> dict[str, Any]:
    return {**extra, "tabId": target.id, "rules": [r.to_dict() for r in target.intercept.rules]}


_GATE = {"description": "interception is off unless security.allowNetworkIntercept is set"}


@tab_route(bp, "/network/route", methods=["GET"])
@before_reading(_intercept_enabled)
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, RoutesResponse)
@bp.alt_response(403, schema=ErrorSchema, **_GATE)
def routes_list(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The tab's interception rules, in the order they are tried."""
    return _routes_answer(tab(req.get("tabId")))


@tab_route(bp, "/network/route", methods=["POST"])
@before_reading(_intercept_enabled)
@bp.arguments(TabQuerySchema, location="query")
@bp.arguments(RouteSchema)
@bp.response(200, RoutesResponse)
@bp.alt_response(403, schema=ErrorSchema, **_GATE)
def route_add(query: dict[str, Any], req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Install a rule (replacing the rule of the same pattern): continue (with headers), abort or fulfill."""
    target = tab(req.get("tabId") or query.get("tabId"))
    try:
        rule = intercept.Rule.build(req["pattern"], req["action"], body=req["body"],
                                    content_type=req["contentType"], status=req["status"],
                                    resource_type=req["resourceType"], method=req["method"],
                                    headers=req["headers"])
        on_tab(target, lambda t: t.intercept.add(rule))
    except intercept.RuleError as exc:
        raise BadRequest(str(exc), code="bad_route", details={"field": exc.field}) from None
    return _routes_answer(target, ok=True)


@tab_route(bp, "/network/route", methods=["DELETE"])
@before_reading(_intercept_enabled)
@bp.arguments(UnrouteQuerySchema, location="query")
@bp.arguments(UnrouteQuerySchema, location="json", required=False)
@bp.response(200, RoutesResponse)
@bp.alt_response(403, schema=ErrorSchema, **_GATE)
def route_remove(query: dict[str, Any], body: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Remove the rules of a pattern, or every rule of the tab (404 when it has none). ``pattern``
    and ``tabId`` may come in the query or, as the original's clients send them, in a JSON body."""
    target = tab(query.get("tabId") or body.get("tabId"))
    if not target.intercept.routed:
        raise NotFound(f"tab {target.id} has no interception rules", code="not_routed")
    pattern = query["pattern"] or body.get("pattern") or None
    removed = on_tab(target, lambda t: t.intercept.remove(pattern))
    return _routes_answer(target, ok=True, removed=removed)

