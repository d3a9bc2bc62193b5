"""Recording a tab to a file: POST /record/start, POST /record/stop, GET /record/status (off unless
security.allowScreencast, the screencast's gate).

One recording at a time per bridge, as in the original. The file goes to
``<stateDir>/recordings/<file>`` (a plain name; default ``recording-<time>.<format>``), written
when the recording stops; its name is checked at start, so a stop never fails on it.
"""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from flask import Flask, Response, current_app, jsonify
from flask.blueprints import BlueprintSetupState

from cdp.recorder import Recording, RecordingError

from ...errors import APIError, BadRequest, Conflict, disabled
from ...files import output_file, stamp, write_atomic
from ...openapi import Blueprint, ErrorSchema
from ..responses import RecordStartResponse, RecordStatusResponse, RecordStopResponse
from ..schemas import RecordStartSchema, RecordStopSchema
from .common import before_reading, caller, state, tab

bp = Blueprint("record", __name__)
_RECORDER = "pinchtab.recorder"


class Recorder:
    """This bridge's recording (at most one), and how the last one ended."""

    def __init__(self) -> None:
        self.current: Recording | None = None
        self.path: Path | None = None
        self.last: dict[str, Any] = {}  # the status of the last recording once it ended
        self._switch = threading.Lock()  # start and stop, one at a time

    def start(self, recording: Recording, path: Path) -> None:
        with self._switch:
            if self.current is not None:
                raise Conflict("a recording is already running; POST /record/stop first", code="recording_active",
                               details={"tabId": self.current.tab.id})
            try:
                recording.start()
            except RecordingError as exc:
                raise APIError(str(exc), status=502, code="recording_failed") from None
            self.current, self.path, self.last = recording, path, {}

    def stop(self, discard: bool) -> dict[str, Any]:
        with self._switch:
            rec, path = self.current, self.path
            if rec is None or path is None:
                raise Conflict("no recording is running; POST /record/start first", code="not_recording")
            self.current = self.path = None
            if discard:
                rec.abort()
                self.last = {"state": "stopped", "tabId": rec.tab.id, "format": rec.format, "frames": rec.frames,
                             "durationMs": rec.duration_ms}
                return {"status": "discarded", "frames": rec.frames, "durationMs": rec.duration_ms,
                        "format": rec.format}
            try:
                data = rec.stop()
            except RecordingError as exc:
                self.last = {"state": "failed", "tabId": rec.tab.id, "format": rec.format, "error": str(exc)}
                raise APIError(str(exc), status=502, code="recording_failed") from None
            size = write_atomic(path, data, what=path.name)
            self.last = {"state": "stopped", "tabId": rec.tab.id, "format": rec.format, "frames": rec.frames,
                         "durationMs": rec.duration_ms, "path": str(path)}
            return {"status": "saved", "path": str(path), "size": size, "frames": rec.frames,
                    "durationMs": rec.duration_ms, "format": rec.format}

    def status(self) -> dict[str, Any]:
        rec, path = self.current, self.path
        if rec is None:
            return {"active": False, "state": "idle", **self.last}
        out = {"active": True, "state": "recording", "tabId": rec.tab.id, "format": rec.format, "fps": rec.fps,
               "frames": rec.frames, "durationMs": rec.duration_ms, "path": str(path)}
        if rec.limit_reached:
            out["error"] = f"limit reached ({rec.limit_reached}): no more frames are added"
        return out

    def abort(self) -> None:
        """Shutdown: drop a running recording without waiting for its file."""
        rec, self.current = self.current, None
        if rec is not None:
            rec.abort()


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
    return output_file(state().config.server.state_dir, name and f"recordings/{name}", f"recordings/recording-{stamp()}.{fmt}")


@bp.route("/record/start", methods=["POST"])
@before_reading(enabled)
@bp.arguments(RecordStartSchema)
@bp.response(200, RecordStartResponse)
@bp.alt_response(403, schema=ErrorSchema, description="recording is off unless security.allowScreencast is set")
@bp.alt_response(409, schema=ErrorSchema, description="a recording is already running")
def record_start(req: dict[str, Any]) -> Response:
    """Start recording a tab (webm or gif) at up to ``fps`` frames a second, ``scale`` of its size."""
    path = _file_for(req["file"].strip(), req["format"])
    target = tab(req.get("tabId"))
    browser = state().ensure(caller())
    rec = Recording(browser, target, fmt=req["format"], fps=req["fps"], quality=req["quality"], scale=req["scale"],
                    timeout_s=state().config.timeouts.action_sec)
    recorder().start(rec, path)
    return jsonify({"status": "recording", "tabId": target.id, "format": rec.format, "fps": rec.fps,
                    "quality": rec.quality, "scale": rec.scale})


@bp.route("/record/stop", methods=["POST"])
@before_reading(enabled)
@bp.arguments(RecordStopSchema)
@bp.response(200, RecordStopResponse)
@bp.alt_response(403, schema=ErrorSchema, description="recording is off unless security.allowScreencast is set")
@bp.alt_response(409, schema=ErrorSchema, description="no recording is running")
def record_stop(req: dict[str, Any]) -> Response:
    """Stop the recording and write its file under the state dir (discard=true: drop it)."""
    return jsonify(recorder().stop(req["discard"]))


@bp.route("/record/status", methods=["GET"])
@before_reading(enabled)
@bp.response(200, RecordStatusResponse)
@bp.alt_response(403, schema=ErrorSchema, description="recording is off unless security.allowScreencast is set")
def record_status() -> Response:
    """Whether a recording runs: its tab, format, frames so far and duration; or how the last one ended."""
    return jsonify(recorder().status())
