"""Recording a tab to a file: POST /record/start, POST /record/stop, GET /record/status (off unless
security.allowScreencast, the screencast's gate).

One recording at a time per bridge, as in the original. The file goes to
``<stateDir>/recordings/<file>`` (a plain name; default ``recording-<time>.<format>``); its name is
checked at start, so a stop never fails on it. As in the original, a stop answers at once
(``status: encoding``) and the file is made in the background: ``GET /record/status`` says
``encoding``, then ``finished`` (or ``failed``) once it is written. A stop with ``discard`` drops the
frames and leaves the recorder ``idle``.
"""
from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from flask import Flask, current_app
from flask.blueprints import BlueprintSetupState

from cdp.recorder import Recording, RecordingError

from ...web.errors import APIError, BadRequest, Conflict, StorageError, disabled
from ...web.files import output_file, stamp, write_atomic
from ...web.openapi import Blueprint, ErrorSchema
from .common import before_reading, caller, state, tab
from .record_contract import (
    RecordStartResponse,
    RecordStartSchema,
    RecordStatusResponse,
    RecordStopResponse,
    RecordStopSchema,
)

bp = Blueprint("record", __name__)
log = logging.getLogger(__name__)
_RECORDER = "pinchtab.recorder"


class Recorder:
    """This bridge's recording (at most one, from its start until its file is written), and how the
    last one ended."""

    def __init__(self) -> None:
        self.current: Recording | None = None
        self.path: Path | None = None
        self.encoding: Recording | None = None  # stopped, its file being made in the background
        self.last: dict[str, Any] = {}  # the status of the last recording once its file was made (or failed)
        self._switch = threading.Lock()  # start, stop and the end of an encoding, one at a time

    def start(self, recording: Recording, path: Path) -> None:
        with self._switch:
            if self.current is not None:
                raise Conflict("a recording is already running; POST /record/stop first", code="recording_active",
                               details={"tabId": self.current.tab.id})
            if self.encoding is not None:
                raise Conflict("the last recording's file is still being made; GET /record/status until it is "
                               "finished", code="recording_active", details={"tabId": self.encoding.tab.id})
            try:
                recording.start()
            except RecordingError as exc:
                raise APIError(str(exc), status=502, code="recording_failed") from None
            self.current, self.path, self.last = recording, path, {}

    def stop(self, discard: bool) -> dict[str, Any]:
        """Stop the recording: drop it (``discard``) or start making its file (400 when none runs, as
        in the original, and for a second stop while the file is being made)."""
        with self._switch:
            rec, path = self.current, self.path
            if rec is None or path is None:
                if self.encoding is not None:
                    raise BadRequest(f"the recording is already stopped and its file is being made ({self.path}); "
                                     "GET /record/status to follow it", code="recording_encoding")
                raise BadRequest("no recording is running; POST /record/start first", code="not_recording")
            self.current = None
            if discard:
                self.path = None
                rec.abort()
                self.last = {}  # nothing was made: the recorder is idle again
                return {"status": "discarded", "frames": rec.frames, "durationMs": rec.duration_ms,
                        "format": rec.format}
            rec.halt()  # no more frames: the answer's count and duration are the recording's
            self.encoding = rec
        threading.Thread(target=self._encode, args=(rec, path), name=f"record-encode:{rec.tab.id[:8]}",
                         daemon=True).start()
        return {"status": "encoding", "path": str(path), "format": rec.format, "frames": rec.frames,
                "durationMs": rec.duration_ms,
                "hint": f"encoding {rec.frames} frames to {path.name}: GET /record/status until its state is "
                        "finished; the file is at path then"}

    def _encode(self, rec: Recording, path: Path) -> None:
        """In the background: make the file and write it; the outcome is what the status shows next."""
        base = {"tabId": rec.tab.id, "format": rec.format, "path": str(path), "outputPath": str(path)}
        try:
            size = write_atomic(path, rec.stop(), what=path.name)
        except (RecordingError, StorageError) as exc:
            outcome = {"state": "failed", **base, "frames": rec.frames, "durationMs": rec.duration_ms,
                       "error": str(exc)}
        except Exception as exc:  # never leave the recorder stuck in encoding
            log.exception("recording: the file could not be made")
            outcome = {"state": "failed", **base, "frames": rec.frames, "durationMs": rec.duration_ms,
                       "error": f"the file could not be made: {exc}"}
        else:
            outcome = {"state": "finished", **base, "frames": rec.frames, "durationMs": rec.duration_ms,
                       "size": size}
        with self._switch:
            if self.encoding is rec:
                self.encoding, self.path, self.last = None, None, outcome

    def status(self) -> dict[str, Any]:
        rec, path, enc = self.current, self.path, self.encoding
        if rec is not None:
            out = {"active": True, "state": "recording", "tabId": rec.tab.id, "format": rec.format, "fps": rec.fps,
                   "frames": rec.frames, "durationMs": rec.duration_ms, "path": str(path)}
            if rec.limit_reached:
                out["error"] = f"limit reached ({rec.limit_reached}): no more frames are added"
            return out
        if enc is not None:  # still busy, as the original says: a new start waits for the file
            return {"active": True, "state": "encoding", "tabId": enc.tab.id, "format": enc.format, "fps": enc.fps,
                    "frames": enc.frames, "durationMs": enc.duration_ms, "path": str(path), "outputPath": str(path)}
        if self.last:
            return {"active": False, **self.last}
        return {"active": False, "state": "idle", "frames": 0}

    def abort(self) -> None:
        """Shutdown: drop a running recording, and a file being made, without waiting for them."""
        rec, self.current = self.current, None
        for r in (rec, self.encoding):
            if r is not None:
                r.abort()


@bp.record_once
def _setup(setup: BlueprintSetupState) -> None:
    app: Flask = setup.app
    recorder = app.extensions[_RECORDER] = Recorder()
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(recorder.abort)


def enabled() -> None:
    """403 ``recording_disabled`` (the original's code) unless security.allowScreencast."""
    if not state().config.security.allow_screencast:
        raise disabled("recording", "security.allowScreencast")


def recorder() -> Recorder:
    return current_app.extensions[_RECORDER]


def _file_for(name: str, fmt: str) -> Path:
    """Where the recording goes: a plain file name in the recordings folder, with the format's suffix."""
    if name and (Path(name).name != name or name.startswith(".") or "\\" in name):
        raise BadRequest(f"file must be a plain file name (no folders): {name!r}", code="invalid_output_path",
                         details={"field": "file"})
    if name and not name.lower().endswith(f".{fmt}"):
        name = f"{name}.{fmt}"
    return output_file(state().config.server.state_dir, name and f"recordings/{name}",
                       f"recordings/recording-{stamp()}.{fmt}")


@bp.route("/record/start", methods=["POST"])
@before_reading(enabled)
@bp.arguments(RecordStartSchema)
@bp.response(200, RecordStartResponse)
@bp.alt_response(403, schema=ErrorSchema, description="recording is off unless security.allowScreencast is set")
@bp.alt_response(409, schema=ErrorSchema,
                 description="a recording is already running, or the last one's file is still being made")
def record_start(req: dict[str, Any]) -> dict[str, Any]:
    """Start recording a tab (webm or gif) at up to ``fps`` frames a second, ``scale`` of its size."""
    path = _file_for(req["file"].strip(), req["format"])
    target = tab(req.get("tabId"))
    browser = state().ensure(caller())
    rec = Recording(browser, target, fmt=req["format"], fps=req["fps"], quality=req["quality"], scale=req["scale"],
                    timeout_s=state().config.timeouts.action_sec)
    recorder().start(rec, path)
    return {"status": "recording", "tabId": target.id, "format": rec.format, "fps": rec.fps,
            "quality": rec.quality, "scale": rec.scale}


@bp.route("/record/stop", methods=["POST"])
@before_reading(enabled)
@bp.arguments(RecordStopSchema)
@bp.response(200, RecordStopResponse)
@bp.alt_response(403, schema=ErrorSchema, description="recording is off unless security.allowScreencast is set")
@bp.alt_response(400, schema=ErrorSchema,
                 description="no recording is running (not_recording), or its file is still being made "
                             "(recording_encoding)")
def record_stop(req: dict[str, Any]) -> dict[str, Any]:
    """Stop the recording: its file is made in the background under the state dir (status encoding;
    GET /record/status says finished once it is written). discard=true: drop it, make nothing."""
    return recorder().stop(req["discard"])


@bp.route("/record/status", methods=["GET"])
@before_reading(enabled)
@bp.response(200, RecordStatusResponse)
@bp.alt_response(403, schema=ErrorSchema, description="recording is off unless security.allowScreencast is set")
def record_status() -> dict[str, Any]:
    """Whether a recording runs (recording), its file is being made (encoding), or how the last one
    ended (finished with its path and size, or failed); idle when none ran since the last discard."""
    return recorder().status()
