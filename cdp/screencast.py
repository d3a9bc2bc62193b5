"""A tab's live frames (``Page.startScreencast``), shared by everyone who watches it.

One screencast per tab: it starts with the first viewer (with that viewer's size and quality) and
stops with the last. Each frame is acknowledged on the tab's worker as it arrives, so Chrome keeps
sending; each viewer has a small queue of its own where a slow viewer loses its oldest frames
(counted) and never holds up the tab or the other viewers. While a tab is cast it is told it has
the focus: a headless tab that is not in front draws no frames otherwise.
"""
from __future__ import annotations

import collections
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import CDPError, CDPTimeout, TargetClosed
from .tab import Tab

log = logging.getLogger(__name__)

QUEUE_MAX = 3  # frames a viewer may fall behind by before its oldest is dropped


@dataclass(frozen=True)
class CastFrame:
    """One frame: its number in the cast, the image (base64, as CDP sends it) and CDP's metadata."""

    seq: int
    format: str
    data: str
    metadata: dict[str, Any]
    at: float = field(default_factory=time.monotonic)


class Viewer:
    """One consumer of a cast: at most ``fps`` frames a second, the newest kept.

    ``wake`` is called (on the tab's worker) whenever there is something to take or the cast ended;
    it must not block.
    """

    def __init__(self, wake: Callable[[], None], fps: float = 30.0, limit: int = QUEUE_MAX) -> None:
        self.wake = wake
        self.min_interval_s = 1.0 / fps if fps > 0 else 0.0
        self.limit = limit
        self.dropped = 0
        self.ended: str | None = None  # why the cast ended under this viewer (its tab closed)
        self._frames: collections.deque[CastFrame] = collections.deque()
        self._last_at = float("-inf")
        self._lock = threading.Lock()

    def offer(self, frame: CastFrame) -> None:
        if frame.at - self._last_at < self.min_interval_s:
            return  # faster than this viewer asked for: not a loss, so not counted
        self._last_at = frame.at
        with self._lock:
            if len(self._frames) >= self.limit:
                self._frames.popleft()
                self.dropped += 1
            self._frames.append(frame)
        self.wake()

    def take(self) -> list[CastFrame]:
        """The frames waiting, oldest first (and no longer waiting)."""
        with self._lock:
            frames = list(self._frames)
            self._frames.clear()
        return frames

    def end(self, reason: str) -> None:
        if self.ended is None:
            self.ended = reason
        self.wake()


class Screencast:
    """The screencast of one tab and its viewers (get it with :func:`cast_of`)."""

    def __init__(self, tab: Tab) -> None:
        self.tab = tab
        self.params: dict[str, Any] = {}
        self.frames = 0
        self._viewers: list[Viewer] = []
        self._running = False
        self._hooked = False
        self._lock = threading.Lock()     # the viewer list (read on the worker, changed elsewhere)
        self._switch = threading.Lock()   # starting and stopping, one at a time

    @property
    def viewers(self) -> int:
        with self._lock:
            return len(self._viewers)

    def join(self, viewer: Viewer, params: dict[str, Any], timeout_s: float) -> None:
        """Add ``viewer``; the first one starts the cast with ``params`` (``Page.startScreencast``'s).

        Raises what the tab raises when the cast cannot start (the viewer is then not added).
        """
        with self._switch:
            with self._lock:
                self._viewers.append(viewer)
            if self._running:
                return
            try:
                self.tab.run(lambda: self._start(params), timeout_s)
            except BaseException:
                with self._lock:
                    self._viewers.remove(viewer)
                raise
            self._running = True

    def leave(self, viewer: Viewer, timeout_s: float) -> None:
        """Remove ``viewer``; the last one stops the cast (best effort: a closed tab has none).

        The stop is queued, not waited for: the last viewer is often a caller that has gone (a
        closed WebSocket), whose waited work the tab would skip; a later join queues behind it.
        """
        with self._switch:
            with self._lock:
                if viewer in self._viewers:
                    self._viewers.remove(viewer)
                empty = not self._viewers
            if not (empty and self._running):
                return
            self._running = False
            try:
                self.tab.submit(self._stop, timeout_s)
            except TargetClosed:
                pass  # closed with the tab

    # --- on the tab's worker -----------------------------------------------------------------------
    def _start(self, params: dict[str, Any]) -> None:
        if not self._hooked:
            self.tab.on("Page.screencastFrame", self._on_frame)
            self.tab.when_closed(self._on_closed)
            self._hooked = True
        self.params = dict(params)
        self.tab.call("Emulation.setFocusEmulationEnabled", {"enabled": True})
        self.tab.call("Page.startScreencast", params)

    def _stop(self) -> None:
        try:
            self.tab.call("Page.stopScreencast")
            self.tab.call("Emulation.setFocusEmulationEnabled", {"enabled": False})
        except (CDPError, CDPTimeout, TargetClosed) as exc:
            log.debug("tab %s: screencast stop failed: %s", self.tab.id, exc)

    def _on_frame(self, session_id: str, p: dict[str, Any]) -> None:
        if session_id != self.tab.session_id:
            return
        # Acknowledged at once, not waited for (we are mid-pump): Chrome sends the next when ready.
        self.tab.send("Page.screencastFrameAck", {"sessionId": p.get("sessionId", 0)})
        self.frames += 1
        frame = CastFrame(self.frames, self.params.get("format", "jpeg"), p.get("data", ""), p.get("metadata") or {})
        with self._lock:
            viewers = list(self._viewers)
        for viewer in viewers:
            viewer.offer(frame)

    def _on_closed(self, reason: Exception) -> None:
        with self._lock:
            viewers = list(self._viewers)
        for viewer in viewers:
            viewer.end("tab closed")


_casts_lock = threading.Lock()


def cast_of(tab: Tab) -> Screencast:
    """The tab's screencast (made on first use)."""
    with _casts_lock:
        cast = tab.state.get("screencast")
        if cast is None:
            cast = tab.state["screencast"] = Screencast(tab)
        return cast
