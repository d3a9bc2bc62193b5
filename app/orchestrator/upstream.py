"""HTTP from the server to its instances: forwarding requests, small calls, and finding a tab's owner."""
from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import quote

import requests
import urllib3
from flask import g
from requests.adapters import HTTPAdapter
from werkzeug.wrappers import Request

from ..config import Config
from ..web.activity import DASHBOARD_AGENT, QUIET_HEADER
from ..web.errors import APIError
from ..web.pools import close_pool_to
from .abandon import CallerWatch, WatchedPool
from .mirror import InstanceMirror

log = logging.getLogger(__name__)

HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "te", "trailer",
                        "trailers", "transfer-encoding", "upgrade"})
# Host and length are the new request's own; the caller's Authorization is never passed on. What a
# browser says of the page that sent the request (Origin, Sec-Fetch-*, its cookie) was judged here
# (app.access.web_origin, app.access.auth): the instance hears from the server, not from a page.
DROP_REQUEST = HOP_BY_HOP | {"host", "authorization", "content-length", "expect", "origin", "referer", "cookie",
                             "sec-fetch-site", "sec-fetch-mode", "sec-fetch-dest", "sec-fetch-user"}
CONNECT_TIMEOUT_S = 2.0
LOCATE_TIMEOUT_S = 5.0


class Upstream:
    """HTTP to instances over a keep-alive pool, with the instance's internal token."""

    def __init__(self, config: Config) -> None:
        # Forwarding goes through urllib3 itself (what requests runs on): requests' per-call
        # preparation was a large part of the proxy's own cost. Our own small calls keep requests.
        self.pool = urllib3.PoolManager(num_pools=16, maxsize=64, retries=False)
        # Its connections tell the caller watch which socket a forwarded request waits on.
        self.pool.pool_classes_by_scheme = {**self.pool.pool_classes_by_scheme, "http": WatchedPool}
        self.watch = CallerWatch()
        self.session = requests.Session()
        adapter = HTTPAdapter(pool_connections=16, pool_maxsize=64, max_retries=0)
        self.session.mount("http://", adapter)
        self.session.trust_env = False  # never through an HTTP proxy from the environment: these are loopback
        # The longest a bridge may legitimately take before its first byte: a navigate or an action.
        self.read_timeout_s = float(max(config.timeouts.navigate_sec, config.timeouts.action_sec) + 30)

    def close_connections(self, url: str) -> None:
        """Close our kept-alive connections to an instance about to stop: its server would wait on them."""
        close_pool_to(self.pool, url)
        close_pool_to(self.session.get_adapter(url).poolmanager, url)

    def send(self, request: Request, record: dict[str, Any], token: str, body: Any) -> urllib3.BaseHTTPResponse:
        """Forward ``request`` to the instance; 502 ``instance_unreachable`` / 504 ``instance_timeout``."""
        path = quote(request.path)
        query = request.query_string.decode("latin-1")
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in DROP_REQUEST and not k.lower().startswith("x-pinchtab-")}
        headers["Authorization"] = f"Bearer {token}"
        agent = g.get("session_agent")
        if agent:  # an agent session acts as its own agent only, whatever X-Agent-Id it sent
            headers = {k: v for k, v in headers.items() if k.lower() != "x-agent-id"}
            headers["X-Agent-Id"] = agent
        elif request.method in ("GET", "HEAD") and request.headers.get("X-Agent-Id") == DASHBOARD_AGENT:
            headers[QUIET_HEADER] = "1"  # the dashboard's polling: not something anyone did
        if body is not None and not isinstance(body, bytes) and request.content_length is not None:
            headers["Content-Length"] = str(request.content_length)
        url = f"{record['url']}{path}" + (f"?{query}" if query else "")
        with self.watch.watching(request.environ.get("gunicorn.socket")) as waiting:
            try:
                return self.pool.urlopen(request.method, url, body=body, headers=headers, preload_content=False,
                                         redirect=False, retries=False,
                                         timeout=urllib3.Timeout(connect=CONNECT_TIMEOUT_S, read=self.read_timeout_s))
            except urllib3.exceptions.HTTPError as exc:
                if waiting is not None and waiting.abandoned:   # we cut it off: nobody is left to answer
                    raise APIError("the caller left before the instance answered", status=400,
                                   code="caller_gone") from None
                if isinstance(exc, urllib3.exceptions.ReadTimeoutError):
                    raise APIError(f"instance {record['id']} did not answer within {self.read_timeout_s:.0f} s",
                                   status=504, code="instance_timeout", retryable=True) from None
                log.warning("instance %s unreachable: %s", record["id"], type(exc).__name__)
                raise APIError(f"instance {record['id']} is unreachable (it may have crashed; it is restarted)",
                               status=502, code="instance_unreachable", retryable=True,
                               details={"instanceId": record["id"]}) from None

    def call(self, record: dict[str, Any], token: str, method: str, path: str, payload: Any = None,
             timeout_s: float = 10.0) -> tuple[int, Any]:
        """A small JSON call of our own to an instance: (status, parsed body).

        Our reads (tab, debug and metrics surveys) stay out of the instance's activity log; a change
        (opening a tab for a caller) is logged as what it is."""
        headers = {"Authorization": f"Bearer {token}"}
        if method in ("GET", "HEAD"):
            headers[QUIET_HEADER] = "1"
        try:
            resp = self.session.request(method, record["url"] + path, json=payload,
                                        timeout=(CONNECT_TIMEOUT_S, timeout_s),
                                        headers=headers, allow_redirects=False)
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

    def __init__(self, mirror: InstanceMirror, upstream: Upstream) -> None:
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
