"""The activity log: one JSON line per API call that touches a browser (profiles/activity.py)."""
from __future__ import annotations

import logging
import os
import time
from typing import Any

from flask import Flask, g, request

from .config import Config

log = logging.getLogger(__name__)
UNLOGGED = ("/health", "/openapi.json", "/help")


def register(app: Flask, config: Config) -> None:
    """Record every browser call after it is answered (never its secrets: profiles.activity strips them)."""
    if not config.observability.activity.enabled:
        return
    from profiles import ActivityLog

    store = ActivityLog(config.server.state_dir / "activity", config.observability.activity.retention_days)
    app.extensions["pinchtab.activity"] = store
    profile = config.instance_defaults.profile
    instance = os.environ.get("PINCHTAB_INSTANCE_ID", "")  # set by the server's manager for its bridges

    @app.before_request
    def started() -> None:
        g.started = time.perf_counter()

    @app.after_request
    def record(resp):  # type: ignore[no-untyped-def]
        if request.path in UNLOGGED or request.method == "OPTIONS":
            return resp
        body: Any = dict(request.args)
        if request.method != "GET" and (request.content_length or 0) <= (app.config["MAX_CONTENT_LENGTH"] or 0):
            body = request.get_json(silent=True, force=True, cache=True) or {}
        if not isinstance(body, dict):
            body = {}
        store.record({
            "agentId": request.headers.get("X-Agent-Id", ""),
            "method": request.method,
            "path": request.path,
            "status": resp.status_code,
            "durationMs": round((time.perf_counter() - g.get("started", time.perf_counter())) * 1000, 2),
            "tabId": g.get("tab_id", ""),
            "url": body.get("url", "") if isinstance(body.get("url"), str) else "",
            "action": body.get("kind", "") if isinstance(body.get("kind"), str) else "",
            "ref": body.get("ref", "") if isinstance(body.get("ref"), str) else "",
            "profileName": profile,
            "instanceId": instance,
            **g.get("activity", {}),  # what the route knows better (the server's proxy: instance, profile)
        })
        return resp
