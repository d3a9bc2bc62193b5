"""The browser API in server mode: every bridge route, forwarded to the instance that owns it.

The routes are read from the bridge app's own url_map (minus ``/health``, ``/openapi.json``,
``/help`` and ``/shutdown``), so a route added to the bridge is served here with no change.
Shorthand routes go to the default instance (or to the owner of a ``tabId`` they name);
``/tabs/{id}/...`` goes to the instance that has the tab. Bodies stream both ways without being
held whole (screenshots, PDFs, SSE); the caller's token is replaced by the instance's own, so
a caller's credentials never reach a child.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import requests
import urllib3
from flask import Blueprint, Response, g, request
from requests.adapters import HTTPAdapter
from werkzeug.datastructures import Headers

from ..config import Config
from ..errors import APIError, NotFound, Unavailable
from ..server_app import server_state

log = logging.getLogger(__name__)

NOT_FORWARDED = frozenset({"/health", "/openapi.json", "/help", "/shutdown"})
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "trailers", "transfer-encoding", "upgrade"})
# Host and length are the new request's own; the caller's Authorization is never passed on.
DROP_REQUEST = HOP_BY_HOP | {"host", "authorization", "content-length", "expect"}
# gunicorn writes its own Date and Server: copies would make duplicate headers.
DROP_RESPONSE = HOP_BY_HOP | {"date", "server"}
START_WAIT_S = 10.0  # how long a request waits for an instance that is starting or restarting
RETRY_AFTER_S = 2
CONNECT_TIMEOUT_S = 2.0
STREAM_CHUNK = 64 * 1024
BUFFER_BODY_MAX = 1024 * 1024  # request bodies up to this are read whole (so a tabId can be found)
PEEK_BODY_MAX = 64 * 1024
LOCATE_TIMEOUT_S = 5.0


def browser_rules(config: Config) -> list[tuple[str, set[str], Any, Callable[..., Any]]]:
    """(rule, methods, defaults, bridge view) for every route the bridge app serves and we forward."""
    from .. import create_app

    obs = config.observability
    # Built only to read its url_map: no browser, and no activity log of its own.
    quiet = dataclasses.replace(config, observability=dataclasses.replace(
        obs, activity=dataclasses.replace(obs.activity, enabled=False)))
    bridge_app = create_app(quiet, start_browser=False)
    rules: list[tuple[str, set[str], Any, Callable[..., Any]]] = []
    for rule in bridge_app.url_map.iter_rules():
        if rule.endpoint == "static" or rule.rule in NOT_FORWARDED:
            continue
        methods = set(rule.methods or ()) - {"HEAD", "OPTIONS"}
        rules.append((rule.rule, methods, rule.defaults, bridge_app.view_functions[rule.endpoint]))
    return rules


def build_blueprint(config: Config) -> Blueprint:
    """One forwarding view per bridge route, documented as the bridge documents it."""
    bp = Blueprint("proxy", __name__)
    for n, (rule, methods, defaults, view) in enumerate(browser_rules(config)):
        def forward_view(**kwargs: Any) -> Response:
            return forward(kwargs.get("tab_id"))

        forward_view.__api__ = getattr(view, "__api__", {"summary": view.__name__})  # type: ignore[attr-defined]
        bp.add_url_rule(rule, endpoint=f"{view.__name__}_{n}", view_func=forward_view, methods=sorted(methods),
                        defaults=defaults)
    return bp


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
    upstream = st.upstream.send(record, token, body)
    tab = upstream.headers.get("X-PinchTab-Tab-Id")
    if tab:
        st.locator.remember(tab, record["id"])
    return relay(upstream, record["id"])


def default_instance() -> str:
    """Where a shorthand route goes; 503 ``no_instance`` when nothing runs."""
    st = server_state()
    st.mirror.ensure_loaded()
    instance = st.mirror.default_target()
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
    raise Unavailable(f"instance {instance} is {status}" + (f": {record['error']}" if record.get("error") else ""),
                      code="instance_unavailable", details={"instanceId": instance, "status": status})


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
        tab = json.loads(body).get("tabId")
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


class Upstream:
    """HTTP to instances over a keep-alive pool, with the instance's internal token."""

    def __init__(self, config: Config) -> None:
        # Forwarding goes through urllib3 itself (what requests runs on): requests' per-call
        # preparation was a large part of the proxy's own cost. Our own small calls keep requests.
        self.pool = urllib3.PoolManager(num_pools=16, maxsize=64, retries=False)
        self.session = requests.Session()
        adapter = HTTPAdapter(pool_connections=16, pool_maxsize=64, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.trust_env = False  # never through an HTTP proxy from the environment: these are loopback
        # The longest a bridge may legitimately take before its first byte: a navigate or an action.
        self.read_timeout_s = float(max(config.timeouts.navigate_sec, config.timeouts.action_sec) + 30)

    def send(self, record: dict[str, Any], token: str, body: Any) -> urllib3.BaseHTTPResponse:
        """Forward the current request; 502 ``instance_unreachable`` / 504 ``instance_timeout``."""
        path = quote(request.path)
        query = request.query_string.decode("latin-1")
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in DROP_REQUEST and not k.lower().startswith("x-pinchtab-")}
        headers["Authorization"] = f"Bearer {token}"
        if body is not None and not isinstance(body, bytes) and request.content_length is not None:
            headers["Content-Length"] = str(request.content_length)
        url = f"{record['url']}{path}" + (f"?{query}" if query else "")
        try:
            return self.pool.urlopen(request.method, url, body=body, headers=headers, preload_content=False,
                                     redirect=False, retries=False,
                                     timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT_S, read=self.read_timeout_s))
        except urllib3.exceptions.ReadTimeoutError:
            raise APIError(f"instance {record['id']} did not answer within {self.read_timeout_s:.0f} s",
                           status=504, code="instance_timeout", retryable=True) from None
        except urllib3.exceptions.HTTPError as exc:
            log.warning("instance %s unreachable: %s", record["id"], type(exc).__name__)
            raise APIError(f"instance {record['id']} is unreachable (it may have crashed; it is restarted)",
                           status=502, code="instance_unreachable", retryable=True,
                           details={"instanceId": record["id"]}) from None

    def call(self, record: dict[str, Any], token: str, method: str, path: str, payload: Any = None,
             timeout_s: float = 10.0) -> tuple[int, Any]:
        """A small JSON call of our own to an instance: (status, parsed body)."""
        try:
            resp = self.session.request(method, record["url"] + path, json=payload,
                                        timeout=(CONNECT_TIMEOUT_S, timeout_s),
                                        headers={"Authorization": f"Bearer {token}"}, allow_redirects=False)
        except requests.RequestException:
            raise APIError(f"instance {record['id']} is unreachable", status=502, code="instance_unreachable",
                           retryable=True, details={"instanceId": record["id"]}) from None
        try:
            return resp.status_code, resp.json()
        except ValueError:
            return resp.status_code, {"error": resp.text[:500], "code": "bad_upstream_answer"}

    def tabs(self, record: dict[str, Any], token: str) -> list[dict[str, Any]]:
        """The instance's open tabs (``GET /tabs``); [] when it does not answer."""
        try:
            status, data = self.call(record, token, "GET", "/tabs", timeout_s=LOCATE_TIMEOUT_S)
        except APIError:
            return []
        return data.get("tabs", []) if status == 200 and isinstance(data, dict) else []


class TabLocator:
    """Which instance has a tab: a cache filled from answers (``X-PinchTab-Tab-Id``) and, on a
    miss, from every running instance's ``GET /tabs``."""

    def __init__(self, mirror: Any, upstream: Upstream) -> None:
        self.mirror = mirror
        self.upstream = upstream
        self._owner: dict[str, str] = {}
        self._lock = threading.Lock()
        self._refresh_lock = threading.Lock()
        self._last_refresh_started = 0.0
        self._pool: ThreadPoolExecutor | None = None

    def remember(self, tab_id: str, instance: str) -> None:
        """Record that ``instance`` has the tab (from an answer that named it)."""
        with self._lock:
            self._owner[tab_id] = instance

    def forget_instances(self, instances: set[str]) -> None:
        """An instance stopped or restarted: its tabs are gone with its browser."""
        with self._lock:
            self._owner = {t: i for t, i in self._owner.items() if i not in instances}

    def locate(self, tab_id: str) -> str | None:
        """The id of the instance with the tab, or None if no running instance has it."""
        with self._lock:
            instance = self._owner.get(tab_id)
        if instance is not None and self.mirror.get(instance) is not None:
            return instance
        self.refresh()
        with self._lock:
            return self._owner.get(tab_id)

    def refresh(self) -> None:
        """Ask every running instance for its tabs. Callers that arrive during a refresh wait for
        it and reuse its answer; one that arrives after it started gets a fresh one."""
        asked = time.monotonic()
        with self._refresh_lock:
            if self._last_refresh_started >= asked:
                return
            self._last_refresh_started = time.monotonic()
            self.mirror.ensure_loaded()
            running = [r for r in self.mirror.records() if r["status"] == "running"]
            pairs = [(r, found[1]) for r in running if (found := self.mirror.get(r["id"])) is not None]
            if not pairs:
                return
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=8, thread_name_prefix="tab-locate")
            # Each call is bounded by its own connect and read timeouts.
            answers = list(self._pool.map(lambda p: (p[0]["id"], self.upstream.tabs(*p)), pairs))
            with self._lock:
                asked_ids = {iid for iid, _ in answers}
                self._owner = {t: i for t, i in self._owner.items() if i not in asked_ids}
                for iid, tabs in answers:
                    for tab in tabs:
                        self._owner[tab["id"]] = iid
