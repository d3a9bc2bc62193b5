"""Following a long run as it goes: ``POST /scrape`` and ``POST /audit`` with ``Accept: text/event-stream``.

A caller that names ``text/event-stream`` in its ``Accept`` header gets Server-Sent Events on the
same POST instead of one JSON answer at the end:

* ``progress``: ``{done, total, url, errors}``: pages finished, pages known so far (a crawl finds
  more as it goes, so ``total`` may grow), the page last started, and how many pages failed;
* ``result``: the whole report, exactly the plain POST's JSON; the last event;
* ``error``: ``{error, code}`` instead of ``result`` when the run failed after the stream began.

Validation and planning happen before the stream starts, so a bad request is still a plain 4xx
``{error, code}``. Bounds: only the latest progress is kept (a slow reader skips states, nothing
queues up), a stream takes one of the long-lived connection slots (``debug.maxConnections``: 503
past it), a caller that leaves stops the run before its next page, and no stream outlives
``MAX_STREAM_S`` (the run is cancelled and the stream ends with an ``error`` event).
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from flask import Request, Response

from ..sockets import limiter
from ..web.errors import APIError

log = logging.getLogger(__name__)

EVENT_STREAM = "text/event-stream"
HEARTBEAT_S = 15.0       # a comment line this often keeps proxies from closing an idle stream
MAX_STREAM_S = 30 * 60.0  # the longest a streamed run may last, whatever its own deadlines say
MIN_EVENT_GAP_S = 0.05   # progress events at most this often: a fast crawl does not flood the reader


def wants_stream(req: Request) -> bool:
    """Whether the caller asked for events: ``text/event-stream`` named explicitly in ``Accept``
    (``*/*`` alone keeps the plain JSON answer, so existing clients see no change)."""
    return any(value == EVENT_STREAM and quality > 0 for value, quality in req.accept_mimetypes)


class Cancelled(Exception):
    """The run was stopped because nobody follows it any more."""


class Progress:
    """How far one run is; thread-safe. Writers are the run's workers, the reader is the stream."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.done = self.total = self.errors = 0
        self.url = ""
        self.version = 0
        self.cancelled = threading.Event()
        self.ended = False  # set by wake(): a reader's wait returns at once, the version unchanged

    def _changed(self) -> None:
        self.version += 1
        self._cond.notify_all()

    def found(self, total: int) -> None:
        """The pages known so far (never below those already done)."""
        with self._cond:
            total = max(total, self.done)
            if total != self.total:
                self.total = total
                self._changed()

    def started(self, url: str) -> None:
        """A page is being worked on: it is the current URL."""
        with self._cond:
            self.url = url
            self._changed()

    def finished(self, url: str, failed: bool) -> None:
        """A page is done (``failed``: its entry has an error)."""
        with self._cond:
            self.done += 1
            self.errors += failed
            self.total = max(self.total, self.done)
            self.url = url
            self._changed()

    def check(self) -> None:
        """Raise :class:`Cancelled` when nobody follows the run any more (between pages)."""
        if self.cancelled.is_set():
            raise Cancelled

    def view(self) -> dict[str, Any]:
        with self._cond:
            return {"done": self.done, "total": self.total, "url": self.url, "errors": self.errors}

    def wait(self, seen: int, timeout_s: float) -> int:
        """Block until the version passes ``seen``, the run ends or ``timeout_s`` passes; the current version."""
        with self._cond:
            self._cond.wait_for(lambda: self.version != seen or self.ended, timeout_s)
            return self.version

    def wake(self) -> None:
        """Wake the reader (the run ended)."""
        with self._cond:
            self.ended = True
            self._cond.notify_all()


def sse(event: str, data: Any) -> str:
    """One event in the text/event-stream format."""
    return f"event: {event}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"


def stream_run(run: Callable[[Progress], dict[str, Any]], progress: Progress | None = None,
               name: str = "run") -> Response:
    """The response that runs ``run(progress)`` on a thread of its own and streams its progress,
    then its report. ``run`` reports through the :class:`Progress` it gets and calls its ``check``
    between pages; it must not use the request (the thread outlives the view)."""
    hold = limiter.current().acquire()
    progress = progress or Progress()
    outcome: dict[str, Any] = {}
    finished = threading.Event()

    def work() -> None:
        try:
            outcome["report"] = run(progress)
        except Cancelled:
            outcome["error"] = {"error": "the run was stopped: nobody follows it", "code": "cancelled"}
        except APIError as exc:
            outcome["error"] = {"error": exc.message, "code": exc.code}
        except Exception as exc:  # the stream has begun: the failure can only be said as an event
            log.exception("%s failed", name)
            outcome["error"] = {"error": f"{name} failed: {exc}", "code": "internal_error"}
        finally:
            finished.set()
            progress.wake()

    worker = threading.Thread(target=work, name=f"{name}-stream", daemon=True)

    def events() -> Iterator[str]:
        yield ": stream open\n\n"
        worker.start()
        deadline = time.monotonic() + MAX_STREAM_S
        sent = -1
        last_event = 0.0
        while not finished.is_set():
            if time.monotonic() >= deadline:
                progress.cancelled.set()
                yield sse("error", {"error": f"the run outlasted {MAX_STREAM_S:g} s and was stopped",
                                    "code": "timeout"})
                return
            version = progress.wait(sent, HEARTBEAT_S)
            if finished.is_set():
                break
            if version != sent:
                # Coalesce bursts: one event for all that changed within the gap.
                pause = MIN_EVENT_GAP_S - (time.monotonic() - last_event)
                if pause > 0:
                    finished.wait(pause)
                sent = progress.version
                last_event = time.monotonic()
                yield sse("progress", progress.view())
            else:
                yield ": heartbeat\n\n"
        if progress.version != sent:
            yield sse("progress", progress.view())
        if "report" in outcome:
            yield sse("result", outcome["report"])
        else:
            yield sse("error", outcome.get("error") or {"error": f"{name} ended without a report",
                                                         "code": "internal_error"})

    def close() -> None:
        # The response is over (read to the end, or the caller left): a run still going stops at its next page.
        progress.cancelled.set()
        hold.release()

    resp = Response(events(), mimetype=EVENT_STREAM, headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})
    resp.call_on_close(close)  # runs whether or not the stream was ever read
    return resp
