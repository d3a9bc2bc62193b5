"""The shared clipboard: ``POST /clipboard/write`` (and ``/copy``), ``GET /clipboard/read`` (and ``/paste``).

Off unless security.allowClipboard. As in the original, it is a text store kept by the server and
shared by every tab and caller, not the operating system's clipboard (which a headless browser
does not have, and which would leak between the person and the agents). It lives as long as the
process; the text goes to callers only, never to a log.
"""
from __future__ import annotations

import threading
from typing import Any

from flask import current_app, request

from ...web.errors import BadRequest, disabled
from ...web.openapi import Blueprint, ErrorSchema
from .clipboard_contract import ClipboardTextResponse, ClipboardWriteSchema, ClipboardWrittenResponse
from .common import before_reading, state

bp = Blueprint("clipboard", __name__)
DISABLED = "the clipboard is off unless security.allowClipboard is set"


class Clipboard:
    """One text, shared; a lock so a read never sees half of a write's bookkeeping."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._text = ""

    def write(self, text: str) -> None:
        with self._lock:
            self._text = text

    def read(self) -> str:
        with self._lock:
            return self._text


def _clipboard() -> Clipboard:
    return current_app.extensions.setdefault("pinchtab.clipboard", Clipboard())


def _allowed() -> None:
    if not state().config.security.allow_clipboard:
        raise disabled("clipboard", "security.allowClipboard")
    if "tabId" in request.args:
        # One clipboard for every tab: a tab id would suggest a per-tab one that does not exist.
        raise BadRequest("tabId is not supported for shared clipboard operations", details={"field": "tabId"})


def _write(req: dict[str, Any]) -> dict[str, Any]:
    _clipboard().write(req["text"])
    return {"success": True}


@bp.route("/clipboard/write", methods=["POST"])
@before_reading(_allowed)
@bp.arguments(ClipboardWriteSchema)
@bp.response(200, ClipboardWrittenResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def write(req: dict[str, Any]) -> dict[str, Any]:
    """Put text on the shared clipboard (64 KiB at most)."""
    return _write(req)


@bp.route("/clipboard/copy", methods=["POST"])
@before_reading(_allowed)
@bp.arguments(ClipboardWriteSchema)
@bp.response(200, ClipboardWrittenResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def copy(req: dict[str, Any]) -> dict[str, Any]:
    """The same as /clipboard/write."""
    return _write(req)


@bp.route("/clipboard/read", methods=["GET"])
@before_reading(_allowed)
@bp.response(200, ClipboardTextResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def read() -> dict[str, Any]:
    """The text on the shared clipboard ("" when nothing was written)."""
    return {"text": _clipboard().read()}


@bp.route("/clipboard/paste", methods=["GET"])
@before_reading(_allowed)
@bp.response(200, ClipboardTextResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def paste() -> dict[str, Any]:
    """The same as /clipboard/read."""
    return {"text": _clipboard().read()}
