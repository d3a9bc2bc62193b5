"""``/tasks`` and ``/scheduler/stats`` (only when ``scheduler.enabled``): the fair task queue.

A task is a browser call (``/action``, ``/navigate``, ...) queued instead of sent; it runs as
that very request through this app, as its agent (``X-Agent-Id``), so it is routed, checked and
answered exactly as the direct call would be. The original's clients describe a task as an
``action`` on a tab instead (``{"agentId", "action": "click", "tabId", "ref"}``): it becomes the
matching call (see :class:`~.tasks_contract.TaskSpecSchema`). Only browser routes may be queued: the
server's own (config, sessions, shutdown) never run under the scheduler's credentials. An agent
session sees and cancels its own agent's tasks only (their answers hold what the agent read).
"""
from __future__ import annotations

from datetime import datetime
from typing import Any
from urllib.parse import quote, urlencode

from flask import Flask, current_app, g, request
from werkzeug.exceptions import HTTPException

from ...access.auth import own_agent_only
from ...web.errors import BadRequest, Forbidden
from ...web.openapi import Blueprint
from ..scheduler import QueueFull, Scheduler, Task
from .tasks_contract import (
    BatchResponse,
    SchedulerStats,
    TaskBatchSchema,
    TaskListResponse,
    TaskQuerySchema,
    TaskRecord,
    TaskSubmitSchema,
)

bp = Blueprint("tasks", __name__)
KEY = "pinchtab.scheduler"
ANONYMOUS = "anonymous"
# Actions that read the tab by routes of their own (the rest go to /action as a kind).
READS = {"snapshot": "/snapshot", "text": "/text", "screenshot": "/screenshot"}
# Fields of an action's body that are the task's own: params may not replace them.
RESERVED = frozenset({"kind", "ref", "selector", "tabId"})


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

    def result_ttl_s() -> float:
        return float(app.extensions["pinchtab.config"].scheduler.result_ttl_sec)

    scheduler = Scheduler(run, app.extensions["pinchtab.config"].scheduler.workers, limits, result_ttl_s)
    app.extensions[KEY] = scheduler
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(scheduler.stop)
    scheduler.start()
    return scheduler


def scheduler() -> Scheduler:
    return current_app.extensions[KEY]


def _browser_route(method: str, path: str) -> None:
    adapter = current_app.url_map.bind("localhost")
    try:
        endpoint, _ = adapter.match(path.split("?", 1)[0], method=method)
    except HTTPException:
        endpoint = ""
    if not str(endpoint).startswith("proxy."):
        raise BadRequest(f"{method} {path} is not a browser route: only those can be queued",
                         code="task_path_not_allowed", details={"field": "path"})


def _call(spec: dict[str, Any]) -> tuple[str, str, Any]:
    """(method, path, body) of a task: the call as given, or the one its action stands for."""
    if "path" in spec:
        return spec["method"], spec["path"], spec["body"]
    action = spec["action"].lower()
    tab = f"/tabs/{quote(spec['tabId'], safe='')}" if spec.get("tabId") else ""
    params = {k: v for k, v in (spec.get("params") or {}).items() if k not in RESERVED}
    if action in READS:
        query = {k: v if isinstance(v, str) else str(v).lower() if isinstance(v, bool) else str(v)
                 for k, v in params.items() if isinstance(v, (str, int, float, bool))}
        return "GET", tab + READS[action] + (f"?{urlencode(query)}" if query else ""), None
    body = {**params, "kind": action}
    for key in ("ref", "selector"):
        if spec.get(key):
            body[key] = spec[key]
    return "POST", tab + "/action", body


def _deadline(spec: dict[str, Any], field: str = "deadline") -> float | None:
    when: datetime | None = spec.get("deadline")
    if when is None:
        return None
    if when.timestamp() <= datetime.now().timestamp():
        raise BadRequest(f"{field}: the deadline is in the past", details={"field": field})
    return when.timestamp()


def _agent(asked: str | None) -> str:
    """Whose task it is: the one asked for, else the session's agent, else X-Agent-Id; an agent
    session queues for its own agent only."""
    session_agent = g.get("session_agent")
    agent = asked or session_agent or request.headers.get("X-Agent-Id") or ANONYMOUS
    if session_agent and agent != session_agent:
        raise Forbidden("an agent session queues tasks for its own agent only", code="session_forbidden")
    return agent


def _submit(agent: str, spec: dict[str, Any], deadline: float | None) -> tuple[Task, int]:
    method, path, body = _call(spec)
    _browser_route(method, path)
    return scheduler().submit(agent, method, path, body, action=spec.get("action", "").lower(),
                              tab_id=spec.get("tabId", ""), deadline=deadline)


@bp.post("/tasks")
@bp.arguments(TaskSubmitSchema)
@bp.response(202, TaskRecord)
def submit(req: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Queue a browser call (or an action on a tab); 202 with the task id and its state (429 when the
    queue or the agent's share is full; 400 for a deadline in the past)."""
    agent = _agent(req["agentId"])
    task, position = _submit(agent, req, _deadline(req))
    return {**task.record(), "position": position}, 202


@bp.post("/tasks/batch")
@bp.arguments(TaskBatchSchema)
@bp.response(202, BatchResponse)
def submit_batch(req: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Queue several tasks of one agent at once (at most ``scheduler.maxBatchSize``). Each is queued or,
    when the queue is full, rejected on its own (``state: rejected`` with the reason)."""
    most = current_app.extensions["pinchtab.config"].scheduler.max_batch_size
    if len(req["tasks"]) > most:
        raise BadRequest(f"batch exceeds maximum size: {len(req['tasks'])} tasks, at most {most} "
                         "(scheduler.maxBatchSize)", code="batch_too_large",
                         details={"field": "tasks", "submitted": len(req["tasks"]), "max": most})
    agent = _agent(req["agentId"])
    deadlines = [_deadline(spec, f"tasks.{n}.deadline") for n, spec in enumerate(req["tasks"])]
    calls = [_call(spec) for spec in req["tasks"]]
    for method, path, _body in calls:
        _browser_route(method, path)  # all checked before any is queued
    items: list[dict[str, Any]] = []
    for spec, deadline in zip(req["tasks"], deadlines, strict=True):
        try:
            task, position = _submit(agent, spec, deadline)
        except QueueFull as full:
            items.append({"state": "rejected", "error": full.message, "code": full.code})
            continue
        items.append({"taskId": task.id, "state": task.status, "position": position})
    queued = sum(1 for item in items if "taskId" in item)
    return {"tasks": items, "submitted": queued, "rejected": len(items) - queued}, 202


@bp.get("/tasks")
@bp.arguments(TaskQuerySchema, location="query")
@bp.response(200, TaskListResponse)
def list_tasks(req: dict[str, Any]) -> dict[str, Any]:
    """Tasks, newest first (filter by agent and by state: one or several, comma-separated)."""
    agent = own_agent_only(req.get("agentId"), "list the tasks")
    wanted = {v.strip() for key in ("state", "status") for v in req.get(key, "").split(",") if v.strip()}
    tasks = [t.record() for t in scheduler().list(agent, wanted or None, req["limit"])]
    return {"tasks": tasks, "count": len(tasks)}


def _task(task_id: str) -> Task:
    """The task, if the caller may see it: an agent session, its own agent's only."""
    task = scheduler().get(task_id)
    own_agent_only(task.agent_id, "read or cancel the tasks")
    return task


@bp.get("/tasks/<task_id>")
@bp.response(200, TaskRecord)
def get_task(task_id: str) -> dict[str, Any]:
    """One task: its state and, once run, the call's answer (``result``)."""
    return _task(task_id).record()


@bp.delete("/tasks/<task_id>")
@bp.post("/tasks/<task_id>/cancel")
@bp.response(200, TaskRecord)
def cancel_task(task_id: str) -> dict[str, Any]:
    """Cancel a queued task (409 once it runs or has ended)."""
    _task(task_id)
    return scheduler().cancel(task_id).record()


@bp.get("/scheduler/stats")
@bp.response(200, SchedulerStats)
def stats() -> dict[str, Any]:
    """Queued, running and finished counts, per-agent queue lengths and the limits; and the original's
    ``queue``, ``metrics`` and ``config``."""
    sc = current_app.extensions["pinchtab.config"].scheduler
    config = {"strategy": sc.strategy, "maxQueueSize": sc.max_queue_size, "maxPerAgent": sc.max_per_agent,
              "workerCount": sc.workers, "maxBatchSize": sc.max_batch_size, "resultTTL": f"{sc.result_ttl_sec}s"}
    return {**scheduler().stats(), "config": config}
