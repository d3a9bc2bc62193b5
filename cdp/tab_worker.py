"""A tab's worker thread and event queue: the part of ``cdp.tab.Tab`` that runs work and waits.

HTTP threads hand work to a tab with ``run``; the tab's worker thread runs one job at a time (so
actions on a tab never interleave) while other tabs run in parallel. A call that is a single
command (``command``) goes out from its caller's thread when the tab is idle, in turn all the same.
The reader thread only appends to the tab's inbox; the worker handles events between and *during*
jobs: every wait in a job (``call``, ``wait_for``) pumps the inbox, so state such as "a dialog
opened" or "the page loaded" is current while a job waits, and a waiter registered before its
trigger cannot miss a fast event (it checks state the handlers already recorded).
"""
from __future__ import annotations

import collections
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from typing import TYPE_CHECKING, Any

from .errors import Abandoned, CDPTimeout, DialogBlocking, InputUnresponsive, TargetClosed
from .jobs import Bell, Job

if TYPE_CHECKING:
    from .connection import Connection
    from .tab import Dialog

log = logging.getLogger(__name__)

EVENT_QUEUE_MAX = 5000
# Commands that still answer while a JavaScript dialog blocks the page; every other command on a
# tab with an open dialog fails at once with DialogBlocking instead of hanging until its deadline.
DIALOG_SAFE = frozenset({"Page.handleJavaScriptDialog", "Page.bringToFront", "Page.getNavigationHistory",
                         "Page.navigate", "Page.stopLoading"})
# After an input event went unanswered, the next ones get this long: a renderer whose input pipeline
# is stuck (a wheel of 1e308 px does it) never answers input again until a new document, and each
# caller should learn that in a second, not after the whole action timeout.
INPUT_PROBE_S = 1.0
QUEUE_MARGIN_S = 5.0  # how long past its deadline a waiter waits for a job that has started
GONE_CHECK_S = 0.1  # how often a waiter asks whether its caller is still there
DIRECT_CHECK_S = 0.05  # how often a ``command`` waiter looks for a dialog, a closed tab, a caller gone
Handler = Callable[[str, dict[str, Any]], None]

# Whether the caller of ``Tab.run`` on this thread (or context) has gone away: set by the layer
# that serves callers (for HTTP: the client closed its connection), None when nobody can tell.
caller_gone: contextvars.ContextVar[Callable[[], bool] | None] = contextvars.ContextVar("caller_gone",
                                                                                        default=None)


class TabWorker:
    """One target's session, worked by a thread of its own. ``cdp.tab.Tab`` adds what the events
    say of the page (``dialog`` and ``document_epoch`` are its, read here) and starts the thread."""

    dialog: Dialog | None  # an open dialog nobody has answered yet: commands fail fast meanwhile
    document_epoch: int  # the main frame's current document (input found stuck stays so until it changes)

    def __init__(self, conn: Connection, target_id: str, session_id: str) -> None:
        self.conn = conn
        self.id = target_id
        self.session_id = session_id
        self.created_at = time.time()
        self.last_used = self.created_at
        self.dropped_events = 0
        self.input_stuck_epoch: int | None = None  # the document whose input events stopped answering
        self._handlers: dict[str, list[Handler]] = collections.defaultdict(list)
        self._bell = Bell()
        self._events: collections.deque[tuple[str, dict[str, Any]]] = collections.deque()
        self._jobs: collections.deque[Job] = collections.deque()
        self._closed: Exception | None = None
        self._on_close: list[Callable[[Exception], None]] = []  # told once, when the tab closes or crashes
        self._job_deadline: float | None = None
        self._job: Job | None = None  # the job the worker runs now
        self._turn = threading.Lock()  # who has the tab next: the worker's next job, or a direct ``command``
        self._taken = False  # the worker holds a job (from taking it off the queue to its answer)
        self._direct = False  # a ``command`` sent from its caller's thread waits for its answer
        # Shared by a browser's tabs: how many run a job at once (instanceDefaults.maxParallelTabs).
        self.gate: threading.Semaphore | None = None
        self._thread = threading.Thread(target=self._work_loop, name=f"tab:{target_id[:8]}", daemon=True)

    # --- from the reader thread: queue only ------------------------------------------------
    def deliver(self, session_id: str, msg: dict[str, Any]) -> None:
        # deque appends and pops are atomic: the reader appends, the worker pops from the left.
        if len(self._events) >= EVENT_QUEUE_MAX:
            try:
                self._events.popleft()  # oldest dropped and counted, never block the reader
                self.dropped_events += 1
            except IndexError:  # the worker just emptied it
                pass
        self._events.append((session_id, msg))
        self._bell.ring()

    def fail(self, exc: Exception) -> None:
        first = self._closed is None
        if first:
            self._closed = exc
        self._bell.ring()
        if first:
            for callback in list(self._on_close):
                callback(exc)

    def when_closed(self, callback: Callable[[Exception], None]) -> Callable[[], None]:
        """Call ``callback(reason)`` (on the thread that saw it) once the tab is gone; returns an undo."""
        self._on_close.append(callback)
        if self._closed is not None:
            callback(self._closed)
        return lambda: self._on_close.remove(callback) if callback in self._on_close else None

    # --- from HTTP threads -----------------------------------------------------------------------
    @property
    def closed(self) -> Exception | None:
        return self._closed

    @property
    def busy(self) -> bool:
        """Whether a job (or a command sent direct) runs or waits on this tab."""
        return self._taken or bool(self._jobs) or self._direct

    def run(self, fn: Callable[[], Any], timeout_s: float) -> Any:
        """Run ``fn`` on this tab's worker, after the jobs before it; wait at most ``timeout_s``.

        Raises CDPTimeout when the job did not start by its deadline (it is then skipped) or did
        not finish soon after it, and Abandoned when ``caller_gone`` says the caller left (the job
        is skipped, or stopped at its next wait): work nobody waits for must not delay the next.
        """
        if self._closed is not None:
            raise self._closed
        gone = caller_gone.get()
        job = Job(fn, time.monotonic() + timeout_s, gone=gone)
        self._jobs.append(job)
        self._bell.ring()
        if self._closed is not None:  # closed meanwhile: the worker may have drained its queue already
            try:
                self._jobs.remove(job)
                raise self._closed
            except ValueError:  # the worker took it and answers it
                pass
        self.last_used = time.time()
        return self._wait(job, timeout_s, gone)

    def command(self, method: str, params: dict[str, Any], timeout_s: float) -> dict[str, Any]:
        """One CDP command for a caller, with ``run``'s answers (DialogBlocking, CDPTimeout, Abandoned).

        When the tab is idle (no job runs or waits, no other such command is out, no dialog is
        open, and the browser's parallel slots allow), the command goes out from the caller's
        thread and its answer comes straight back from the reader: two thread hops fewer than a
        job, most of what a trivial call costs on top of CDP. Otherwise it queues as a job of its
        own. Either way the worker keeps the events, and a job that comes meanwhile waits for the
        answer: actions on a tab still never interleave.
        """
        gate = self.gate
        with self._turn:
            direct = not (self._taken or self._jobs or self._direct or self.dialog is not None
                          or self._closed is not None)
            if direct and gate is not None and not gate.acquire(blocking=False):
                direct = False
            self._direct = direct or self._direct
        if not direct:
            return self.run(lambda: self.call(method, params), timeout_s)
        self.last_used = time.time()
        try:
            return self._direct_answer(self.conn.send(method, params, self.session_id), method, timeout_s)
        finally:
            self._direct = False
            if gate is not None:
                gate.release()
            if self._taken or self._jobs:
                self._bell.ring()  # a job waits for this answer

    def _direct_answer(self, fut: Future, method: str, timeout_s: float) -> dict[str, Any]:
        answered = threading.Lock()
        answered.acquire()
        fut.add_done_callback(lambda _f: answered.release())
        deadline = time.monotonic() + timeout_s
        gone = caller_gone.get()
        while not answered.acquire(timeout=DIRECT_CHECK_S):
            stop: Exception | None = None
            if self.dialog is not None and method not in DIALOG_SAFE:
                stop = DialogBlocking(self.dialog.type, self.dialog.message)
            elif self._closed is not None:
                stop = self._closed
            elif gone is not None and gone():
                stop = Abandoned(f"the caller went away; tab {self.id} dropped its request")
            elif time.monotonic() >= deadline:
                stop = CDPTimeout(f"{method} did not answer within {timeout_s:.0f} s")
            if stop is not None:
                self.conn.forget(fut)  # a late answer is dropped
                raise stop
        return fut.result()

    def _wait(self, job: Job, timeout_s: float, gone: Callable[[], bool] | None) -> Any:
        while True:
            # Not started by its deadline: dropped. Started: it bounds its own waits by its
            # deadline, and the margin covers its last step.
            limit = job.deadline + (QUEUE_MARGIN_S if job.started else 0.0)
            left = limit - time.monotonic()
            try:
                return job.wait(min(left, GONE_CHECK_S) if gone is not None else left)
            except TimeoutError:
                pass
            if gone is not None and gone():
                self._cancel(job)
                raise Abandoned(f"the caller went away; tab {self.id} dropped its request")
            if time.monotonic() >= limit:
                self._cancel(job)
                raise CDPTimeout(f"tab {self.id} is busy: the request did not finish within {timeout_s:.0f} s")

    def _cancel(self, job: Job) -> bool:
        """Cancel ``job``; wake the worker so a running job sees it. Whether it had not started."""
        before_start = job.cancel()
        self._bell.ring()
        return before_start

    # --- on the worker thread --------------------------------------------------------------------
    def on(self, method: str, handler: Handler) -> None:
        """Run ``handler(session_id, params)`` on the worker for every ``method`` event."""
        self._handlers[method].append(handler)

    def off(self, method: str, handler: Handler) -> None:
        """Stop running ``handler`` for ``method`` events (call it on the worker, as ``on``)."""
        handlers = self._handlers.get(method)
        if handlers and handler in handlers:
            handlers.remove(handler)

    def submit(self, fn: Callable[[], Any], timeout_s: float) -> None:
        """Queue ``fn`` for the worker and return at once (it runs after the jobs before it).

        For work that must not hold its caller: an event handler on the worker itself, or a thread
        that answers later. ``fn`` reports its own outcome; an error it raises is logged and dropped.
        """
        def guarded() -> None:
            try:
                fn()
            except Exception:
                log.exception("tab %s: a submitted job failed", self.id)

        if self._closed is not None:
            raise self._closed
        self._jobs.append(Job(guarded, time.monotonic() + timeout_s, waited=False))
        self._bell.ring()

    def remaining(self, timeout_s: float | None = None) -> float:
        """Seconds left for a wait: the smaller of ``timeout_s`` and the current job's deadline."""
        now = time.monotonic()
        left = float("inf") if timeout_s is None else timeout_s
        if self._job_deadline is not None:
            left = min(left, self._job_deadline - now)
        return max(left, 0.0) if left != float("inf") else 30.0

    def send(self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None) -> Future:
        fut = self.conn.send(method, params, session_id or self.session_id)
        fut.add_done_callback(self._bell.ring)
        return fut

    def call(self, method: str, params: dict[str, Any] | None = None, *, session_id: str | None = None,
             timeout_s: float | None = None) -> dict[str, Any]:
        """Send a command on this tab's session and wait for its result, handling events meanwhile.

        A JavaScript dialog stops the page from answering: a command sent while one is open, or
        whose wait sees one open, raises DialogBlocking at once (bar the few in DIALOG_SAFE).
        """
        if threading.current_thread() is not self._thread:
            return self.conn.call(method, params, session_id or self.session_id, timeout_s or 30.0)
        if self.dialog is not None and method not in DIALOG_SAFE:
            raise DialogBlocking(self.dialog.type, self.dialog.message)
        fut = self.send(method, params, session_id)
        return self.wait_result(fut, method, timeout_s)

    def wait_result(self, fut: Future, method: str, timeout_s: float | None = None) -> dict[str, Any]:
        watch_dialog = method not in DIALOG_SAFE
        interrupt = (lambda: self.dialog is not None) if watch_dialog else None
        is_input = method.startswith("Input.")
        stuck = is_input and self.input_stuck
        if stuck:  # only a probe: see INPUT_PROBE_S
            timeout_s = min(self.remaining(timeout_s), INPUT_PROBE_S)
        sent_at = time.monotonic()
        try:
            answered = self.wait_for(fut.done, timeout_s, interrupt=interrupt)
        except Abandoned:
            self.conn.forget(fut)
            if is_input and time.monotonic() - sent_at >= INPUT_PROBE_S:
                self._input_stuck(method)  # its caller gave up on it: so would the next one
            raise
        if not answered:
            self.conn.forget(fut)
            if interrupt is not None and interrupt():
                raise DialogBlocking(self.dialog.type, self.dialog.message)  # type: ignore[union-attr]
            if is_input:
                self._input_stuck(method)
            if stuck:
                raise InputUnresponsive(f"the page does not acknowledge input events ({method}): its renderer "
                                        "is busy or its input pipeline is stuck; reload or navigate the tab")
            raise CDPTimeout(f"{method} did not answer in time")
        if is_input:
            self.input_stuck_epoch = None  # answered: whatever held input up has passed
        return fut.result()

    @property
    def input_stuck(self) -> bool:
        """Whether input events on the current document went unanswered (see INPUT_PROBE_S)."""
        return self.input_stuck_epoch is not None and self.input_stuck_epoch == self.document_epoch

    def _input_stuck(self, method: str) -> None:
        if self.input_stuck_epoch != self.document_epoch:
            log.warning("tab %s: %s unanswered; input marked stuck until a new document", self.id, method)
        self.input_stuck_epoch = self.document_epoch

    def wait_for(self, predicate: Callable[[], bool], timeout_s: float | None = None, *,
                 interrupt: Callable[[], bool] | None = None) -> bool:
        """Handle events until ``predicate()`` holds (True) or the time is up (False)."""
        deadline = time.monotonic() + self.remaining(timeout_s)
        while True:
            self._pump()
            if predicate():
                # The reader queues an event before it hands over a later reply: what came before
                # the answer (a commit the answer already reflects) is handled before we act on it.
                self._pump()
                return True
            if interrupt is not None and interrupt():
                return False
            if self._closed is not None:
                raise self._closed
            if self._job is not None and self._job.cancelled:
                raise Abandoned("nobody waits for this job any more")
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if not self._events and self._closed is None:
                self._bell.wait(min(left, 1.0))

    def _pump(self) -> None:
        while True:
            try:
                session_id, msg = self._events.popleft()
            except IndexError:
                return
            self._dispatch(session_id, msg)

    def _dispatch(self, session_id: str, msg: dict[str, Any]) -> None:
        for handler in self._handlers.get(msg.get("method", ""), ()):
            try:
                handler(session_id, msg.get("params") or {})
            except Exception:  # a broken handler must not kill the tab
                log.exception("tab %s: handler for %s failed", self.id, msg.get("method"))

    def _work_loop(self) -> None:
        while True:
            while not self._jobs and not self._events and self._closed is None:
                self._bell.wait(5.0)
            with self._turn:  # the tab is the job's from here: no command goes out direct (``command``)
                job = self._jobs.popleft() if self._jobs else None
                self._taken = job is not None
            closed = self._closed
            self._pump()
            if job is None:
                if closed is not None:
                    break
                continue
            try:
                self._take(job, closed)
            finally:
                self._taken = False
        # Closed: fail whatever is still queued, at once (run() refuses new jobs from now on).
        while self._jobs:
            self._jobs.popleft().finish(error=self._closed or TargetClosed("tab closed"))

    def _take(self, job: Job, closed: Exception | None) -> None:
        if closed is not None:
            job.finish(error=closed)
            return
        if job.unwanted():
            job.cancel()  # its waiter has its answer (or gets it now): the work is nobody's
        if not job.start():
            log.debug("tab %s: skipped a job nobody waits for", self.id)
            job.finish(error=Abandoned("nobody waits for this job any more"))
            return
        while self._direct and self._closed is None and time.monotonic() < job.deadline:
            self._pump()  # a command sent direct before the job came: the job waits for its answer
            self._bell.wait(min(DIRECT_CHECK_S, max(job.deadline - time.monotonic(), 0.0)))
        gate = self.gate
        if gate is not None and not gate.acquire(timeout=max(job.deadline - time.monotonic(), 0.0)):
            job.finish(error=CDPTimeout(f"tab {self.id} waited for a free slot past its deadline: "
                                        "other tabs were busy (instanceDefaults.maxParallelTabs)"))
            return
        self._job_deadline, self._job = job.deadline, job
        try:
            value = job.fn()
        except BaseException as exc:  # handed to the caller, who maps it to an answer
            self._job_deadline, self._job = None, None
            job.finish(error=exc)
        else:
            self._job_deadline, self._job = None, None
            job.finish(value)
        finally:
            if gate is not None:
                gate.release()
