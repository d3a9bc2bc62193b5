"""Debug sessions in server mode: each session lives in one instance, and the server routes to it.

``POST /debug/sessions`` creates the session in an instance (``instanceId``, else the default one)
and answers with URLs on the server's own host; the server remembers which instance holds each
session it has seen (and, for one it has not, asks every running instance once). Commands, session
reads and ends, and ``GET /events`` go to the holder; ``GET /debug/sessions`` is the union over the
running instances. ``/debug/sdk.js`` is served here (it is static and public).

The WebSocket ``/debug`` is relayed: before the upgrade the server checks what it can (role,
Origin, the token for agents, the cap on long-lived connections), then opens the same WebSocket to
the instance with the instance's own token, so the instance's refusals (unknown session, Origin,
its own cap) become the caller's HTTP answers before anything is upgraded. Then frames are pumped
both ways and close codes pass through in both directions (``app.sockets.upstream``, the relay the
screencast's WebSocket uses too). The WebSockets and event streams relayed here hold a place under
the server's one cap (``app.sockets.limiter``).
"""
from __future__ import annotations

import json
import logging
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import urllib3
from flask import Blueprint, Flask, Response, current_app, jsonify, request
from flask_sock import Sock
from marshmallow import EXCLUDE
from werkzeug.wsgi import ClosingIterator

from ...config import Config
from ...debug import admission as debug_admission
from ...debug import routes as debug_routes
from ...debug import sockets as debug_sockets
from ...sockets import limiter, served
from ...sockets import upstream as ws_relay
from ...web import untrusted_json
from ...web.errors import APIError, Conflict, NotFound
from ..mirror import InstanceMirror
from ..state import server_state
from ..upstream import Upstream
from . import proxy

log = logging.getLogger(__name__)

SURVEY_TIMEOUT_S = 5.0      # one instance's GET /debug/sessions
WATCH_WAKE_S = 5.0          # an event stream's watch on its caller looks up at least this often

bp = Blueprint("debug_relay", __name__)
sock = Sock()


# --- where sessions live ------------------------------------------------------------------------------
class SessionOwners:
    """Which instance holds each debug session: remembered from answers and, on a miss, from every
    running instance's ``GET /debug/sessions``."""

    def __init__(self, mirror: InstanceMirror, upstream: Upstream) -> None:
        self.mirror = mirror
        self.upstream = upstream
        self._owner: dict[str, str] = {}
        self._lock = threading.Lock()
        self._survey_lock = threading.Lock()
        self._last_survey_started = 0.0
        self._last: list[dict[str, Any]] = []
        self._pool: ThreadPoolExecutor | None = None

    def remember(self, session_id: str, instance: str) -> None:
        with self._lock:
            self._owner[session_id] = instance

    def forget(self, session_id: str) -> None:
        with self._lock:
            self._owner.pop(session_id, None)

    def forget_instances(self, instances: set[str]) -> None:
        """An instance stopped or restarted: its sessions ended with it."""
        with self._lock:
            self._owner = {s: i for s, i in self._owner.items() if i not in instances}

    def known(self, session_id: str) -> str | None:
        """The remembered holder, without asking anyone."""
        with self._lock:
            return self._owner.get(session_id)

    def owner(self, session_id: str) -> str | None:
        """The id of the instance holding the session, or None when no running instance has it."""
        instance = self.known(session_id)
        if instance is not None and self.mirror.get(instance) is not None:
            return instance
        self.survey()
        return self.known(session_id)

    def survey(self) -> list[dict[str, Any]]:
        """Every running instance's sessions, each with its ``instanceId``; the holders are
        remembered. Callers that arrive during a survey wait for it and share its answer (an
        unknown id, which anyone may try on ``/debug``, costs one round at a time, not one each)."""
        asked = time.monotonic()
        with self._survey_lock:
            if self._last_survey_started >= asked:
                return list(self._last)
            self._last_survey_started = time.monotonic()
            self.mirror.ensure_loaded()
            running = [r for r in self.mirror.records() if r["status"] == "running"]
            pairs = [(r, found[1]) for r in running if (found := self.mirror.get(r["id"])) is not None]
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="debug-survey")
            # Each call is bounded by its own connect and read timeouts.
            answers = list(self._pool.map(lambda p: (p[0]["id"], self._sessions_of(*p)), pairs))
            sessions = [{**s, "instanceId": iid} for iid, found in answers if found is not None for s in found]
            with self._lock:
                asked_ids = {iid for iid, found in answers if found is not None}
                self._owner = {s: i for s, i in self._owner.items() if i not in asked_ids}
                for s in sessions:
                    self._owner[s["sessionId"]] = s["instanceId"]
            self._last = sessions
            return list(sessions)

    def _sessions_of(self, record: dict[str, Any], token: str) -> list[dict[str, Any]] | None:
        try:
            status, data = self.upstream.call(record, token, "GET", "/debug/sessions", timeout_s=SURVEY_TIMEOUT_S)
        except APIError:
            return None
        if status != 200 or not isinstance(data, dict):
            log.warning("instance %s: GET /debug/sessions answered %s", record["id"], status)
            return None
        return [s for s in data.get("sessions", []) if isinstance(s, dict) and s.get("sessionId")]


@dataclass
class DebugState:
    owners: SessionOwners


def debug_state() -> DebugState:
    return current_app.extensions["pinchtab.server.debug"]


# --- HTTP ----------------------------------------------------------------------------------------------
def _send(instance: str, body: Any) -> tuple[dict[str, Any], urllib3.BaseHTTPResponse]:
    """Forward the current request to a running instance: (its record, its answer)."""
    record, token = proxy.ready(instance)
    return record, server_state().upstream.send(request, record, token, body)


def _read_json(upstream: urllib3.BaseHTTPResponse) -> Any:
    try:
        data = upstream.read()
    finally:
        upstream.release_conn()
    try:
        return json.loads(data)
    except ValueError:
        return {"error": data[:500].decode("utf-8", "replace"), "code": "bad_upstream_answer"}


def _answer(status: int, data: Any, instance: str) -> Response:
    resp = jsonify(data)
    resp.status_code = status
    resp.headers["X-PinchTab-Instance-Id"] = instance
    return resp


def _body_field(body: Any, name: str) -> str | None:
    if not isinstance(body, bytes) or not body.lstrip().startswith(b"{"):
        return None
    try:
        value = untrusted_json.loads(body).get(name)
    except (ValueError, AttributeError):
        return None
    return value if isinstance(value, str) and value else None


def _on_server_host(data: dict[str, Any], instance: str) -> dict[str, Any]:
    """A session answer whose URLs name the server (as its caller reached it), not the instance."""
    return {**data, **debug_routes.session_urls(data["sessionId"]), "instanceId": instance}


def create_session() -> Response:
    """``POST /debug/sessions[?instanceId=]``: a session in that instance (default: the default one)."""
    st = server_state()
    body = proxy.request_body()
    instance = request.args.get("instanceId") or _body_field(body, "instanceId")
    if instance is None:
        instance = proxy.default_instance()
    else:
        st.mirror.ensure_loaded()
        if st.mirror.get(instance) is None:
            raise NotFound(f"no instance {instance}", code="instance_not_found")
    record, upstream = _send(instance, body)
    data = _read_json(upstream)
    if upstream.status == 201 and isinstance(data, dict) and data.get("sessionId"):
        debug_state().owners.remember(data["sessionId"], record["id"])
        data = _on_server_host(data, record["id"])
    return _answer(upstream.status, data, record["id"])


def list_sessions() -> Response:
    """``GET /debug/sessions``: every running instance's sessions, each with its ``instanceId``;
    ``connections`` counts what the server itself relays."""
    return jsonify({"sessions": debug_state().owners.survey(), **limiter.current().describe()})


def _holder(session_id: str) -> str:
    instance = debug_state().owners.owner(session_id)
    if instance is None:
        raise NotFound("unknown debug session", code="session_not_found")
    return instance


def session_call(session_id: str) -> Response:
    """``GET|DELETE /debug/sessions/<id>`` and ``POST .../commands``: to the instance holding it."""
    record, upstream = _send(_holder(session_id), proxy.request_body())
    if upstream.status == 404 or (request.method == "DELETE" and upstream.status == 200):
        debug_state().owners.forget(session_id)   # ended here, or gone there (its tab closed)
    return proxy.relay(upstream, record["id"])


def events() -> Response:
    """``GET /events?sessionId=|tabId=``: the holder's event stream, relayed chunk by chunk."""
    st, dbg = server_state(), debug_state()
    req = debug_routes.EventsQuery(unknown=EXCLUDE).load(request.args.to_dict())   # the bridge's
    if req.get("sessionId"):
        instance = _holder(req["sessionId"])
    elif req.get("tabId"):
        found = st.locator.locate(req["tabId"])
        if found is None:
            raise NotFound(f"tab {req['tabId']} not found in any instance", code="tab_not_found")
        instance = found
    else:
        instance = proxy.default_instance()   # it answers what is missing
    hold = limiter.current().acquire()
    try:
        record, upstream = _send(instance, None)
    except BaseException:
        hold.release()
        raise
    if upstream.status != 200:              # a refusal, not a stream
        hold.release()
        if upstream.status == 404 and req.get("sessionId"):
            dbg.owners.forget(req["sessionId"])
        return proxy.relay(upstream, record["id"])

    # At shutdown, or when the caller leaves, the blocked read of the stream is cut from another
    # thread (urllib3's shutdown): the relay ends and its thread is free.
    def cut() -> None:
        try:
            upstream.shutdown()
        except (ValueError, RuntimeError, OSError):
            pass   # already closed or given back: nothing blocks on it

    hold.on_close(cut)
    done = threading.Event()
    _watch_caller(request.environ, cut, done)
    resp = proxy.relay(upstream, record["id"])

    def finished() -> None:
        done.set()
        hold.release()

    # Not call_on_close: a streamed (direct passthrough) body reaches the server as it is, and
    # only its own close() is called when the stream ends or the caller leaves.
    resp.response = ClosingIterator(resp.response, finished)
    return resp


def _watch_caller(environ: dict[str, Any], caller_left: Callable[[], None], done: threading.Event) -> None:
    """Call ``caller_left`` as soon as the caller of an event stream hangs up.

    An SSE caller sends nothing after its request, and the relay only writes when the instance
    does (a heartbeat every 15 s): without a look at the socket, a closed stream would hold its
    thread and its place under the cap until then. Readable with nothing to read is the hang-up.
    """
    raw = environ.get("gunicorn.socket") or environ.get("werkzeug.socket")
    if raw is None or isinstance(raw, ssl.SSLSocket):   # TLS cannot peek; the heartbeat finds out
        return

    def watch_loop() -> None:
        with selectors.DefaultSelector() as sel:
            try:
                sel.register(raw, selectors.EVENT_READ)
                while not done.is_set():
                    if not sel.select(WATCH_WAKE_S):
                        continue
                    if raw.recv(1, socket.MSG_PEEK) != b"":
                        return       # the caller sent something after all: not a hang-up
                    break
            except (OSError, ValueError):
                if done.is_set():
                    return
        if not done.is_set():
            caller_left()

    threading.Thread(target=watch_loop, name="debug-events-watch", daemon=True).start()


def attach_tab(tab_id: str) -> Response:
    """``POST /tabs/<id>/debug``: to the tab's instance; the session it joins is remembered there."""
    st, dbg = server_state(), debug_state()
    instance = st.locator.locate(tab_id)
    if instance is None:
        raise NotFound(f"tab {tab_id} not found in any instance", code="tab_not_found")
    body = proxy.request_body()
    wanted = _body_field(body, "sessionId")
    holder = dbg.owners.known(wanted) if wanted else None
    if holder is not None and holder != instance:
        # A session and the tab it would debug must share a process: the tab's CDP side joins it.
        raise Conflict(f"session is held by instance {holder} but tab {tab_id} is in instance {instance}: "
                       f"create the session there (POST /debug/sessions?instanceId={instance}) or omit sessionId",
                       code="session_elsewhere", details={"instanceId": holder, "tabInstanceId": instance})
    record, upstream = _send(instance, body)
    data = _read_json(upstream)
    if upstream.status in (200, 201) and isinstance(data, dict) and data.get("sessionId"):
        dbg.owners.remember(data["sessionId"], record["id"])
        data = _on_server_host(data, record["id"])
    return _answer(upstream.status, data, record["id"])


def sdk() -> Response:
    """``GET /debug/sdk.js``: the page SDK, from the server itself (no instance needed)."""
    return debug_routes.sdk()


# The bridge's endpoints whose server-side views are these (app.orchestrator.routes.proxy).
VIEWS: dict[str, Callable[..., Response]] = {
    "debug.create_session": create_session,
    "debug.list_sessions": list_sessions,
    "debug.get_session": session_call,
    "debug.delete_session": session_call,
    "debug.send_command": session_call,
    "debug.events": events,
    "debug.sdk": sdk,
    "tab_debug.attach": attach_tab,
}


# --- the WebSocket ---------------------------------------------------------------------------------------
@bp.before_request
def admit() -> None:
    """The checks before the upgrade, as HTTP answers; the instance's connection opens here too."""
    req = debug_sockets.SocketQuery().load(request.args.to_dict())   # the bridge's; the whole query goes on
    # Which pages may open it was judged in front of every route (app.access.web_origin, our doors); the
    # app's Origin goes along for the instance's list of apps, an agent's stays here.
    origin = request.headers.get("Origin") if req["role"] == "app" else None
    instance = _holder(req["sessionId"]) if req["sessionId"] else None
    if instance is None:
        raise NotFound("unknown debug session", code="session_not_found")
    record, token = proxy.ready(instance)
    url = "ws" + record["url"].removeprefix("http") + "/debug?" + request.query_string.decode("latin-1")
    try:
        ws_relay.admit(limiter.current(), url, token, instance=record["id"], origin=origin,
                       app=req["role"] == "app")
    except ws_relay.Refused as exc:
        if exc.upstream_status == 404:
            debug_state().owners.forget(req["sessionId"])
        raise


bp.teardown_request(ws_relay.teardown)


@sock.route("/debug", bp=bp)
def debug_socket(ws: Any) -> None:
    ws_relay.serve(ws, request.args.get("sessionId", "")[:6])


def init_app(app: Flask, config: Config) -> None:
    """The WebSocket route, what needs no token, the session directory and the shutdown hook."""
    st = app.extensions["pinchtab.server"]
    owners = SessionOwners(st.mirror, st.upstream)
    st.mirror.on_change(owners.forget_instances)
    relays = limiter.install(app, limiter.Limiter(config.debug.max_connections))
    app.extensions["pinchtab.server.debug"] = DebugState(owners)
    # The caller's frame limit is the instances' own: a larger frame closes with 1009 here.
    served.configure(app, max_frame_bytes=config.debug.max_frame_bytes)
    app.register_blueprint(bp)
    debug_admission.install(app, config)  # as on the bridge: apps by session id and Origin
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(relays.close_all)
