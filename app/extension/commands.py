"""The command queue between clients and the extension, and the clients waiting for answers.

A client submits ``{type, data, requestId}`` and waits; the extension takes commands one at a time,
first in first out (``GET /poll``), and posts each result (``POST /response``), which completes the
client waiting on that requestId. Unlike the original daemon, a command whose client stopped
waiting also leaves the queue (the original ran it later, long after anyone wanted it), a queued
command expires, and :meth:`CommandQueue.close` answers every waiting client at once, so a daemon
restart loses no command silently.

No I/O here: the HTTP and socket sides call in from their threads; time comes from an injectable
clock, so the deadlines are tested without waiting for them.
"""
from __future__ import annotations

import math
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from .errors import BadCommand, DaemonClosed

Answer = dict[str, Any]
Clock = Callable[[], float]

TIMEOUT_ERROR = "Timeout waiting for extension response"  # the original's words: clients match on them
STOPPING_ERROR = "daemon stopping"
MAX_PENDING = 1000
MAX_WAIT_STEP_S = 1.0  # a waiter looks at the clock at least this often


def failure(request_id: Any, error: str) -> Answer:
    """The answer of a command that failed here, in the extension's shape."""
    return {"requestId": request_id, "success": False, "error": error}


def check_request_id(request_id: Any) -> Any:
    """``request_id`` if it can identify a command (a string or a finite number, as the original CLI's
    ``Date.now()``); raises :class:`BadCommand` otherwise."""
    if isinstance(request_id, bool) or not isinstance(request_id, (str, int, float)):
        raise BadCommand("requestId must be a string or a number")
    if isinstance(request_id, float) and not math.isfinite(request_id):
        raise BadCommand("requestId must be a finite number")
    if request_id == "":
        raise BadCommand("requestId must not be empty")
    return request_id


def check_command(command: Any) -> Any:
    """``command``'s requestId if it can be queued: an object with a type and a requestId; raises
    :class:`BadCommand` otherwise."""
    if not isinstance(command, Mapping):
        raise BadCommand("a command must be a JSON object")
    kind = command.get("type")
    if not isinstance(kind, str) or not kind:
        raise BadCommand("a command needs a \"type\" (a non-empty string)")
    if "requestId" not in command:
        raise BadCommand("a command needs a \"requestId\"")
    return check_request_id(command["requestId"])


class Pending:
    """One submitted command and the client waiting for its answer."""

    def __init__(self, owner: CommandQueue, command: dict[str, Any], deadline: float, queued_until: float) -> None:
        self.command = command
        self.request_id = command["requestId"]
        self.deadline = deadline            # on the queue's clock: answered by then, whatever happens
        self.queued_until = queued_until    # on the queue's clock: taken by the extension by then, or expired
        self.queued = True
        self.answer: Answer | None = None
        self._owner = owner
        self._done = threading.Event()

    def done(self) -> bool:
        return self._done.is_set()

    def wait(self) -> Answer:
        """Block until the answer, the timeout answer or the daemon's stopping answer; return it.

        Never longer than the deadline (plus a clock step): the waiter itself times the command out.
        """
        while True:
            self._owner.sweep()
            if self._done.is_set():
                assert self.answer is not None
                return self.answer
            wake = self.queued_until if self.queued else self.deadline
            remaining = wake - self._owner.clock()
            self._done.wait(min(max(remaining, 0.001), MAX_WAIT_STEP_S))

    def _complete(self, answer: Answer) -> None:
        self.answer = answer
        self.queued = False
        self._done.set()


class CommandQueue:
    """The queue the extension polls and the table of clients waiting for answers; thread-safe.

    ``timeout_s``: how long a client waits by default (the original's 30 s); ``queue_ttl_s``: how long
    a command nobody has polled stays queued (default: the timeout).
    """

    def __init__(self, *, timeout_s: float = 30.0, queue_ttl_s: float | None = None,
                 clock: Clock = time.monotonic, wall_clock: Clock = time.time,
                 max_pending: int = MAX_PENDING) -> None:
        self.timeout_s = timeout_s
        self.queue_ttl_s = timeout_s if queue_ttl_s is None else queue_ttl_s
        self.clock = clock
        self._wall_clock = wall_clock
        self._max_pending = max_pending
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)   # a held poll waits on it for a command
        self._queue: deque[Pending] = deque()
        self._pending: dict[Any, Pending] = {}
        self._closed = False
        self._seen_at: float | None = None        # the queue's clock
        self._seen_at_wall: float | None = None
        self.unknown_responses = 0
        self.expired = 0      # left the queue unpolled
        self.timed_out = 0    # answered with the timeout error

    # --- the client's side

    def submit(self, command: Mapping[str, Any], *, timeout_s: float | None = None,
               deadline: float | None = None) -> Pending:
        """Queue ``command`` for the extension; return its :class:`Pending` to wait on.

        The answer is due within ``timeout_s`` (default the queue's), or by ``deadline`` (the queue's
        clock) when given. Raises :class:`BadCommand` for a command without a type, with a bad
        requestId or one already waiting, and :class:`DaemonClosed` once :meth:`close` ran.
        """
        request_id = check_command(command)
        now = self.clock()
        if deadline is None:
            deadline = now + (self.timeout_s if timeout_s is None else timeout_s)
        pending = Pending(self, dict(command), deadline, min(deadline, now + self.queue_ttl_s))
        with self._lock:
            if self._closed:
                raise DaemonClosed(STOPPING_ERROR)
            if request_id in self._pending:
                raise BadCommand(f"requestId {request_id!r} is already waiting for an answer; use a new one")
            if len(self._pending) >= self._max_pending:
                raise BadCommand(f"too many commands waiting ({self._max_pending}); is the extension there?")
            self._pending[request_id] = pending
            self._queue.append(pending)
            self._arrived.notify()
        return pending

    # --- the extension's side

    def poll(self, wait_s: float = 0.0) -> dict[str, Any] | None:
        """The oldest queued command, taken off the queue; with nothing queued, wait up to ``wait_s``
        (a held poll: the command reaches the extension the moment it is submitted) and then None."""
        self.sweep()
        give_up = time.monotonic() + wait_s   # real time: the wait is a thread's, whatever the clock
        with self._lock:
            while True:
                self._saw_extension()
                if self._queue:
                    pending = self._queue.popleft()
                    pending.queued = False
                    return pending.command
                left = give_up - time.monotonic()
                if left <= 0 or self._closed:
                    return None
                self._arrived.wait(left)

    def respond(self, answer: Mapping[str, Any]) -> bool:
        """Give the waiting client its answer, unchanged; False (and counted) when no client waits
        for that requestId: late, unknown or forged."""
        request_id = answer.get("requestId")
        with self._lock:
            self._saw_extension()
            try:
                pending = self._pending.pop(request_id, None)
            except TypeError:  # an unhashable requestId: no client sent that
                pending = None
            if pending is None:
                self.unknown_responses += 1
                return False
            if pending.queued:  # answered without being polled: it must not run again
                self._queue.remove(pending)
            pending._complete(dict(answer))
            return True

    # --- time and lifetime

    def sweep(self) -> int:
        """Answer every command whose time is up: expired in the queue, or past its deadline.
        Returns how many were answered."""
        now = self.clock()
        answered = 0
        with self._lock:
            for pending in list(self._pending.values()):
                if pending.queued and now >= pending.queued_until:
                    self._queue.remove(pending)
                    self.expired += 1
                    if pending.queued_until < pending.deadline:
                        error = (f"{TIMEOUT_ERROR}: the extension did not take the command within "
                                 f"{self.queue_ttl_s:g} s")
                    else:
                        self.timed_out += 1
                        error = TIMEOUT_ERROR
                elif now >= pending.deadline:
                    self.timed_out += 1
                    error = TIMEOUT_ERROR
                else:
                    continue
                del self._pending[pending.request_id]
                pending._complete(failure(pending.request_id, error))
                answered += 1
        return answered

    def close(self, reason: str = STOPPING_ERROR) -> int:
        """Take no more commands and answer every waiting client with ``reason`` at once.
        Returns how many were waiting."""
        with self._lock:
            self._closed = True
            waiting = list(self._pending.values())
            self._pending.clear()
            self._queue.clear()
            self._arrived.notify_all()
            for pending in waiting:
                pending._complete(failure(pending.request_id, reason))
        return len(waiting)

    @property
    def closed(self) -> bool:
        return self._closed

    # --- what a health check shows

    def extension_seen_ago_s(self) -> float | None:
        """Seconds since the extension last polled or answered; None: never since the start."""
        seen = self._seen_at
        return None if seen is None else max(0.0, self.clock() - seen)

    def health(self) -> dict[str, Any]:
        """``{status, pending, queued}`` as the original answers, then our counters and when the
        extension was last heard from (``extensionSeenAt``, RFC 3339; None: never)."""
        self.sweep()
        ago = self.extension_seen_ago_s()
        with self._lock:
            seen_wall = self._seen_at_wall
            return {
                "status": "ok",
                "pending": len(self._pending),
                "queued": len(self._queue),
                "unknownResponses": self.unknown_responses,
                "expired": self.expired,
                "timedOut": self.timed_out,
                "extensionSeenAt": None if seen_wall is None else _rfc3339(seen_wall),
                "extensionSeenAgoMs": None if ago is None else round(ago * 1000),
                "commandTimeoutSec": self.timeout_s,
            }

    def _saw_extension(self) -> None:
        self._seen_at = self.clock()
        self._seen_at_wall = self._wall_clock()


def _rfc3339(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
