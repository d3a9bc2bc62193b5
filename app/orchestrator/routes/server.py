"""The server about itself: POST /shutdown, GET|PUT /api/config, metrics, background health,
``GET /{strategy}/status`` and the agents seen in the activity log (``GET /api/agents[...]``)."""
from __future__ import annotations

import os
import resource
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask, current_app

from ...access.auth import own_agent_only, require_admin, require_elevation, session_agent
from ...config import config_path
from ...web.activity import DASHBOARD_AGENT
from ...web.errors import APIError, NotFound
from ...web.openapi import Blueprint
from ...web.schemas import StatusResponse
from .. import config_edit
from ..errors import ManagerUnavailable
from ..state import server_state
from .profiles import activity
from .server_contract import (
    AgentsQuerySchema,
    AgentSummary,
    BackgroundHealthResponse,
    ConfigPatchSchema,
    ConfigResponse,
    MetricsResponse,
    StrategyStatusResponse,
)

bp = Blueprint("server", __name__)
SHUTDOWN_DELAY_S = 0.1  # long enough for the answer to leave before the process goes
STRATEGIES = ("always-on", "simple", "simple-autorestart", "explicit", "no-instance")
AGENTS_WINDOW = timedelta(hours=24)
RESTART_REASONS = "pinchtab.restart_reasons"
CACHE_S = 5.0


def restart_reasons(app: Flask) -> list[str]:
    """Config keys saved by PUT /api/config that wait for a restart."""
    return app.extensions.setdefault(RESTART_REASONS, [])


@bp.post("/shutdown")
@bp.response(200, StatusResponse)
def shutdown() -> dict[str, Any]:
    """Stop the server, every instance it runs and their browsers."""
    require_admin("shut the server down")
    stop = current_app.extensions.get("pinchtab.shutdown")
    if stop is None:
        raise APIError("this server was not started by `pinchtab server`: stop it where it runs", status=409,
                       code="shutdown_unavailable")
    threading.Timer(SHUTDOWN_DELAY_S, stop).start()
    return {"status": "shutting down"}


def _config_answer(applied: list[str] | None = None) -> dict[str, Any]:
    reasons = restart_reasons(current_app)
    out: dict[str, Any] = {"config": server_state().config.public_dict(), "restartRequired": bool(reasons),
                           "restartReasons": list(reasons)}
    if applied is not None:
        out["applied"] = applied
    return out


@bp.get("/api/config")
@bp.response(200, ConfigResponse)
def get_config() -> dict[str, Any]:
    """The running config (secrets masked) and the saved changes that wait for a restart; not for
    agent sessions (the operator's settings, as in the original)."""
    require_admin("read the config", elevated=False)
    return _config_answer()


@bp.put("/api/config")
@bp.arguments(ConfigPatchSchema)
@bp.response(200, ConfigResponse)
@bp.alt_response(409, description="saved, but some keys take effect only after a restart (details.keys)")
def put_config(change: dict[str, Any]) -> dict[str, Any]:
    """Change settings (a partial config). Keys the server can switch live apply at once; every
    other change is saved to the config file and answered 409 ``restart_required`` naming them.

    A dashboard login needs the token typed lately (``POST /api/auth/elevate``) for keys beyond
    the routine ones, and for every key with ``sessions.dashboard.requireElevation``."""
    require_admin("change the config", elevated=False)
    st = server_state()
    if st.config.sessions.dashboard.require_elevation:
        require_elevation("change the config")
    made, keys = config_edit.check(st.config, change)
    if not keys:
        return _config_answer(applied=[])
    guarded = config_edit.needs_elevation(keys)
    if guarded:
        require_elevation("change " + ", ".join(guarded), details={"keys": guarded})
    config_edit.save(change, keys, config_path())  # the file this server read
    applied = [k for k in keys if k in config_edit.LIVE]
    pending = [k for k in keys if k not in config_edit.LIVE]
    if applied:
        live = config_edit.live_config(st.config, made, applied)
        st.config = live
        current_app.extensions["pinchtab.config"] = live
    reasons = restart_reasons(current_app)
    reasons.extend(k for k in pending if k not in reasons)
    if pending:
        raise APIError(f"saved; restart the server to apply {', '.join(pending)}", status=409,
                       code="restart_required", details={"keys": pending, "applied": applied, "saved": True})
    return _config_answer(applied=applied)


@bp.get("/api/metrics")
@bp.response(200, MetricsResponse)
def metrics() -> dict[str, Any]:
    """The server process (uptime, memory, threads) and every instance's processes and memory."""
    require_admin("read the server's metrics", elevated=False)
    st = server_state()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    records = st.mirror.records()
    server = {"pid": os.getpid(), "uptimeMs": int((time.monotonic() - st.started) * 1000),
              "maxRssBytes": usage.ru_maxrss * 1024, "threads": threading.active_count(),
              "cpuSec": round(usage.ru_utime + usage.ru_stime, 2),
              "instancesByStatus": dict(Counter(r["status"] for r in records))}
    return {"server": server, "instances": st.client.metrics()}


@bp.get("/health/background")
@bp.response(200, BackgroundHealthResponse)
@bp.alt_response(503, schema=BackgroundHealthResponse, description="the instance manager does not answer")
def background_health() -> dict[str, Any] | tuple[dict[str, Any], int]:
    """The background parts: the instance manager, the instance watch, restarts under way."""
    st = server_state()
    try:
        data = st.mirror.refresh()
    except ManagerUnavailable as exc:
        return {"status": "error", "manager": {"reachable": False, "reason": exc.message}, "instances": []}, 503
    items = [{"id": i["record"]["id"], "status": i["record"]["status"], "restarting": i.get("restarting", False)}
             for i in data["instances"]]
    return {"status": "ok", "manager": {"reachable": True, "pid": data.get("pid"), "generation": data["generation"]},
            "instances": items}


def strategy_status() -> dict[str, Any]:
    """The instance strategy: whether it launches a default instance and restarts crashed ones."""
    from ..instances import AUTO_LAUNCH, AUTO_RESTART

    st = server_state()
    st.mirror.ensure_loaded()
    mi = st.config.multi_instance
    records = st.mirror.records()
    default = st.mirror.get(st.mirror.default_id or "")
    return {"strategy": mi.strategy, "allocationPolicy": mi.allocation_policy,
            "defaultInstance": {"id": default[0]["id"], "status": default[0]["status"]} if default else None,
            "instances": len(records), "running": sum(r["status"] == "running" for r in records),
            "autoLaunch": mi.strategy in AUTO_LAUNCH, "autoRestart": mi.strategy in AUTO_RESTART}


def _status_view(name: str) -> None:
    def view() -> dict[str, Any]:
        return strategy_status()

    view.__doc__ = f"The instance strategy's state (asked as {name}; ``strategy`` names the one that runs)."
    bp.route(f"/{name}/status", methods=["GET"], endpoint=f"status_{name.replace('-', '_')}")(
        bp.response(200, StrategyStatusResponse)(view))


for _name in STRATEGIES:
    _status_view(_name)


def _agents(limit: int) -> dict[str, dict[str, Any]]:
    since = datetime.now(UTC) - AGENTS_WINDOW
    found: dict[str, dict[str, Any]] = {}
    for ev in reversed(activity().query(since=since, limit=10_000)):  # oldest first
        agent = ev.get("agentId")
        if not agent or agent == DASHBOARD_AGENT:
            continue
        a = found.setdefault(agent, {"agentId": agent, "requests": 0, "errors": 0, "firstSeen": ev.get("timestamp"),
                                     "instances": set(), "profiles": set()})
        a["requests"] += 1
        a["errors"] += int((ev.get("status") or 0) >= 400)
        a.update(lastSeen=ev.get("timestamp"), lastPath=ev.get("path"), lastTabId=ev.get("tabId") or a.get("lastTabId"))
        for key, into in (("instanceId", "instances"), ("profileName", "profiles")):
            if ev.get(key):
                a[into].add(ev[key])
    for a in found.values():
        a["instances"], a["profiles"] = sorted(a["instances"]), sorted(a["profiles"])
    newest = sorted(found.values(), key=lambda a: a["lastSeen"] or "", reverse=True)[:limit]
    return {a["agentId"]: a for a in newest}


def cached(name: str, compute: Callable[[], Any]) -> Any:
    """``compute()``, reused for CACHE_S: /health is polled often, and these counts read files."""
    store = current_app.extensions.setdefault("pinchtab.health_cache", {})
    hit = store.get(name)
    if hit is not None and time.monotonic() - hit[0] < CACHE_S:
        return hit[1]
    value = compute()
    store[name] = (time.monotonic(), value)
    return value


def agent_count() -> int | None:
    """Agents seen in the last 24 h, or None while the activity log is off."""
    if current_app.extensions.get("pinchtab.activity") is None:
        return None
    return cached("agents", lambda: len(_agents(1000)))


@bp.get("/api/agents")
@bp.arguments(AgentsQuerySchema, location="query")
@bp.response(200, AgentSummary(many=True))
def list_agents(req: dict[str, Any]) -> list[dict[str, Any]]:
    """Agents seen in the last 24 hours (from the activity log), most recent first (an agent session:
    its own agent only)."""
    mine = session_agent()
    if mine is not None:
        found = _agents(1000).get(mine)
        return [found] if found else []
    return list(_agents(req["limit"]).values())


@bp.get("/api/agents/<agent_id>")
@bp.response(200, AgentSummary)
def get_agent(agent_id: str) -> dict[str, Any]:
    """One agent's summary over the last 24 hours, with its latest calls (``recent``); an agent
    session reads its own only."""
    own_agent_only(agent_id, "read the activity")
    summary = _agents(1000).get(agent_id)
    if summary is None:
        raise NotFound(f"no agent {agent_id!r} in the last 24 hours of activity", code="agent_not_found")
    recent = activity().query(agent=agent_id, since=datetime.now(UTC) - AGENTS_WINDOW, limit=50)
    return {**summary, "recent": recent}

