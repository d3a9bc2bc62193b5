"""A tab's job queue drops work nobody waits for: a job past its deadline before it starts, and the
jobs of a caller who went away (skipped when queued, stopped at their next wait when running)."""
from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.waits import wait_until

from cdp.errors import Abandoned, CDPTimeout
from cdp.tab_worker import caller_gone

pytestmark = pytest.mark.timeout(60)


def in_thread(fn: Callable[[], Any], gone: Callable[[], bool] | None = None) -> dict[str, Any]:
    """Run ``fn`` on a thread of its own (with ``gone`` as its caller check); its outcome lands in the dict."""
    out: dict[str, Any] = {}

    def body() -> None:
        if gone is not None:
            caller_gone.set(gone)
        try:
            out["value"] = fn()
        except BaseException as exc:
            out["error"] = exc

    t = threading.Thread(target=body, daemon=True)
    t.start()
    out["thread"] = t
    return out


def test_job_still_queued_at_its_deadline_is_skipped_and_its_caller_answered_at_once(tab):
    release = threading.Event()
    blocker = in_thread(lambda: tab.run(lambda: tab.wait_for(release.is_set, 20), 30))
    wait_until(lambda: tab._job is not None, 5)
    ran: list[int] = []
    started = time.monotonic()
    with pytest.raises(CDPTimeout):
        tab.run(lambda: ran.append(1), 0.3)
    assert time.monotonic() - started < 1.0  # not the 5 s margin a started job gets
    release.set()
    blocker["thread"].join(10)
    assert blocker.get("value") is True
    assert tab.run(lambda: "next", 5) == "next"
    assert ran == []  # never run: its caller had its answer already


def test_jobs_of_a_caller_who_left_are_skipped_and_the_running_one_stops(tab):
    left = threading.Event()
    ran: list[int] = []
    running = in_thread(lambda: tab.run(lambda: tab.wait_for(lambda: False, 20), 30), gone=left.is_set)
    wait_until(lambda: tab._job is not None, 5)
    queued = [in_thread(lambda: tab.run(lambda: ran.append(1), 30), gone=left.is_set) for _ in range(5)]
    wait_until(lambda: len(tab._jobs) == 5, 5)
    left.set()
    started = time.monotonic()
    assert tab.run(lambda: "next", 5) == "next"
    assert time.monotonic() - started < 1.0
    for out in [running, *queued]:
        out["thread"].join(5)
        assert isinstance(out.get("error"), Abandoned)
    assert ran == []
