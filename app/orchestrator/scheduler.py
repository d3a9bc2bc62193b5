"""The task queue (``scheduler.*``): browser calls queued by agents, run a few at a time, fairly.

An agent submits a call (method, path, body) and gets a task id at once; ``scheduler.workers``
threads run tasks, taking agents in turn (round robin), so one agent's hundred tasks do not keep
another agent's single task waiting. The queue is bounded twice: ``maxQueueSize`` tasks in all
and ``maxPerAgent`` per agent, each a 429 past its bound. Finished tasks are kept (bounded) so
their results can be read; a queued task can be cancelled.

Running a task is a parameter (``runner``): the server runs it as the same request through its
own app, so auth, routing to instances and errors are exactly those of a direct call.
"""
from __future__ import annotations

import collections
import logging
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from profiles.times import utc_iso

from ..errors import APIError

log = logging.getLogger(__name__)

QUEUED, RUNNING, DONE, FAILED, CANCELLED = "queued", "running", "done", "failed", "cancelled"
KEEP_FINISHED = 1000

Runner = Callable[["Task"], tuple[int, Any]]


@dataclass
class Task:
    """One queued browser call and, once run, its answer."""

    id: str
    agent_id: str
    method: str
    path: str
    body: Any = None
    status: str = QUEUED
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    result_status: int | None = None
    result: Any = None

    def record(self) -> dict[str, Any]:
        out: dict[str, Any] = {"taskId": self.id, "agentId": self.agent_id, "method": self.method, "path": self.path,
                               "status": self.status, "createdAt": utc_iso(self.created)}
        if self.started is not None:
            out["startedAt"] = utc_iso(self.started)
        if self.finished is not None:
            out["finishedAt"] = utc_iso(self.finished)
        if self.result_status is not None:
            out["result"] = {"status": self.result_status, "body": self.result}
        return out


class QueueFull(APIError):
    """The queue, or this agent's share of it, is full."""

    status = 429
    code = "queue_full"


class Scheduler:
    """Per-agent FIFO queues served round robin by worker threads."""

    def __init__(self, runner: Runner, workers: int, limits: Callable[[], tuple[int, int]]) -> None:
        self.runner = runner
        self.workers = workers
        self.limits = limits  # (maxQueueSize, maxPerAgent), read on each submit: they may change live
        self._queues: collections.OrderedDict[str, collections.deque[Task]] = collections.OrderedDict()
        self._tasks: dict[str, Task] = {}
        self._finished: collections.deque[str] = collections.deque()
        self._counts = collections.Counter[str]()
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
    def submit(self, agent_id: str, method: str, path: str, body: Any = None) -> tuple[Task, int]:
        """Queue a call: (task, its position in its agent's queue, 1 first). Raises QueueFull."""
        max_queue, max_agent = self.limits()
        with self._cond:
            if self._stopping:
                raise APIError("the scheduler is stopping", status=503, code="scheduler_stopping")
            queued = sum(len(q) for q in self._queues.values())
            if queued >= max_queue:
                raise QueueFull(f"the task queue is full ({max_queue} tasks: scheduler.maxQueueSize)",
                                details={"setting": "scheduler.maxQueueSize", "max": max_queue})
            queue = self._queues.setdefault(agent_id, collections.deque())
            if len(queue) >= max_agent:
                raise QueueFull(f"agent {agent_id!r} has {max_agent} tasks queued (scheduler.maxPerAgent)",
                                code="agent_queue_full", details={"setting": "scheduler.maxPerAgent", "max": max_agent})
            task = Task(id="task_" + secrets.token_hex(6), agent_id=agent_id, method=method, path=path, body=body)
            queue.append(task)
            self._tasks[task.id] = task
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
            if self._stopping:
                return None
            agent, queue = next(iter(self._queues.items()))
            task = queue.popleft()
            # The agent goes to the back of the line; an empty queue leaves it.
            del self._queues[agent]
            if queue:
                self._queues[agent] = queue
            task.status, task.started = RUNNING, time.time()
            self._running += 1
            return task

    def complete(self, task: Task, status: int, body: Any) -> None:
        with self._cond:
            task.result_status, task.result = status, body
            self._running -= 1
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
            task = self._tasks.get(task_id)
        if task is None:
            raise APIError(f"no task {task_id!r}", status=404, code="task_not_found")
        return task

    def list(self, agent_id: str | None = None, status: str | None = None, limit: int = 100) -> list[Task]:
        """Tasks newest first, filtered."""
        with self._cond:
            tasks = list(self._tasks.values())
        tasks = [t for t in tasks
                 if (agent_id is None or t.agent_id == agent_id) and (status is None or t.status == status)]
        return sorted(tasks, key=lambda t: t.created, reverse=True)[:limit]

    def stats(self) -> dict[str, Any]:
        max_queue, max_agent = self.limits()
        with self._cond:
            return {"queued": sum(len(q) for q in self._queues.values()), "running": self._running,
                    "done": self._counts[DONE], "failed": self._counts[FAILED], "cancelled": self._counts[CANCELLED],
                    "perAgent": {a: len(q) for a, q in self._queues.items()}, "workers": self.workers,
                    "maxQueueSize": max_queue, "maxPerAgent": max_agent}

    def _finish(self, task: Task, status: str) -> None:
        """Under the lock: a task reached its end; the oldest finished ones are forgotten."""
        task.status, task.finished = status, time.time()
        self._counts[status] += 1
        self._finished.append(task.id)
        while len(self._finished) > KEEP_FINISHED:
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
