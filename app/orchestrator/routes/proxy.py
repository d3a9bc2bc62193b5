"""The browser API in server mode: every bridge route, forwarded to the instance that owns it.

The routes are read from the bridge app's own url_map (:func:`build_blueprint`, given the bridge
app that ``app.serving.apps`` builds), less the server's own (:data:`NOT_FORWARDED`),
so a route added to the bridge is served here with no change. Shorthand routes go to the default
instance (or to the owner of a ``tabId`` they name); ``/tabs/{id}/...`` goes to the instance that
has the tab. Large bodies stream both ways without being held whole (screenshots, PDFs, SSE);
small ones are read whole, a request's to find its ``tabId``, an answer's to send it in one piece.
The caller's credentials never reach a child: the instance gets its own token, and an agent
session's agent as ``X-Agent-Id`` (``app.orchestrator.upstream``).
"""
from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Iterator, Mapping
from typing import Any

import urllib3
from apispec import APISpec
from flask import Blueprint, Flask, Response, g, request
from werkzeug.datastructures import Headers
from werkzeug.routing import Rule

from ...web import untrusted_json
from ...web.errors import NotFound, Unavailable
from ...web.openapi import openapi_path
from ..state import server_state
from ..upstream import HOP_BY_HOP

log = logging.getLogger(__name__)

# The server's own, never forwarded: its health, document and shutdown, and its agent sessions
# (an instance's would not open the server).
NOT_FORWARDED = frozenset({"/health", "/openapi.json", "/help", "/shutdown", "/sessions", "/sessions/me",
                           "/sessions/<session_id>", "/sessions/<session_id>/revoke"})
# gunicorn writes its own Date and Server: copies would make duplicate headers.
DROP_RESPONSE = HOP_BY_HOP | {"date", "server"}
# How long a request waits for an instance that is starting or restarting: a launch takes seconds, and
# on a busy host more than ten; an agent is better served by a late answer than by a retry loop.
START_WAIT_S = 30.0
RETRY_AFTER_S = 2
STREAM_CHUNK = 64 * 1024
BUFFER_BODY_MAX = 1024 * 1024  # request bodies up to this are read whole (so a tabId can be found)
PEEK_BODY_MAX = 64 * 1024


def browser_rules(bridge: Flask) -> list[Rule]:
    """Every rule the bridge app serves that we forward."""
    return [rule for rule in bridge.url_map.iter_rules()
            if rule.endpoint != "static" and rule.rule not in NOT_FORWARDED]


def build_blueprint(bridge: Flask, views: Mapping[str, Callable[..., Any]] | None = None) -> Blueprint:
    """One forwarding view per bridge route; ``views`` replaces it for some bridge endpoints (routes
    that need more than forwarding, keeping the bridge's path, methods and documentation).
    WebSocket routes are left out: they cannot be forwarded as HTTP requests."""
    bp = Blueprint("proxy", __name__)
    for rule in browser_rules(bridge):
        if rule.websocket:
            continue
        bp.add_url_rule(rule.rule, endpoint=rule.endpoint.replace(".", "_"),
                        view_func=(views or {}).get(rule.endpoint, _forward_view),
                        methods=sorted(set(rule.methods or ()) - {"HEAD", "OPTIONS"}), defaults=rule.defaults)
    return bp


def _forward_view(**kwargs: Any) -> Response:
    return forward(kwargs.get("tab_id"))


def document(spec: APISpec, bridge: Flask, server: Flask) -> None:
    """Document the forwarded routes in the server's spec as the bridge documents them."""
    bridge_doc = bridge.extensions["flask-smorest"]["apis"][""]["ext_obj"].document().to_dict()
    for name, schema in bridge_doc["components"].get("schemas", {}).items():
        if name not in spec.components.schemas:
            spec.components.schema(name, component=schema)
    for rule in server.url_map.iter_rules():
        if not rule.endpoint.startswith("proxy."):
            continue
        item = bridge_doc["paths"].get(openapi_path(rule.rule), {})
        ops = {m: op for m, op in item.items() if m in {x.lower() for x in rule.methods or ()}}
        if ops:
            spec.path(rule=rule, operations=copy.deepcopy(ops))


def forward(tab_id: str | None) -> Response:
    """Send the current request to its instance and relay the answer."""
    st = server_state()
    body = request_body()
    if tab_id is not None:
        instance = st.locator.locate(tab_id)
        if instance is None:
            raise NotFound(f"tab {tab_id} not found in any instance", code="tab_not_found")
    else:
        hinted = request.args.get("tabId") or peek_tab_id(body)
        instance = (st.locator.locate(hinted) if hinted else None) or default_instance()
    record, token = ready(instance)
    upstream = st.upstream.send(request, record, token, body)
    tab = upstream.headers.get("X-PinchTab-Tab-Id")
    if tab:
        st.locator.remember(tab, record["id"])
    return relay(upstream, record["id"])


def let_go(instance_id: str) -> None:
    """Before an instance stops: our connections to it close (its bridge would wait 2 s on them).
    The worker's mirror knows where it runs: no call to the manager."""
    st = server_state()
    found = st.mirror.get(instance_id)
    if found is not None and found[0].get("url"):
        st.upstream.close_connections(found[0]["url"])


def default_instance() -> str:
    """Where a shorthand route goes; 503 ``no_instance`` when nothing runs."""
    st = server_state()
    st.mirror.ensure_loaded()
    instance = st.mirror.default_target(st.config.multi_instance.allocation_policy)
    if instance is None:
        raise Unavailable("no instance is running: POST /instances/start to launch one", code="no_instance")
    return instance


def ready(instance: str) -> tuple[dict[str, Any], str]:
    """(record, token) of a running instance; waits a little for one that is starting."""
    mirror = server_state().mirror
    found = mirror.get(instance)
    if found is None or found[0]["status"] != "running":
        mirror.wait_settled(instance, START_WAIT_S)
        found = mirror.get(instance)
    if found is None:
        raise Unavailable(f"instance {instance} is gone", code="instance_unavailable")
    record, token = found
    status = record["status"]
    if status == "running":
        return record, token
    g.retry_after_s = RETRY_AFTER_S
    if status == "starting" or (status == "error" and mirror.restarting(instance)):
        raise Unavailable(f"instance {instance} is starting; retry shortly", code="instance_starting",
                          details={"instanceId": instance, "status": status})
    # A lost instance's provider stopped answering: say so, so an agent knows to restart it.
    raise Unavailable(f"instance {instance} is {status}" + (f": {record['error']}" if record.get("error") else ""),
                      code="instance_lost" if status == "lost" else "instance_unavailable",
                      details={"instanceId": instance, "status": status})


def request_body() -> Any:
    """The body to forward: bytes when small (or absent), the input stream when large or chunked."""
    length = request.content_length
    if length is not None and length <= BUFFER_BODY_MAX:
        return request.get_data(cache=True) if length else None
    if length is None and request.headers.get("Transfer-Encoding", "").lower() != "chunked":
        return None
    return request.stream


def peek_tab_id(body: Any) -> str | None:
    """The ``tabId`` of a small JSON body, so ``POST /navigate {"tabId"}`` reaches that tab's instance."""
    if not isinstance(body, bytes) or len(body) > PEEK_BODY_MAX or not body.lstrip().startswith(b"{"):
        return None
    try:
        tab = untrusted_json.loads(body).get("tabId")
    except (ValueError, AttributeError):
        return None
    return tab if isinstance(tab, str) and tab else None


WHOLE_BELOW = 256 * 1024  # answers up to this size are relayed whole, larger ones streamed


def relay(upstream: urllib3.BaseHTTPResponse, instance: str) -> Response:
    """The instance's answer as ours: status, headers (minus hop-by-hop) and the body, streamed."""
    headers = Headers([(k, v) for k, v in upstream.headers.items() if k.lower() not in DROP_RESPONSE])
    headers["X-PinchTab-Instance-Id"] = instance
    has_type = "Content-Type" in headers

    def body() -> Iterator[bytes]:
        try:
            # decode_content=False: the bytes as sent, so Content-Length and Content-Encoding stay true.
            yield from upstream.stream(STREAM_CHUNK, decode_content=False)
        except Exception as exc:  # the instance died mid-answer: the caller sees a short body
            log.warning("instance %s: answer broke off: %s", instance, exc)
        finally:
            upstream.close()

    length = upstream.headers.get("Content-Length", "")
    if length.isdigit() and int(length) <= WHOLE_BELOW and "event-stream" not in headers.get("Content-Type", ""):
        # A small answer (most are: JSON, compact snapshots) goes out in one piece: streaming it
        # chunk by chunk through a generator costs more than the copy.
        try:
            data = upstream.read(decode_content=False)
        finally:
            upstream.release_conn()  # read to the end: the connection goes back to the pool
        resp = Response(data, status=upstream.status, headers=headers)
    else:
        resp = Response(body(), status=upstream.status, headers=headers, direct_passthrough=True)
    if not has_type:
        del resp.headers["Content-Type"]  # Flask's default would claim text/html
    resp.call_on_close(upstream.release_conn)
    return resp
