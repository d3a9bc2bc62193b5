"""Signals that only queue: the handler notes the signal and wakes a pipe; the main loop acts.

A Python signal handler runs between two bytecodes of whatever the main thread was doing (holding
a lock, halfway through a dict update): work done there can deadlock or see half a change. So, as
gunicorn's arbiter does, the handler appends the signal number to a queue and the interpreter's
wakeup fd writes a byte to a pipe; the process's loop sleeps in ``select`` on that pipe (and any
other fd it watches), wakes at once, and takes the queued signals in order on its own time.

Used by the processes that serve beside their children or clients: the instance manager of
server mode and the extension daemon.
"""
from __future__ import annotations

import contextlib
import os
import select
import signal
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any

Handler = Callable[[int, Any], Any] | int | None


class SignalQueue:
    """The signals ``signums`` go to :attr:`pending` and wake :meth:`wait`; nothing else happens."""

    def __init__(self, signums: Iterable[int]) -> None:
        self.signums = tuple(signums)
        self.pending: deque[int] = deque()
        self._wake_r = self._wake_w = -1
        self._previous: dict[int, Handler] = {}

    def install(self) -> SignalQueue:
        """Open the wake pipe and put the queueing handler on every signal (main thread only)."""
        if self._wake_r < 0:
            self._wake_r, self._wake_w = os.pipe()
            os.set_blocking(self._wake_r, False)
            os.set_blocking(self._wake_w, False)
        signal.set_wakeup_fd(self._wake_w, warn_on_full_buffer=False)
        for sig in self.signums:
            self._previous.setdefault(sig, signal.getsignal(sig))
            signal.signal(sig, self._queue)
        return self

    def _queue(self, signum: int, _frame: Any) -> None:
        # deque.append is atomic; the wakeup fd has already written its byte.
        self.pending.append(signum)

    def pop(self) -> int | None:
        """The oldest queued signal, or None."""
        try:
            return self.pending.popleft()
        except IndexError:
            return None

    def wait(self, timeout_s: float, fds: Iterable[int] = ()) -> list[int]:
        """Sleep until a signal comes, one of ``fds`` is readable, or ``timeout_s`` passes; the
        readable ``fds`` (the pipe is drained here, never returned)."""
        watched = [fd for fd in (self._wake_r, *fds) if fd >= 0]
        try:
            ready, _, _ = select.select(watched, [], [], timeout_s)
        except InterruptedError:
            return []
        if self._wake_r in ready:
            with contextlib.suppress(BlockingIOError, OSError):
                while os.read(self._wake_r, 4096):
                    pass
        return [fd for fd in ready if fd != self._wake_r]

    def ignore(self) -> None:
        """From now on these signals are ignored and wake nothing: a bounded clean-up runs to its end."""
        for sig in self.signums:
            signal.signal(sig, signal.SIG_IGN)
        signal.set_wakeup_fd(-1)

    def restore(self) -> None:
        """The handlers as they were before :meth:`install`, and no wakeup fd."""
        signal.set_wakeup_fd(-1)
        for sig, handler in self._previous.items():
            signal.signal(sig, handler if handler is not None else signal.SIG_DFL)
        self._previous.clear()

    def close(self) -> None:
        """Close the wake pipe (after :meth:`ignore` or :meth:`restore`); idempotent."""
        for fd in (self._wake_r, self._wake_w):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._wake_r = self._wake_w = -1
