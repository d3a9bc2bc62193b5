"""Recording a tab to a WebM or GIF file, with nothing but the browser.

The tab's screencast (``cdp.screencast``) feeds an encoder page of ours: a blank page opened in the
background, never listed as a tab (``Browser.internal``), running ``scripts/recorder.js``. For
WebM, Chromium's own MediaRecorder encodes a canvas that each frame is drawn on (VP8); for GIF, a
small encoder in that page quantises each frame to a fixed palette and compresses it (LZW). The
pixels never cross into Python until the finished file is read out, in chunks.

A feeder thread (``recorder:<tab>``) draws the newest frame at most ``fps`` times a second; a page
that does not change sends no frames, and its last picture simply lasts. The encoder page is
independent of the tab: a recording whose tab closes still gives its file at stop.
"""
from __future__ import annotations

import base64
import json
import logging
import threading
import time
from typing import Any

from . import content
from .browser import Browser, page_script
from .errors import BrowserGone, CDPError, CDPTimeout, TargetClosed
from .screencast import Viewer, cast_of
from .tab import Tab

log = logging.getLogger(__name__)

FORMATS = ("webm", "gif")
MAX_DURATION_S = 600.0    # then frames stop being added; stop still writes what was recorded
MAX_FRAMES = 9000
MAX_BYTES = 256 * 2**20   # a longer recording is refused at stop rather than read into memory
CHUNK_BYTES = 2 * 2**20   # read out of the encoder page this much per call
CALL_S = 15.0             # one call to the encoder page (drawing a frame, finishing the file)
IDLE_WAKE_S = 1.0


class RecordingError(Exception):
    """The recording could not be started or its file could not be made."""


class Recording:
    """One recording of one tab, from :meth:`start` to :meth:`stop` (or :meth:`abort`)."""

    def __init__(self, browser: Browser, tab: Tab, *, fmt: str = "webm", fps: int = 5, quality: int = 80,
                 scale: float = 1.0, timeout_s: float = 30.0) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"format must be one of {', '.join(FORMATS)}")
        self.browser = browser
        self.tab = tab
        self.format = fmt
        self.fps = fps
        self.quality = quality
        self.scale = scale
        self.timeout_s = timeout_s
        self.frames = 0
        self.failed_frames = 0
        self.limit_reached = ""
        self.started_at = 0.0      # time.monotonic() at start
        self.stopped_at = 0.0
        self._target_id = ""
        self._session_id = ""
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._viewer = Viewer(self._wake.set, fps=0, limit=1)  # only the newest frame matters
        self._thread: threading.Thread | None = None

    @property
    def duration_ms(self) -> int:
        end = self.stopped_at or time.monotonic()
        return int((end - self.started_at) * 1000) if self.started_at else 0

    # --- lifecycle ------------------------------------------------------------------------------
    def start(self) -> None:
        """Open the encoder page and join the tab's screencast. Raises RecordingError (nothing is
        left open then) or what the tab raises (a closed tab, an open dialog)."""
        vp = self.tab.run(lambda: self.tab.call("Page.getLayoutMetrics"), self.timeout_s).get("cssLayoutViewport") or {}
        width = _even(vp.get("clientWidth", 800) * self.scale)
        height = _even(vp.get("clientHeight", 600) * self.scale)
        self._open_encoder(width, height)
        try:
            params = {"format": "jpeg", "quality": self.quality, "maxWidth": width, "maxHeight": height,
                      "everyNthFrame": 1}
            cast_of(self.tab).join(self._viewer, params, self.timeout_s)
        except BaseException:
            self._close_encoder()
            raise
        self.started_at = time.monotonic()
        self._thread = threading.Thread(target=self._feed_loop, name=f"recorder:{self.tab.id[:8]}", daemon=True)
        self._thread.start()

    def stop(self) -> bytes:
        """End the recording and return the file's bytes (the encoder page is closed either way). Slow
        for a long recording: the bridge runs it in the background.

        Raises RecordingError when the file could not be made.
        """
        self.halt()
        try:
            if not self._draw_newest() and self.frames == 0:
                self._draw_still()  # a stop right after the start: the page's picture is the one frame
            size = self._call("globalThis.__rec.finish()", await_promise=True)
            if not isinstance(size, int) or size <= 0:
                raise RecordingError("the encoder made no file")
            if size > MAX_BYTES:
                raise RecordingError(f"the recording is too large ({size} bytes; at most {MAX_BYTES})")
            data = bytearray()
            while len(data) < size:
                part = self._call(f"globalThis.__rec.chunk({len(data)}, {CHUNK_BYTES})")
                chunk = base64.b64decode(part or "")
                if not chunk:
                    raise RecordingError("the encoder's file ended early")
                data += chunk
            return bytes(data)
        except (CDPError, CDPTimeout, BrowserGone) as exc:
            raise RecordingError(f"the encoder failed: {exc}") from None
        finally:
            self._close_encoder()

    def abort(self) -> None:
        """End the recording and drop it (a shutdown)."""
        self.halt()
        self._close_encoder()

    def halt(self) -> None:
        """Stop adding frames (the tab's screencast is left); the file is still to be made by :meth:`stop`.
        Idempotent."""
        if self.stopped_at:
            return
        self.stopped_at = time.monotonic()
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(CALL_S + 1)
        cast_of(self.tab).leave(self._viewer, self.timeout_s)

    # --- the encoder page --------------------------------------------------------------------------
    def _open_encoder(self, width: int, height: int) -> None:
        conn = self.browser.conn
        if conn is None:
            raise RecordingError("the browser is not running")
        try:
            self._target_id = conn.call("Target.createTarget", {"url": "about:blank", "background": True},
                                        timeout_s=self.timeout_s)["targetId"]
            self.browser.internal.add(self._target_id)
            self._session_id = conn.call("Target.attachToTarget", {"targetId": self._target_id, "flatten": True},
                                         timeout_s=self.timeout_s)["sessionId"]
            self._call(page_script("recorder.js"))
            bits_per_s = 100_000 + self.quality * 40_000
            if not self._call(f"globalThis.__rec.start({json.dumps(self.format)}, {width}, {height}, {bits_per_s})"):
                raise RecordingError("the encoder page did not start")
        except (CDPError, CDPTimeout, BrowserGone) as exc:
            self._close_encoder()
            raise RecordingError(f"the encoder page could not be opened: {exc}") from None
        except RecordingError:
            self._close_encoder()
            raise

    def _close_encoder(self) -> None:
        conn, target = self.browser.conn, self._target_id
        self._target_id = ""
        if not target or conn is None:
            return
        try:
            conn.call("Target.closeTarget", {"targetId": target}, timeout_s=5)
        except (CDPError, CDPTimeout, BrowserGone) as exc:
            log.debug("recorder: closing the encoder page failed: %s", exc)
        finally:
            conn.release(self._session_id)
            self.browser.internal.discard(target)

    def _call(self, expression: str, *, await_promise: bool = False) -> Any:
        conn = self.browser.conn
        if conn is None or not self._session_id:
            raise BrowserGone("the browser is not running")
        res = conn.call("Runtime.evaluate", {"expression": expression, "awaitPromise": await_promise,
                                             "returnByValue": True}, self._session_id, CALL_S)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            raise CDPError("Runtime.evaluate", (d.get("exception") or {}).get("description") or d.get("text", ""))
        return (res.get("result") or {}).get("value")

    # --- feeding frames ------------------------------------------------------------------------------
    def _feed_loop(self) -> None:
        interval_s = 1.0 / self.fps
        while not self._stopping.is_set():
            self._wake.wait(IDLE_WAKE_S)
            self._wake.clear()
            if self._stopping.is_set():
                return
            drawn_at = time.monotonic()
            if not self._draw_newest():
                if self._viewer.ended is not None or self.limit_reached:
                    return  # the tab closed (or the limits): the file is made at stop
                continue
            self._stopping.wait(max(0.0, interval_s - (time.monotonic() - drawn_at)))  # at most fps a second

    def _draw_still(self) -> None:
        """Draw a screenshot of the tab: a page that has not changed since the start sent no frame."""
        try:
            data = self.tab.run(lambda: content.screenshot(self.tab, fmt="jpeg", quality=self.quality),
                                self.timeout_s)
            self._call(f"globalThis.__rec.frame({json.dumps(base64.b64encode(data).decode())}, 'image/jpeg')",
                       await_promise=True)
            self.frames += 1
        except (CDPError, CDPTimeout, BrowserGone, TargetClosed) as exc:
            log.debug("recorder: the still frame could not be drawn: %s", exc)

    def _draw_newest(self) -> bool:
        """Draw the newest frame waiting, if any; whether one was drawn."""
        frames = self._viewer.take()
        if not frames or not self._target_id:
            return False
        if time.monotonic() - self.started_at > MAX_DURATION_S or self.frames >= MAX_FRAMES:
            self.limit_reached = "max_duration" if self.frames < MAX_FRAMES else "max_frames"
            return False
        frame = frames[-1]
        try:
            self._call(f"globalThis.__rec.frame({json.dumps(frame.data)}, 'image/{frame.format}')", await_promise=True)
        except (CDPError, CDPTimeout, BrowserGone, TargetClosed) as exc:
            self.failed_frames += 1
            log.debug("recorder: a frame could not be drawn: %s", exc)
            return False
        self.frames += 1
        return True


def _even(px: float) -> int:
    """Video codecs want even sizes."""
    return max(2, int(round(px / 2)) * 2)
