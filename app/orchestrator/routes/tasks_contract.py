"""What the task queue's routes take and answer (``routes/tasks.py``)."""
from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from ...web.schemas import Loose, Strict
from ..scheduler import STATES


class TaskSpecSchema(Strict):
    """One task: the browser call itself (``path``, ``method``, ``body``), or the original's form, an
    ``action`` on a tab: ``snapshot``, ``text`` and ``screenshot`` read the tab by those routes (with
    ``params`` as their query), any other action is ``POST /tabs/{tabId}/action`` with ``kind`` the
    action, ``ref`` or ``selector``, and ``params`` merged in. No ``tabId``: the agent's current tab."""

    path = fields.String(validate=validate.Regexp(r"^/[A-Za-z0-9/_.\-]{0,200}$",
                                                  error="a browser route path, like /action"))
    method = fields.String(load_default="POST", validate=validate.OneOf(("GET", "POST", "DELETE")))
    body = fields.Dict(load_default=None, allow_none=True)
    action = fields.String(validate=validate.Regexp(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$",
                                                    error="an action name, like click or snapshot"))
    tabId = fields.String(validate=validate.Regexp(r"^[A-Za-z0-9_-]{1,128}$", error="a tab id"))
    selector = fields.String(validate=validate.Length(min=1, max=4096))
    ref = fields.String(validate=validate.Length(min=1, max=64))
    params = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=64)), load_default=None,
                         allow_none=True)
    priority = fields.Integer(metadata={"description": "accepted for the original's clients: an agent's tasks "
                                                       "run in the order they came (fair-fifo)"})
    deadline = fields.AwareDateTime(metadata={"description": "RFC 3339: a task not started by then is not run"})

    @validates_schema
    def call_or_action(self, data: dict[str, Any], **_: Any) -> None:
        if ("path" in data) == ("action" in data):
            raise ValidationError("send either path (the call) or action (the original's form)", "action")
        if "path" in data and any(data.get(k) is not None for k in ("tabId", "selector", "ref", "params")):
            raise ValidationError("only with action", "tabId")
        if "action" in data and data.get("body") is not None:
            raise ValidationError("only with path: an action takes params", "body")


class TaskSubmitSchema(TaskSpecSchema):
    """``POST /tasks``: a browser call to queue (as it would be sent directly) and whose it is."""

    agentId = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=128),
                            metadata={"description": "default: the session's agent, else X-Agent-Id "
                                                     "(required with action, as in the original)"})

    @validates_schema
    def agent_with_action(self, data: dict[str, Any], **_: Any) -> None:
        if "action" in data and not data.get("agentId"):
            raise ValidationError("missing required field 'agentId'", "agentId")


class TaskBatchSchema(Strict):
    """``POST /tasks/batch``: several tasks of one agent (at most ``scheduler.maxBatchSize``)."""

    agentId = fields.String(required=True, validate=validate.Length(min=1, max=128),
                            error_messages={"required": "missing required field 'agentId'"})
    tasks = fields.List(fields.Nested(TaskSpecSchema), required=True,
                        validate=validate.Length(min=1, max=1000, error="batch must contain at least one task"),
                        error_messages={"required": "batch must contain at least one task"})


class TaskQuerySchema(Loose):
    agentId = fields.String()
    state = fields.String(metadata={"description": "one state or several, comma-separated: "
                                                   + ", ".join(STATES)})
    status = fields.String(metadata={"description": "the same as state"})
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))

    @validates_schema
    def known_states(self, data: dict[str, Any], **_: Any) -> None:
        for key in ("state", "status"):
            wanted = [v.strip() for v in data.get(key, "").split(",") if v.strip()]
            unknown = [v for v in wanted if v not in STATES]
            if unknown:
                raise ValidationError(f"unknown state {unknown[0]!r}; one of {', '.join(STATES)}", key)


class TaskRecord(Schema):
    taskId = fields.String(required=True)
    agentId = fields.String(required=True)
    method = fields.String(required=True)
    path = fields.String(required=True)
    action = fields.String(required=True, metadata={"description": "the original's action, or METHOD /path"})
    tabId = fields.String()
    status = fields.String(required=True, metadata={"enum": list(STATES)})
    state = fields.String(required=True, metadata={"description": "the same as status (the original's name)"})
    createdAt = fields.String(required=True)
    deadline = fields.String()
    startedAt = fields.String()
    finishedAt = fields.String()
    completedAt = fields.String(metadata={"description": "the same as finishedAt"})
    latencyMs = fields.Integer()
    result = fields.Dict(metadata={"description": "{status, body}: the call's answer"})
    error = fields.String(metadata={"description": "why a failed task failed"})
    position = fields.Integer(metadata={"description": "on submit: place in the agent's queue (1: next)"})


class TaskListResponse(Schema):
    tasks = fields.List(fields.Nested(TaskRecord), required=True)
    count = fields.Integer(required=True)


class BatchItem(Schema):
    taskId = fields.String()
    state = fields.String(required=True)
    position = fields.Integer()
    error = fields.String(metadata={"description": "why a rejected task was (state rejected)"})
    code = fields.String()


class BatchResponse(Schema):
    tasks = fields.List(fields.Nested(BatchItem), required=True)
    submitted = fields.Integer(required=True, metadata={"description": "tasks queued"})
    rejected = fields.Integer(required=True, metadata={"description": "tasks refused (a full queue)"})


class SchedulerStats(Schema):
    queued = fields.Integer(required=True)
    running = fields.Integer(required=True)
    done = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    cancelled = fields.Integer(required=True)
    perAgent = fields.Dict(required=True)
    workers = fields.Integer(required=True)
    maxQueueSize = fields.Integer(required=True)
    maxPerAgent = fields.Integer(required=True)
    queue = fields.Dict(required=True, metadata={"description": "the original's: {totalQueued, totalInflight, "
                                                                "agents: {id: {queued, inflight}}}"})
    metrics = fields.Dict(required=True, metadata={"description": "counts since the start: tasksSubmitted, "
                                                                  "tasksCompleted, tasksFailed, tasksCancelled, "
                                                                  "tasksRejected, tasksExpired, and per agent"})
    config = fields.Dict(required=True, metadata={"description": "strategy, maxQueueSize, maxPerAgent, "
                                                                "workerCount, maxBatchSize, resultTTL"})
