"""The task queue (app/orchestrator/scheduler.py) as pure logic: fairness between agents, its
bounds, cancelling, deadlines, the result TTL, the original's names and counters, and its workers
(a runner we control stands in for the browser call; the real call through a server is in
test_server_routes.py)."""
from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from support.waits import wait_until

from app.orchestrator.scheduler import DONE, FAILED, QueueFull, Scheduler, Task
from app.web.errors import APIError


def idle_scheduler(max_queue: int = 100, max_agent: int = 10) -> Scheduler:
    return Scheduler(lambda task: (200, {}), workers=1, limits=lambda: (max_queue, max_agent))


def test_agents_take_turns_so_one_busy_agent_does_not_starve_another():
    s = idle_scheduler()
    for n in range(4):
        s.submit("busy", "POST", "/action", {"n": n})
    s.submit("quiet", "POST", "/action", {"n": 0})
    s.submit("other", "POST", "/action", {"n": 0})
    order = []
    while (task := s.next_task(0.01)) is not None:
        order.append((task.agent_id, task.body["n"]))
    assert order == [("busy", 0), ("quiet", 0), ("other", 0), ("busy", 1), ("busy", 2), ("busy", 3)]


def test_the_queue_and_each_agents_share_are_bounded():
    limits = [3, 2]
    s = Scheduler(lambda task: (200, {}), workers=1, limits=lambda: tuple(limits))  # type: ignore[arg-type]
    s.submit("a", "GET", "/title")
    _, position = s.submit("a", "GET", "/title")
    assert position == 2
    with pytest.raises(QueueFull) as info:
        s.submit("a", "GET", "/title")
    assert info.value.code == "agent_queue_full" and info.value.status == 429
    s.submit("b", "GET", "/title")
    with pytest.raises(QueueFull) as info:
        s.submit("c", "GET", "/title")
    assert info.value.code == "queue_full" and info.value.details["setting"] == "scheduler.maxQueueSize"
    limits[0] = 4  # changed live (PUT /api/config)
    s.submit("c", "GET", "/title")
    assert s.stats()["queued"] == 4 and s.stats()["perAgent"] == {"a": 2, "b": 1, "c": 1}


def test_a_queued_task_can_be_cancelled_a_running_one_cannot():
    s = idle_scheduler()
    first, _ = s.submit("a", "GET", "/title")
    second, _ = s.submit("a", "GET", "/url")
    assert s.cancel(second.id).status == "cancelled"
    running = s.next_task(0.01)
    assert running is first
    with pytest.raises(APIError) as info:
        s.cancel(first.id)
    assert info.value.status == 409
    with pytest.raises(APIError) as info:
        s.get("task_nope")
    assert info.value.status == 404
    assert s.next_task(0.01) is None and s.stats()["cancelled"] == 1


def test_workers_run_tasks_and_keep_their_answers_and_a_broken_runner_fails_one_task():
    release = threading.Event()

    def run(task: Task) -> tuple[int, Any]:
        if task.path == "/boom":
            raise RuntimeError("bug")
        if task.path == "/missing":
            return 404, {"code": "not_found"}
        release.wait(5)  # holds one worker: the other runs the rest
        return 200, {"ran": task.path}

    s = Scheduler(run, workers=2, limits=lambda: (10, 10))
    s.start()
    try:
        ok, _ = s.submit("a", "GET", "/title")
        missing, _ = s.submit("b", "GET", "/missing")
        boom, _ = s.submit("c", "GET", "/boom")
        wait_until(lambda: s.get(boom.id).status == FAILED and s.get(missing.id).status == FAILED, 5)
        assert s.get(ok.id).status == "running" and s.stats()["running"] == 1
        release.set()
        wait_until(lambda: s.get(ok.id).status == DONE, 5)
        assert s.get(ok.id).record()["result"] == {"status": 200, "body": {"ran": "/title"}}
        assert s.get(boom.id).record()["result"]["body"]["code"] == "task_failed"
        assert [t.id for t in s.list(agent_id="b")] == [missing.id]
    finally:
        s.stop()
    with pytest.raises(APIError):
        s.submit("a", "GET", "/title")  # stopped: no new work


def test_a_task_whose_deadline_passed_in_the_queue_is_not_run_and_counts_as_expired():
    ran: list[str] = []
    s = Scheduler(lambda task: (ran.append(task.id), (200, {}))[1], workers=1, limits=lambda: (10, 10))
    late, _ = s.submit("a", "GET", "/title", deadline=time.time() - 1)
    soon, _ = s.submit("a", "GET", "/url", deadline=time.time() + 60)
    assert s.next_task(0.01) is soon  # the late one was skipped, not run
    assert s.get(late.id).status == FAILED and "deadline" in s.get(late.id).record()["error"]
    metrics = s.stats()["metrics"]
    assert (metrics["tasksExpired"], metrics["tasksFailed"], metrics["tasksSubmitted"]) == (1, 1, 2)
    assert s.get(soon.id).record()["deadline"].endswith("Z") and not ran


def test_records_speak_the_originals_names_too_and_lists_filter_by_several_states():
    s = idle_scheduler()
    done, _ = s.submit("a", "POST", "/tabs/T1/action", {"kind": "click"}, action="click", tab_id="T1")
    queued, _ = s.submit("a", "GET", "/title")
    cancelled, _ = s.submit("a", "GET", "/url")
    s.cancel(cancelled.id)
    s.complete(s.next_task(0.01), 200, {"success": True})
    record = s.get(done.id).record()
    assert (record["state"], record["status"], record["action"], record["tabId"]) == ("done", "done", "click", "T1")
    assert record["completedAt"] == record["finishedAt"] and record["latencyMs"] >= 0
    assert s.get(queued.id).record()["action"] == "GET /title"  # a call given as such names itself
    assert {t.id for t in s.list(status=("done", "cancelled"))} == {done.id, cancelled.id}
    assert [t.id for t in s.list(status="queued")] == [queued.id]
    other = idle_scheduler()
    failed, _ = other.submit("b", "GET", "/title")
    other.complete(other.next_task(0.01), 404, {"error": "tab not found", "code": "tab_not_found"})
    assert other.get(failed.id).record()["error"] == "tab not found"


def test_stats_give_the_originals_queue_and_metrics_with_rejections():
    s = Scheduler(lambda task: (200, {}), workers=1, limits=lambda: (10, 1))
    s.submit("a", "GET", "/title")
    with pytest.raises(QueueFull):
        s.submit("a", "GET", "/url")
    s.submit("b", "GET", "/title")
    running = s.next_task(0.01)
    stats = s.stats()
    assert stats["queue"]["totalQueued"] == 1 and stats["queue"]["totalInflight"] == 1
    assert stats["queue"]["agents"][running.agent_id] == {"queued": 0, "inflight": 1}
    assert stats["metrics"]["tasksRejected"] == 1 and stats["metrics"]["agents"]["a"]["rejected"] == 1
    assert stats["metrics"]["tasksSubmitted"] == 2 and stats["perAgent"] == {"b" if running.agent_id == "a" else "a": 1}


def test_finished_tasks_are_forgotten_after_the_result_ttl():
    ttl = [0.0]
    s = Scheduler(lambda task: (200, {}), workers=1, limits=lambda: (10, 10), result_ttl_s=lambda: ttl[0])
    old, _ = s.submit("a", "GET", "/title")
    s.complete(s.next_task(0.01), 200, {})
    s.get(old.id).finished = time.time() - 10  # it finished a while ago
    assert s.get(old.id).status == DONE  # no TTL: kept
    ttl[0] = 5.0
    with pytest.raises(APIError) as gone:
        s.get(old.id)
    assert gone.value.status == 404 and s.list() == []
