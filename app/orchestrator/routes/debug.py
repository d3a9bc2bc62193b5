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
both ways, one thread each way, and close codes pass through in both directions.
"""
from __future__ import annotations

import itertools
import json
import logging
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import urllib3
import websocket
from flask import Blueprint, Flask, Response, current_app, g, jsonify, request
from flask_sock import Sock
from simple_websocket import ConnectionClosed
from werkzeug.wsgi import ClosingIterator

from ...access import auth, web_origin
from ...config import Config
from ...debug import routes as debug_routes
from ...debug import sockets as debug_sockets
from ...debug.hub import app_slot_limit
from ...web import untrusted_json
from ...web.errors import APIError, BadRequest, Conflict, NotFound, Unavailable
from ..mirror import InstanceMirror
from ..state import server_state
from ..upstream import Upstream
from . import proxy

log = logging.getLogger(__name__)

SURVEY_TIMEOUT_S = 5.0      # one instance's GET /debug/sessions
CONNECT_TIMEOUT_S = 5.0     # the WebSocket handshake with the instance
IDLE_WAKE_S = 5.0           # each pump thread looks up at least this often
CLOSE_GRACE_S = 1.0         # after sending a close, how long the other end has to answer it
SEND_TIMEOUT_S = 15.0       # a caller that takes no frame for this long is dropped
RETRY_AFTER_S = 5
PING_INTERVAL_S = 25        # keeps idle connections alive through nginx and NAT, like the bridge's
# Codes that describe a close but may never be sent in a close frame (RFC 6455, 7.4.1).
UNSENDABLE = frozenset({1005, 1006, 1015})
INSTANCE_GONE = (1001, "the instance went away")
SHUTTING_DOWN = (1001, "server shutting down")
PASSED_THROUGH = frozenset({400, 403, 404, 503})   # the instance's refusals the caller may see as they are

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


# --- the server's own cap on long-lived connections --------------------------------------------------
@dataclass(eq=False)
class Hold:
    """One long-lived connection's place under the cap; ``close`` ends it from another thread."""

    close: Callable[[], None] = field(default=lambda: None)
    app: bool = False


class LongLived:
    """The WebSockets and event streams the server relays. Each holds one of the server's request
    threads for as long as it lasts, so past ``debug.maxConnections`` new ones are refused (503),
    and at shutdown all of them end at once instead of holding the worker's graceful stop.

    App sockets may hold only their share of the cap (:func:`~app.debug.hub.app_slot_limit`, as on
    the instances): apps from several instances must not lock the server's agents and streams out."""

    def __init__(self, max_connections: int) -> None:
        self.max_connections = max_connections
        self.max_app_connections = app_slot_limit(max_connections)
        self.closing = False
        self._open: set[Hold] = set()
        self._lock = threading.Lock()

    def acquire(self, *, app: bool = False) -> Hold:
        """A place (an app's within its share), or 503 ``too_many_connections`` with Retry-After."""
        with self._lock:
            apps = sum(1 for h in self._open if h.app)
            if not self.closing and len(self._open) < self.max_connections and (
                    not app or apps < self.max_app_connections):
                hold = Hold(app=app)
                self._open.add(hold)
                return hold
        if app and apps >= self.max_app_connections:
            message = (f"too many app connections: apps may hold {self.max_app_connections} of "
                       f"debug.maxConnections ({self.max_connections}), the rest are kept for agents and event "
                       "streams; try again later")
        else:
            message = "too many debug connections; try again later"
        raise Unavailable(message, code="too_many_connections", headers={"Retry-After": str(RETRY_AFTER_S)})

    def release(self, hold: Hold) -> None:
        with self._lock:
            self._open.discard(hold)

    @property
    def connections(self) -> int:
        with self._lock:
            return len(self._open)

    @property
    def app_connections(self) -> int:
        with self._lock:
            return sum(1 for h in self._open if h.app)

    def close_all(self) -> None:
        """Shutdown: refuse new ones and end every open one."""
        with self._lock:
            self.closing = True
            holds = list(self._open)
        for hold in holds:
            try:
                hold.close()
            except Exception:  # one that cannot be closed must not keep the others open
                log.exception("debug: closing a relayed connection failed")


@dataclass
class DebugState:
    owners: SessionOwners
    relays: LongLived


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
    dbg = debug_state()
    return jsonify({"sessions": dbg.owners.survey(), "connections": dbg.relays.connections,
                    "maxConnections": dbg.relays.max_connections, "appConnections": dbg.relays.app_connections,
                    "maxAppConnections": dbg.relays.max_app_connections})


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
    if request.args.get("sessionId"):
        instance = _holder(request.args["sessionId"])
    elif request.args.get("tabId"):
        found = st.locator.locate(request.args["tabId"])
        if found is None:
            raise NotFound(f"tab {request.args['tabId']} not found in any instance", code="tab_not_found")
        instance = found
    else:
        instance = proxy.default_instance()   # it answers what is missing
    hold = dbg.relays.acquire()
    try:
        record, upstream = _send(instance, None)
    except BaseException:
        dbg.relays.release(hold)
        raise
    if upstream.status != 200:              # a refusal, not a stream
        dbg.relays.release(hold)
        if upstream.status == 404 and request.args.get("sessionId"):
            dbg.owners.forget(request.args["sessionId"])
        return proxy.relay(upstream, record["id"])

    # At shutdown, or when the caller leaves, the blocked read of the stream is cut from another
    # thread (urllib3's shutdown): the relay ends and its thread is free.
    def cut() -> None:
        try:
            upstream.shutdown()
        except (ValueError, RuntimeError, OSError):
            pass   # already closed or given back: nothing blocks on it

    hold.close = cut
    done = threading.Event()
    _watch_caller(request.environ, hold.close, done)
    resp = proxy.relay(upstream, record["id"])

    def finished() -> None:
        done.set()
        dbg.relays.release(hold)

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
                    if not sel.select(IDLE_WAKE_S):
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
    dbg = debug_state()
    role = request.args.get("role", "app")
    if role not in ("app", "agent"):
        raise BadRequest(f"unknown role {role!r}: use app or agent", code="bad_role")
    # Which pages may open it was judged in front of every route (app.access.web_origin, our doors); the
    # app's Origin goes along for the instance's list of apps, an agent's stays here.
    origin = request.headers.get("Origin") if role == "app" else None
    session_id = request.args.get("sessionId", "")
    instance = _holder(session_id) if session_id else None
    if instance is None:
        raise NotFound("unknown debug session", code="session_not_found")
    record, token = proxy.ready(instance)
    g.debug_hold = dbg.relays.acquire(app=role == "app")
    g.debug_upstream = _connect(record, token, session_id, origin)


@bp.teardown_request
def release(_exc: BaseException | None) -> None:
    upstream: websocket.WebSocket | None = g.pop("debug_upstream", None)
    if upstream is not None and upstream.connected:   # the upgrade failed, or the relay left it open
        upstream.shutdown()
    hold = g.pop("debug_hold", None)
    if hold is not None:
        debug_state().relays.release(hold)


def _connect(record: dict[str, Any], token: str, session_id: str, origin: str | None) -> websocket.WebSocket:
    """The same WebSocket on the instance; its refusal becomes ours (an unknown session is forgotten)."""
    url = "ws" + record["url"].removeprefix("http") + "/debug?" + request.query_string.decode("latin-1")
    try:
        # The instance token admits agents there; the page's Origin goes along for its check.
        return websocket.create_connection(
            url, timeout=CONNECT_TIMEOUT_S, header=[f"Authorization: Bearer {token}"], origin=origin,
            suppress_origin=origin is None, skip_utf8_validation=True, enable_multithread=True)
    except websocket.WebSocketBadStatusException as exc:
        if exc.status_code == 404:
            debug_state().owners.forget(session_id)
        raise refusal(exc, record["id"]) from None
    except (websocket.WebSocketException, OSError) as exc:
        log.warning("instance %s: debug WebSocket failed: %s", record["id"], type(exc).__name__)
        raise APIError(f"instance {record['id']} is unreachable", status=502, code="instance_unreachable",
                       retryable=True, details={"instanceId": record["id"]}) from None


def refusal(exc: websocket.WebSocketBadStatusException, instance: str) -> APIError:
    """An instance's refusal of a relayed WebSocket, as the caller's answer (the screencast's too)."""
    try:
        data = json.loads(exc.resp_body or b"{}")
    except ValueError:
        data = {}
    if exc.status_code not in PASSED_THROUGH or not isinstance(data, dict):
        return APIError(f"instance {instance} refused the WebSocket ({exc.status_code})", status=502,
                        code="instance_refused", details={"instanceId": instance, "status": exc.status_code})
    retry = (exc.resp_headers or {}).get("retry-after")
    return APIError(str(data.get("error") or "refused by the instance"), status=exc.status_code,
                    code=str(data.get("code") or "refused"), retryable=exc.status_code == 503,
                    headers={"Retry-After": retry} if retry else None)


@sock.route("/debug", bp=bp)
def debug_socket(ws: Any) -> None:
    relay = SocketRelay(ws, g.pop("debug_upstream"), request.args.get("sessionId", "")[:6])
    g.debug_hold.close = relay.shutdown
    relay.run()


_relay_ids = itertools.count(1)


class SocketRelay:
    """One caller's WebSocket and the instance's, joined: the request thread carries the caller's
    frames to the instance, a thread of its own (``debug-relay:<n>``) the instance's to the caller,
    so each socket has one writer of data frames. A close on either side closes the other with the
    same code and reason."""

    def __init__(self, client: Any, upstream: websocket.WebSocket, label: str) -> None:
        self.client = client              # simple_websocket.Server
        self.upstream = upstream
        self.label = label
        self.end = INSTANCE_GONE          # the caller's close when the instance's side breaks off
        self._upstream_closed = threading.Event()
        self._lock = threading.Lock()

    def run(self) -> None:
        # A caller that stops reading must not hold the pump in a send forever: past this, the
        # send fails and the relay ends. (The reader thread only reads when select says so.)
        self.client.sock.settimeout(SEND_TIMEOUT_S)
        pump = threading.Thread(target=self._upstream_loop, name=f"debug-relay:{next(_relay_ids)}", daemon=True)
        pump.start()
        try:
            self._client_loop()
        finally:
            pump.join(CLOSE_GRACE_S)      # the instance answers our close, and the pump sees it
            if pump.is_alive():
                self._drop_upstream()
                pump.join(IDLE_WAKE_S)
            self.upstream.shutdown()      # its file descriptor
            # simple-websocket's reader thread waits in select() for the caller's answer to a
            # close, until its next ping (25 s): once the server closes the socket under it, it
            # would sleep on, and as a non-daemon thread hold up the worker's exit.
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

    # -- caller -> instance (the request thread)
    def _client_loop(self) -> None:
        while True:
            try:
                data = self.client.receive(timeout=IDLE_WAKE_S)
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
                pass   # the instance's side broke off: the pump sees it too and closes the caller

    def _client_close_code(self, closed: ConnectionClosed) -> int:
        code = int(closed.reason or 1005)
        limit = self.client.max_message_size
        if code == 1005 and limit and self.client.incoming_message_len > limit:
            # simple-websocket closed the caller itself (1009) for a too large message, and says
            # only that no code came from the caller: the instance hears the real reason.
            return 1009
        return code

    # -- instance -> caller (the pump thread)
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
                    # be half sent, so nothing more can go to it; the instance hears it went away.
                    log.info("debug relay %s: the caller stopped reading; dropping it", self.label)
                    self._drop_client()
                    self._close_upstream(1001, "the caller went away")
                    return
        except (websocket.WebSocketException, OSError) as exc:
            if not self._upstream_closed.is_set():
                log.info("debug relay %s: the instance's side broke off: %s", self.label, type(exc).__name__)
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


def init_app(app: Flask, config: Config) -> None:
    """The WebSocket route, what needs no token, the session directory and the shutdown hook."""
    st = app.extensions["pinchtab.server"]
    owners = SessionOwners(st.mirror, st.upstream)
    st.mirror.on_change(owners.forget_instances)
    relays = LongLived(config.debug.max_connections)
    app.extensions["pinchtab.server.debug"] = DebugState(owners, relays)
    # The caller's frame limit is the instances' own: a larger frame closes with 1009 here.
    app.config["SOCK_SERVER_OPTIONS"] = {"max_message_size": config.debug.max_frame_bytes,
                                         "ping_interval": PING_INTERVAL_S}
    app.register_blueprint(bp)
    # An app joins with the session id as its capability; the SDK is public, as on the bridge.
    auth.allow_public(app, debug_sockets.is_public)
    auth.allow_public(app, lambda req: req.method in ("GET", "HEAD") and req.path == "/debug/sdk.js")
    for door in debug_sockets.doors(config.debug.allowed_origins):
        web_origin.admit(app, door)
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(relays.close_all)
