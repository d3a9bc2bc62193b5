"""A tab's jobs and its worker's bell: the two hand-offs between HTTP threads and a tab's worker.

Both are bare locks, the cheapest primitives that do the job: every request crosses them twice, so
their cost is on the path an agent feels (see :mod:`cdp.tab` for how the worker uses them).
"""
from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

log = logging.getLogger(__name__)


class Job:
    """A job for the worker, and its answer: a bare lock is the cheapest one-shot hand-back.

    A job whose caller stopped waiting (its deadline passed, or it went away) is cancelled: the
    worker skips it if it has not started, and a running one stops at its next wait. ``waited``:
    someone waits for the answer (``run``); a ``submit`` job reports its own outcome, so it runs
    however late it is. ``gone``: the caller's ``caller_gone`` check, asked again just before the
    job starts (its waiter only looks now and then).
    """

    __slots__ = ("fn", "deadline", "waited", "gone", "cancelled", "started", "_claim", "_done", "value", "error")

    def __init__(self, fn: Callable[[], Any], deadline: float, *, waited: bool = True,
                 gone: Callable[[], bool] | None = None) -> None:
        self.fn = fn
        self.deadline = deadline
        self.waited = waited
        self.gone = gone
        self.cancelled = False
        self.started = False
        self._claim = threading.Lock()  # start and cancel race: exactly one of them wins
        self._done = threading.Lock()
        self._done.acquire()  # released once, by the worker, when the answer is in
        self.value: Any = None
        self.error: BaseException | None = None

    def start(self) -> bool:
        """On the worker: whether to run the job (False: cancelled first)."""
        with self._claim:
            self.started = not self.cancelled
            return self.started

    def cancel(self) -> bool:
        """Nobody wants the answer any more; whether the job had not started yet."""
        with self._claim:
            self.cancelled = True
            return not self.started

    def unwanted(self) -> bool:
        """Whether nobody waits for the answer any more: cancelled, late, or its caller left."""
        if not self.waited:
            return False
        if self.cancelled or time.monotonic() >= self.deadline:
            return True
        try:
            return self.gone is not None and self.gone()
        except Exception:  # a broken check must not drop work
            log.exception("a caller_gone check failed")
            return False

    def finish(self, value: Any = None, error: BaseException | None = None) -> None:
        self.value, self.error = value, error
        self._done.release()

    def wait(self, timeout_s: float) -> Any:
        if not self._done.acquire(timeout=max(timeout_s, 0.0)):
            raise TimeoutError
        if self.error is not None:
            raise self.error
        return self.value


class Bell:
    """Wakes the worker: rung by any thread, waited on by the worker alone.

    A bare lock held while nobody rang. A ring releases it (a second ring finds it released and
    is absorbed); the worker's wait takes it, consuming the ring. The worker re-checks what it
    waits for after every wake-up, so a ring never gets lost and a stale one costs one loop.
    (A Condition costs a fresh lock per wait and makes the woken thread re-take the
    condition's lock from its notifier: measurably slower on a hop every request takes.)
    """

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._lock.acquire()

    def ring(self, _fut: Future | None = None) -> None:
        try:
            self._lock.release()
        except RuntimeError:  # rung already
            pass

    def wait(self, timeout_s: float) -> None:
        self._lock.acquire(timeout=max(timeout_s, 0.0))
