"""``/tasks`` and ``/scheduler/stats`` (only when ``scheduler.enabled``): the fair task queue.

A task is a browser call (``/action``, ``/navigate``, ...) queued instead of sent; it runs as
that very request through this app, as its agent (``X-Agent-Id``), so it is routed, checked and
answered exactly as the direct call would be. Only browser routes may be queued: the server's
own (config, sessions, shutdown) never run under the scheduler's credentials. An agent session
sees and cancels its own agent's tasks only (their answers hold what the agent read).
"""
from __future__ import annotations

from typing import Any

from flask import Flask, Response, current_app, g, jsonify, request
from werkzeug.exceptions import HTTPException

from ...auth import own_agent_only
from ...errors import BadRequest, Forbidden
from ...openapi import Blueprint
from ..scheduler import Scheduler, Task
from .schemas import SchedulerStats, TaskQuerySchema, TaskRecord, TaskSubmitSchema

bp = Blueprint("tasks", __name__)
KEY = "pinchtab.scheduler"
ANONYMOUS = "anonymous"


def init_app(app: Flask) -> Scheduler:
    """Start the queue's workers; they stop with the server."""
    token = app.extensions["pinchtab.config"].server.token

    def run(task: Task) -> tuple[int, Any]:
        headers = {"X-Agent-Id": task.agent_id} if task.agent_id != ANONYMOUS else {}
        if token:
            headers["Authorization"] = f"Bearer {token}"
        with app.test_client() as client:
            resp = client.open(task.path, method=task.method, json=task.body, headers=headers)
            body = resp.get_json(silent=True)
            return resp.status_code, body if body is not None else resp.get_data(as_text=True)[:65536]

    def limits() -> tuple[int, int]:
        sc = app.extensions["pinchtab.config"].scheduler  # PUT /api/config may change them live
        return sc.max_queue_size, sc.max_per_agent

    scheduler = Scheduler(run, app.extensions["pinchtab.config"].scheduler.workers, limits)
    app.extensions[KEY] = scheduler
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(scheduler.stop)
    scheduler.start()
    return scheduler


def scheduler() -> Scheduler:
    return current_app.extensions[KEY]


def _browser_route(method: str, path: str) -> None:
    adapter = current_app.url_map.bind("localhost")
    try:
        endpoint, _ = adapter.match(path, method=method)
    except HTTPException:
        endpoint = ""
    if not str(endpoint).startswith("proxy."):
        raise BadRequest(f"{method} {path} is not a browser route: only those can be queued",
                         code="task_path_not_allowed", details={"field": "path"})


@bp.post("/tasks")
@bp.arguments(TaskSubmitSchema)
@bp.response(202, TaskRecord)
def submit(req: dict[str, Any]) -> tuple[Response, int]:
    """Queue a browser call; 202 with the task id (429 when the queue or the agent's share is full)."""
    session_agent = g.get("session_agent")
    agent = req["agentId"] or session_agent or request.headers.get("X-Agent-Id") or ANONYMOUS
    if session_agent and agent != session_agent:
        raise Forbidden("an agent session queues tasks for its own agent only", code="session_forbidden")
    _browser_route(req["method"], req["path"])
    task, position = scheduler().submit(agent, req["method"], req["path"], req["body"])
    return jsonify({**task.record(), "position": position}), 202


@bp.get("/tasks")
@bp.arguments(TaskQuerySchema, location="query")
@bp.response(200, TaskRecord(many=True))
def list_tasks(req: dict[str, Any]) -> Response:
    """Tasks, newest first (filter by agent and status)."""
    agent = own_agent_only(req.get("agentId"), "list the tasks")
    return jsonify([t.record() for t in scheduler().list(agent, req.get("status"), req["limit"])])


def _task(task_id: str) -> Task:
    """The task, if the caller may see it: an agent session, its own agent's only."""
    task = scheduler().get(task_id)
    own_agent_only(task.agent_id, "read or cancel the tasks")
    return task


@bp.get("/tasks/<task_id>")
@bp.response(200, TaskRecord)
def get_task(task_id: str) -> Response:
    """One task: its status and, once run, the call's answer (``result``)."""
    return jsonify(_task(task_id).record())


@bp.delete("/tasks/<task_id>")
@bp.response(200, TaskRecord)
def cancel_task(task_id: str) -> Response:
    """Cancel a queued task (409 once it runs)."""
    _task(task_id)
    return jsonify(scheduler().cancel(task_id).record())


@bp.get("/scheduler/stats")
@bp.response(200, SchedulerStats)
def stats() -> Response:
    """Queued, running and finished counts, per-agent queue lengths and the limits."""
    return jsonify(scheduler().stats())
