"""The activity log: one JSON line per API call that touches a browser (profiles/activity.py).

A WSGI middleware rather than Flask hooks: it reads what it needs from the environ and from what
the app answered, and writes the line when the server closes the response, that is after the
answer reached the client (where a server's access log is written too). The agent never waits
for the log.
"""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from flask import Flask

from ..config import Config
from .closing import Closing
from .parser import JSON_BODY

UNLOGGED = ("/health", "/openapi.json", "/help")
SERVER_SUBDIR = "server"
# The server's own reads of an instance (its tab, debug and metrics surveys) and the dashboard's
# reads it forwards carry this header: the log is what agents and people did, and a dashboard left
# open would otherwise fill it with its polling. Only the server sets it (it drops every
# ``X-PinchTab-*`` header a caller sends), and only a read may skip the log.
QUIET_HEADER = "X-PinchTab-Quiet"
DASHBOARD_AGENT = "dashboard"  # the dashboard's X-Agent-Id: a person at the dashboard, not an agent
_QUIET_ENVIRON = "HTTP_" + QUIET_HEADER.upper().replace("-", "_")
_READS = ("GET", "HEAD")
# The WSGI environ key naming a session caller's agent: auth sets it; this log (it sees the environ
# only) and the bridge's idea of who calls read it.
SESSION_AGENT = "pinchtab.session_agent"


def server_dir(state_dir: Path) -> Path:
    """Where a server's dashboard reads activity, and where its instances write it.

    A folder of the server's own under ``<stateDir>/activity``: a standalone ``pinchtab bridge`` on
    the same state dir logs to ``<stateDir>/activity`` itself, and its calls are not the server's.
    """
    return Path(state_dir) / "activity" / SERVER_SUBDIR
TAB_HEADER = "X-PinchTab-Tab-Id"  # set on every answer that used a tab (app/__init__.py)


def register(app: Flask, config: Config) -> None:
    """Record every browser call once it is answered (never its secrets: profiles.activity strips them)."""
    if not config.observability.activity.enabled:
        return
    from profiles import ActivityLog

    store = ActivityLog(config.server.state_dir / "activity", config.observability.activity.retention_days)
    app.extensions["pinchtab.activity"] = store
    app.wsgi_app = _Recorder(app.wsgi_app, store, max_body=app.config["MAX_CONTENT_LENGTH"] or 0,  # type: ignore[method-assign]
                             profile=config.instance_defaults.profile,
                             instance=os.environ.get("PINCHTAB_INSTANCE_ID", ""))  # set by the server's manager


def quiet(environ: dict[str, Any]) -> bool:
    """Whether this request is a read the server marked as its own or the dashboard's (not logged)."""
    return environ.get("REQUEST_METHOD") in _READS and bool(environ.get(_QUIET_ENVIRON))


class _Recorder:
    def __init__(self, app: Callable[..., Iterable[bytes]], store: Any, *, max_body: int, profile: str,
                 instance: str) -> None:
        self.app = app
        self.store = store
        self.max_body = max_body
        self.profile = profile
        self.instance = instance

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        if environ.get("PATH_INFO") in UNLOGGED or environ.get("REQUEST_METHOD") == "OPTIONS" or quiet(environ):
            return self.app(environ, start_response)
        started = time.perf_counter()
        answer: list[Any] = []

        def note(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            # Called inside the app, while its request object (the parsed body cached in it) is in
            # the environ; Flask drops it from there when the request ends.
            answer[:] = [status, headers, environ.get("werkzeug.request")]
            return start_response(status, headers, exc_info)

        body = self.app(environ, note)
        took_ms = (time.perf_counter() - started) * 1000
        # Closed by the server once the answer is sent: the line is written then.
        return Closing(body, lambda: self.record(environ, answer, took_ms))

    def record(self, environ: dict[str, Any], answer: list[Any], took_ms: float) -> None:
        status, headers, req = answer if answer else ("500", [], None)
        method = environ.get("REQUEST_METHOD", "")
        fields: dict[str, Any] = {}
        if method == "GET":
            fields = dict(parse_qsl(environ.get("QUERY_STRING", "")))
        else:
            parsed = environ.get(JSON_BODY)  # the body as the route read it (app.web.parser)
            if parsed is None and req is not None and (req.content_length or 0) <= self.max_body:
                parsed = req.get_json(silent=True, force=True, cache=True)
            fields = parsed if isinstance(parsed, dict) else {}

        def text(key: str) -> str:
            value = fields.get(key)
            return value if isinstance(value, str) else ""

        self.store.record({
            "agentId": environ.get(SESSION_AGENT) or environ.get("HTTP_X_AGENT_ID", ""),
            "method": method,
            "path": environ.get("PATH_INFO", ""),
            "status": int(status[:3]),
            "durationMs": round(took_ms, 2),
            "tabId": next((v for k, v in headers if k == TAB_HEADER), ""),
            "url": text("url"),
            "action": text("kind"),
            "ref": text("ref"),
            "profileName": self.profile,
            "instanceId": self.instance,
        })

