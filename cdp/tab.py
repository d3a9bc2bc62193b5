"""A tab: its CDP session, its worker thread and its event queue.

HTTP threads hand work to a tab with ``Tab.run``; the tab's worker thread runs one job at a time
(so actions on a tab never interleave) while other tabs run in parallel. A call that is a single
command (``Tab.command``) goes out from its caller's thread when the tab is idle, in turn all the same. The reader thread only
appends to the tab's inbox; the worker handles events between and *during* jobs: every wait in a
job (``call``, ``wait_for``) pumps the inbox, so state such as "a dialog opened" or "the page
loaded" is current while a job waits, and a waiter registered before its trigger cannot miss a
fast event (it checks state the handlers already recorded).
"""
from __future__ import annotations

import collections
import contextvars
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import Abandoned, CDPTimeout, DialogBlocking, InputUnresponsive, TargetClosed, TargetCrashed
from .intercept import Interceptor
from .jobs import Bell, Job
from .network import NetworkLog, NetworkOptions

if TYPE_CHECKING:
    from .connection import Connection

log = logging.getLogger(__name__)

EVENT_QUEUE_MAX = 5000
# Commands that still answer while a JavaScript dialog blocks the page; every other command on a
# tab with an open dialog fails at once with DialogBlocking instead of hanging until its deadline.
DIALOG_SAFE = frozenset({"Page.handleJavaScriptDialog", "Page.bringToFront", "Page.getNavigationHistory",
                         "Page.navigate", "Page.stopLoading"})
CONSOLE_RING = 1000
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


@dataclass
class Frame:
    """A frame of this tab: which session reaches it and our isolated world's context there."""

    frame_id: str
    session_id: str
    parent_id: str | None = None
    url: str = ""
    name: str = ""
    loader_id: str = ""
    world_ctx: int | None = None  # our isolated world in the frame's current document
    lifecycle: set[str] = field(default_factory=set)  # lifecycle events seen for loader_id
    # Documents replaced by the next one (a page's location.replace while it loads): old loader ->
    # new, so a wait for a document follows it to the one that took its place. The last few only.
    replaced_by: dict[str, str] = field(default_factory=dict)

    def new_document(self, loader_id: str) -> None:
        if self.loader_id:
            self.replaced_by[self.loader_id] = loader_id
            while len(self.replaced_by) > 8:
                del self.replaced_by[next(iter(self.replaced_by))]
        self.loader_id = loader_id
        self.lifecycle = set()

    def successor(self, loader_id: str) -> str:
        """The document that now stands where ``loader_id`` was (itself if not replaced)."""
        for _ in range(len(self.replaced_by)):
            if loader_id not in self.replaced_by:
                break
            loader_id = self.replaced_by[loader_id]
        return loader_id


@dataclass
class Dialog:
    type: str
    message: str
    default_prompt: str = ""
    url: str = ""
    handled: str = ""  # "accepted" / "dismissed" once answered

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.default_prompt:
            out["defaultPrompt"] = self.default_prompt
        return out


class Tab:
    """One page target, attached over a flat session."""

    def __init__(self, conn: Connection, target_id: str, session_id: str, *, world: str,
                 world_script: str = "",
                 extra_setup: Callable[[bool], list[tuple[str, dict[str, Any]]]] | None = None,
                 network: NetworkOptions | None = None) -> None:
        self.conn = conn
        self.world_script = world_script
        self.extra_setup = extra_setup  # more per-session commands (stealth); its flag: an iframe's session
        self.id = target_id
        self.session_id = session_id
        self.world = world
        self.created_at = time.time()
        self.last_used = self.created_at
        self.url = "about:blank"
        self.title = ""
        self.navigated = False  # the first navigation of a fresh tab drops about:blank from history
        self.frames: dict[str, Frame] = {}
        self.main_frame_id: str | None = None
        self.dialog: Dialog | None = None  # an open dialog nobody has answered yet
        self.last_dialog: Dialog | None = None  # the latest dialog, answered or not
        self.dialog_plan: tuple[bool, str] | None = None  # how to answer the next dialog (an action's dialogAction)
        self.auto_accept_dialogs = False
        self.console: collections.deque[dict[str, Any]] = collections.deque(maxlen=CONSOLE_RING)
        self.errors: collections.deque[dict[str, Any]] = collections.deque(maxlen=CONSOLE_RING)
        self.dropped_events = 0
        self.document_epoch = 0  # bumped when the main frame commits a new document
        self.nav_seq = 0  # bumped by every main-frame navigation, same-document ones included
        self.loads_started = 0  # bumped when the main frame starts a navigation to a new document
        self.started_loader = ""  # the loader of that navigation (its document, once it commits)
        self.state: dict[str, Any] = {}  # per-tab bookkeeping of higher layers (refs, last snapshot)
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
        self._install_handlers()
        self.network = NetworkLog(self, network or NetworkOptions())  # capture from the tab's first request
        self.intercept = Interceptor(self)  # the tab's one Fetch path: route rules and resource blocking
        self._thread.start()

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
        """Whether a job runs or waits on this tab."""
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
            if self.dialog is not None and method not in DIALOG_SAFE:
                self.conn.forget(fut)
                raise DialogBlocking(self.dialog.type, self.dialog.message)
            if self._closed is not None:
                self.conn.forget(fut)
                raise self._closed
            if gone is not None and gone():
                self.conn.forget(fut)
                raise Abandoned(f"the caller went away; tab {self.id} dropped its request")
            if time.monotonic() >= deadline:
                self.conn.forget(fut)
                raise CDPTimeout(f"{method} did not answer within {timeout_s:.0f} s")
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

    # --- sessions: the tab's own and its out-of-process iframes' -----------------------------------
    def session_setup(self, frame: bool = False) -> list[tuple[str, dict[str, Any]]]:
        """What every session of this tab enables, the tab's own and each out-of-process iframe's.

        Auto-attach pauses new iframe targets until they are set up (waitForDebuggerOnStart), so
        our world and the console capture are in place before their first script runs.
        """
        return [
            ("Page.enable", {}),
            ("Page.setLifecycleEventsEnabled", {"enabled": True}),
            ("Runtime.enable", {}),
            ("Page.addScriptToEvaluateOnNewDocument",
             {"source": self.world_script, "worldName": self.world, "runImmediately": True}),
            ("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}),
            *NetworkLog.setup_commands(),
            *(self.intercept.setup_commands() if frame else ()),
            *(self.extra_setup(frame) if self.extra_setup else ()),
        ]

    def _on_attached(self, session_id: str, p: dict[str, Any]) -> None:
        child = p.get("sessionId")
        info = p.get("targetInfo") or {}
        if not child:
            return
        if info.get("type") == "iframe":
            for method, params in self.session_setup(frame=True):
                self.send(method, params, child)  # not waited: we are mid-pump on the worker
            self.frame(info["targetId"], child).session_id = child
        # Anything else that auto-attached (workers) just runs; every target must be resumed.
        self.send("Runtime.runIfWaitingForDebugger", {}, child)

    # --- state kept from events ------------------------------------------------------------------
    def _install_handlers(self) -> None:
        self.on("Target.attachedToTarget", self._on_attached)
        self.on("Page.frameAttached", self._on_frame_attached)
        self.on("Page.frameNavigated", self._on_frame_navigated)
        self.on("Page.navigatedWithinDocument", self._on_within_document)
        self.on("Page.frameDetached", self._on_frame_detached)
        self.on("Page.lifecycleEvent", self._on_lifecycle)
        self.on("Page.frameStartedNavigating", self._on_started_navigating)
        self.on("Runtime.executionContextCreated", self._on_context_created)
        self.on("Runtime.executionContextDestroyed", self._on_context_destroyed)
        self.on("Runtime.executionContextsCleared", self._on_contexts_cleared)
        self.on("Page.javascriptDialogOpening", self._on_dialog_opening)
        self.on("Page.javascriptDialogClosed", self._on_dialog_closed)
        self.on("Runtime.consoleAPICalled", self._on_console)
        self.on("Runtime.exceptionThrown", self._on_exception)
        self.on("Target.detachedFromTarget", self._on_detached)
        self.on("Inspector.targetCrashed", self._on_crashed)

    def frame(self, frame_id: str, session_id: str | None = None) -> Frame:
        fr = self.frames.get(frame_id)
        if fr is None:
            fr = self.frames[frame_id] = Frame(frame_id, session_id or self.session_id)
        return fr

    def _on_frame_attached(self, session_id: str, p: dict[str, Any]) -> None:
        self.frame(p["frameId"], session_id).parent_id = p.get("parentFrameId")

    def _on_frame_navigated(self, session_id: str, p: dict[str, Any]) -> None:
        info = p["frame"]
        fr = self.frame(info["id"], session_id)
        fr.session_id = session_id  # a frame that moved to its own process is reached on its session now
        if info.get("parentId") or session_id == self.session_id:
            fr.parent_id = info.get("parentId")  # (an iframe's own session may not name its parent)
        fr.url = info.get("url", "") + info.get("urlFragment", "")
        fr.name = info.get("name", "")
        if info.get("loaderId") != fr.loader_id:
            fr.new_document(info.get("loaderId", ""))
        if fr.parent_id is None and session_id == self.session_id:
            self.main_frame_id = fr.frame_id
            self.url = fr.url
            self.document_epoch += 1
            self.nav_seq += 1

    def _on_within_document(self, session_id: str, p: dict[str, Any]) -> None:
        fr = self.frames.get(p["frameId"])
        if fr is not None:
            fr.url = p.get("url", fr.url)
            if fr.frame_id == self.main_frame_id:
                self.url = fr.url
                self.nav_seq += 1

    def _on_frame_detached(self, session_id: str, p: dict[str, Any]) -> None:
        # "swap" means the frame moved to another process (it becomes an out-of-process iframe).
        if p.get("reason") != "swap":
            self.frames.pop(p["frameId"], None)

    def _on_lifecycle(self, session_id: str, p: dict[str, Any]) -> None:
        fr = self.frame(p["frameId"], session_id)
        if p.get("loaderId") and p["loaderId"] != fr.loader_id:  # a new document is loading
            fr.new_document(p["loaderId"])
        fr.lifecycle.add(p.get("name", ""))

    def _on_started_navigating(self, session_id: str, p: dict[str, Any]) -> None:
        # Only navigations that will replace the document: a same-document one keeps every ref.
        if (p.get("frameId") == self.main_frame_id and session_id == self.session_id
                and p.get("navigationType") not in ("sameDocument", "historySameDocument")):
            self.loads_started += 1
            self.started_loader = p.get("loaderId", "")

    def _on_context_created(self, session_id: str, p: dict[str, Any]) -> None:
        ctx = p["context"]
        aux = ctx.get("auxData") or {}
        if ctx.get("name") == self.world and aux.get("frameId"):
            self.frame(aux["frameId"], session_id).world_ctx = ctx["id"]

    def _on_context_destroyed(self, session_id: str, p: dict[str, Any]) -> None:
        for fr in self.frames.values():
            if fr.world_ctx == p.get("executionContextId") and fr.session_id == session_id:
                fr.world_ctx = None

    def _on_contexts_cleared(self, session_id: str, p: dict[str, Any]) -> None:
        for fr in self.frames.values():
            if fr.session_id == session_id:
                fr.world_ctx = None

    def _on_dialog_opening(self, session_id: str, p: dict[str, Any]) -> None:
        dialog = Dialog(p.get("type", "unknown"), p.get("message", ""), p.get("defaultPrompt", ""), p.get("url", ""))
        self.last_dialog = dialog
        plan = self.dialog_plan or ((True, "") if self.auto_accept_dialogs else None)
        if plan is None:
            self.dialog = dialog  # left for POST /dialog; calls fail fast meanwhile
            return
        self.dialog_plan = None
        params: dict[str, Any] = {"accept": plan[0]}
        if plan[1]:
            params["promptText"] = plan[1]
        self.send("Page.handleJavaScriptDialog", params, session_id)  # not waited: we are mid-pump
        dialog.handled = "accepted" if plan[0] else "dismissed"

    def _on_dialog_closed(self, session_id: str, p: dict[str, Any]) -> None:
        if self.dialog is not None and not self.dialog.handled:
            self.dialog.handled = "accepted" if p.get("result") else "dismissed"
        self.dialog = None

    def _on_console(self, session_id: str, p: dict[str, Any]) -> None:
        parts = []
        for arg in p.get("args", []):
            if "value" in arg:
                parts.append(str(arg["value"]))
            else:
                parts.append(arg.get("description") or arg.get("type", ""))
        entry: dict[str, Any] = {"timestamp": _ms_iso(p.get("timestamp")), "level": p.get("type", "log"),
                                 "message": " ".join(parts)}
        frames = (p.get("stackTrace") or {}).get("callFrames") or []
        if frames and frames[0].get("url"):
            entry["source"] = frames[0]["url"]
        self.console.append(entry)

    def _on_exception(self, session_id: str, p: dict[str, Any]) -> None:
        d = p.get("exceptionDetails") or {}
        exc = d.get("exception") or {}
        entry: dict[str, Any] = {"timestamp": _ms_iso(p.get("timestamp")),
                                 "message": exc.get("description") or d.get("text", "")}
        for src, key in (("url", "url"), ("lineNumber", "line"), ("columnNumber", "column")):
            if d.get(src) not in (None, ""):
                entry[key] = d[src]
        self.errors.append(entry)

    def _on_detached(self, session_id: str, p: dict[str, Any]) -> None:
        if p.get("sessionId") == self.session_id:
            self.fail(TargetClosed(f"tab {self.id} was closed"))
        else:  # an out-of-process iframe or worker went away
            for fid in [f.frame_id for f in self.frames.values() if f.session_id == p.get("sessionId")]:
                self.frames.pop(fid, None)

    def _on_crashed(self, session_id: str, p: dict[str, Any]) -> None:
        if session_id == self.session_id:
            self.fail(TargetCrashed(f"tab {self.id} crashed; close it and open a new one"))


def _ms_iso(ts: float | None) -> str:
    """CDP timestamps (ms since epoch) as ISO 8601 UTC."""
    t = (ts / 1000.0) if ts else time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int((t % 1) * 1000):03d}Z"

