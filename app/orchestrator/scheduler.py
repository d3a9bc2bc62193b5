"""The task queue (``scheduler.*``): browser calls queued by agents, run a few at a time, fairly.

An agent submits a call (method, path, body) and gets a task id at once; ``scheduler.workers``
threads run tasks, taking agents in turn (round robin, the original's ``fair-fifo``), so one agent's
hundred tasks do not keep another agent's single task waiting. The queue is bounded twice:
``maxQueueSize`` tasks in all and ``maxPerAgent`` per agent, each a 429 past its bound. A task may
carry a deadline: one still queued when it passes is not run (it fails, counted as expired).
Finished tasks are kept (at most KEEP_FINISHED, for ``resultTTLSec``) so their results can be
read; a queued task can be cancelled. Counters since the start (submitted, completed, failed,
cancelled, rejected, expired; in all and per agent) feed ``GET /scheduler/stats``.

Running a task is a parameter (``runner``): the server runs it as the same request through its
own app, so auth, routing to instances and errors are exactly those of a direct call.
"""
from __future__ import annotations

import collections
import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from profiles.times import utc_iso

from ..web.errors import APIError

log = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
STATES = (QUEUED, RUNNING, DONE, FAILED, CANCELLED)
KEEP_FINISHED = 1000
AGENTS_COUNTED = 1000  # agents with counters of their own; the longest known are forgotten past it
# The counters of GET /scheduler/stats, under the original's names.
SUBMITTED, COMPLETED, REJECTED, EXPIRED = "submitted", "completed", "rejected", "expired"
_COUNTED = {DONE: COMPLETED, FAILED: FAILED, CANCELLED: CANCELLED}

Runner = Callable[["Task"], tuple[int, Any]]


@dataclass
class Task:
    """One queued browser call and, once run, its answer. ``action`` and ``tab_id``: the task in the
    original's terms, when it was submitted in them; ``deadline``: when it must have started (epoch s)."""

    id: str
    agent_id: str
    method: str
    path: str
    body: Any = None
    action: str = ""
    tab_id: str = ""
    deadline: float | None = None
    status: str = QUEUED
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    result_status: int | None = None
    result: Any = None
    error: str = ""

    def record(self) -> dict[str, Any]:
        """The task as the API shows it: ours (``status``, ``method``, ``path``, ``result``) and the
        original's names for the same (``state``, ``action``, ``completedAt``, ``latencyMs``, ``error``)."""
        out: dict[str, Any] = {"taskId": self.id, "agentId": self.agent_id, "method": self.method, "path": self.path,
                               "action": self.action or f"{self.method} {self.path.split('?', 1)[0]}",
                               "status": self.status, "state": self.status, "createdAt": utc_iso(self.created)}
        if self.tab_id:
            out["tabId"] = self.tab_id
        if self.deadline is not None:
            out["deadline"] = utc_iso(self.deadline)
        if self.started is not None:
            out["startedAt"] = utc_iso(self.started)
        if self.finished is not None:
            out["finishedAt"] = out["completedAt"] = utc_iso(self.finished)
            if self.started is not None:
                out["latencyMs"] = round((self.finished - self.started) * 1000)
        if self.result_status is not None:
            out["result"] = {"status": self.result_status, "body": self.result}
        if self.error:
            out["error"] = self.error
        return out


class QueueFull(APIError):
    """The queue, or this agent's share of it, is full."""

    status = 429
    code = "queue_full"


class Scheduler:
    """Per-agent FIFO queues served round robin by worker threads."""

    def __init__(self, runner: Runner, workers: int, limits: Callable[[], tuple[int, int]],
                 result_ttl_s: Callable[[], float] = lambda: 0.0) -> None:
        self.runner = runner
        self.workers = workers
        self.limits = limits  # (maxQueueSize, maxPerAgent), read on each submit: they may change live
        self.result_ttl_s = result_ttl_s  # how long finished tasks are kept (0: until KEEP_FINISHED push them out)
        self._queues: collections.OrderedDict[str, collections.deque[Task]] = collections.OrderedDict()
        self._tasks: dict[str, Task] = {}
        self._finished: collections.deque[str] = collections.deque()
        self._counts = collections.Counter[str]()
        self._per_agent: dict[str, collections.Counter[str]] = {}
        self._inflight = collections.Counter[str]()  # running tasks per agent
        self._running = 0
        self._cond = threading.Condition()
        self._stopping = False
        self._threads: list[threading.Thread] = []

    # --- lifecycle -------------------------------------------------------------------------------
    def start(self) -> None:
        for n in range(self.workers):
            t = threading.Thread(target=self._work_loop, name=f"task-worker:{n}", daemon=True)
            t.start()
            self._threads.append(t)

    def stop(self) -> None:
        """Wake every worker to exit; queued tasks are cancelled."""
        with self._cond:
            self._stopping = True
            for queue in self._queues.values():
                for task in queue:
                    self._finish(task, CANCELLED)
            self._queues.clear()
            self._cond.notify_all()

    # --- the queue -------------------------------------------------------------------------------
    def submit(self, agent_id: str, method: str, path: str, body: Any = None, *, action: str = "",
               tab_id: str = "", deadline: float | None = None) -> tuple[Task, int]:
        """Queue a call: (task, its position in its agent's queue, 1 first). Raises QueueFull."""
        max_queue, max_agent = self.limits()
        with self._cond:
            if self._stopping:
                raise APIError("the scheduler is stopping", status=503, code="scheduler_stopping")
            queued = sum(len(q) for q in self._queues.values())
            if queued >= max_queue:
                self._count(agent_id, REJECTED)
                raise QueueFull(f"the task queue is full ({max_queue} tasks: scheduler.maxQueueSize)",
                                retryable=True, details={"setting": "scheduler.maxQueueSize", "max": max_queue,
                                                         "agentId": agent_id, "queued": queued})
            queue = self._queues.get(agent_id) or collections.deque()
            if len(queue) >= max_agent:
                self._count(agent_id, REJECTED)
                raise QueueFull(f"agent {agent_id!r} has {max_agent} tasks queued (scheduler.maxPerAgent)",
                                code="agent_queue_full", retryable=True,
                                details={"setting": "scheduler.maxPerAgent", "max": max_agent, "agentId": agent_id,
                                         "queued": len(queue)})
            self._queues[agent_id] = queue  # only now: a refused agent is not put in the line
            task = Task(id="task_" + secrets.token_hex(6), agent_id=agent_id, method=method, path=path, body=body,
                        action=action, tab_id=tab_id, deadline=deadline)
            queue.append(task)
            self._tasks[task.id] = task
            self._count(agent_id, SUBMITTED)
            self._cond.notify()
            return task, len(queue)

    def next_task(self, timeout_s: float) -> Task | None:
        """The next task in round-robin order over agents (marked running), or None at the deadline."""
        deadline = time.monotonic() + timeout_s
        with self._cond:
            while not self._queues and not self._stopping:
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self._cond.wait(left)
            while self._queues and not self._stopping:
                agent, queue = next(iter(self._queues.items()))
                task = queue.popleft()
                # The agent goes to the back of the line; an empty queue leaves it.
                del self._queues[agent]
                if queue:
                    self._queues[agent] = queue
                now = time.time()
                if task.deadline is not None and now > task.deadline:
                    task.error = "its deadline passed while it was queued"
                    self._count(task.agent_id, EXPIRED)
                    self._finish(task, FAILED)
                    continue
                task.status, task.started = RUNNING, now
                self._running += 1
                self._inflight[task.agent_id] += 1
                return task
            return None

    def complete(self, task: Task, status: int, body: Any) -> None:
        with self._cond:
            task.result_status, task.result = status, body
            if status >= 400:
                said = body.get("error") if isinstance(body, dict) else None
                task.error = str(said or f"the call answered {status}")[:1024]
            self._running -= 1
            self._inflight[task.agent_id] -= 1
            if self._inflight[task.agent_id] <= 0:
                del self._inflight[task.agent_id]
            self._finish(task, DONE if status < 400 else FAILED)

    def cancel(self, task_id: str) -> Task:
        """Cancel a queued task; raises APIError 404 (unknown) or 409 (already running or done)."""
        with self._cond:
            task = self.get(task_id)
            if task.status != QUEUED:
                raise APIError(f"task {task_id} is {task.status}: only a queued task can be cancelled",
                               status=409, code="task_not_queued")
            queue = self._queues.get(task.agent_id)
            if queue is not None:
                queue.remove(task)
                if not queue:
                    del self._queues[task.agent_id]
            self._finish(task, CANCELLED)
            return task

    def get(self, task_id: str) -> Task:
        with self._cond:
            self._forget_old()
            task = self._tasks.get(task_id)
        if task is None:
            raise APIError(f"no task {task_id!r}", status=404, code="task_not_found")
        return task

    def list(self, agent_id: str | None = None, status: str | Iterable[str] | None = None,
             limit: int = 100) -> list[Task]:
        """Tasks newest first, filtered by agent and by state (one, or any of several)."""
        states = None if status is None else {status} if isinstance(status, str) else set(status)
        with self._cond:
            self._forget_old()
            tasks = list(self._tasks.values())
        tasks = [t for t in tasks
                 if (agent_id is None or t.agent_id == agent_id) and (states is None or t.status in states)]
        return sorted(tasks, key=lambda t: t.created, reverse=True)[:limit]

    def stats(self) -> dict[str, Any]:
        """Ours (flat counts and limits) and the original's ``queue`` and ``metrics``."""
        max_queue, max_agent = self.limits()
        with self._cond:
            agents = set(self._queues) | set(self._inflight)
            queue = {"totalQueued": sum(len(q) for q in self._queues.values()), "totalInflight": self._running,
                     "agents": {a: {"queued": len(self._queues.get(a, ())), "inflight": self._inflight[a]}
                                for a in sorted(agents)}}
            metrics: dict[str, Any] = {f"tasks{name.capitalize()}": self._counts[name]
                                       for name in (SUBMITTED, COMPLETED, FAILED, CANCELLED, REJECTED, EXPIRED)}
            metrics["agents"] = {a: {name: c[name] for name in (SUBMITTED, COMPLETED, FAILED, CANCELLED, REJECTED)}
                                 for a, c in sorted(self._per_agent.items())}
            return {"queued": queue["totalQueued"], "running": self._running,
                    "done": self._counts[COMPLETED], "failed": self._counts[FAILED],
                    "cancelled": self._counts[CANCELLED],
                    "perAgent": {a: len(q) for a, q in self._queues.items()}, "workers": self.workers,
                    "maxQueueSize": max_queue, "maxPerAgent": max_agent, "queue": queue, "metrics": metrics}

    def _count(self, agent_id: str, what: str) -> None:
        """Under the lock: one more ``what`` in all and for the agent."""
        self._counts[what] += 1
        self._per_agent.setdefault(agent_id, collections.Counter())[what] += 1
        while len(self._per_agent) > AGENTS_COUNTED:  # agent ids are the callers' to make up
            del self._per_agent[next(iter(self._per_agent))]

    def _finish(self, task: Task, status: str) -> None:
        """Under the lock: a task reached its end; the oldest finished ones are forgotten."""
        task.status, task.finished = status, time.time()
        self._count(task.agent_id, _COUNTED[status])
        self._finished.append(task.id)
        while len(self._finished) > KEEP_FINISHED:
            self._tasks.pop(self._finished.popleft(), None)
        self._forget_old()

    def _forget_old(self) -> None:
        """Under the lock: finished tasks older than the result TTL are forgotten (oldest first)."""
        ttl = self.result_ttl_s()
        if ttl <= 0:
            return
        cutoff = time.time() - ttl
        while self._finished:
            task = self._tasks.get(self._finished[0])
            if task is not None and (task.finished or 0) >= cutoff:
                break
            self._tasks.pop(self._finished.popleft(), None)

    def _work_loop(self) -> None:
        while True:
            task = self.next_task(1.0)
            if task is None:
                if self._stopping:
                    return
                continue
            try:
                status, body = self.runner(task)
            except Exception as exc:  # a bug in one task must not take its worker down
                log.exception("task %s failed", task.id)
                status, body = 500, {"error": f"task failed: {exc}", "code": "task_failed"}
            self.complete(task, status, body)
