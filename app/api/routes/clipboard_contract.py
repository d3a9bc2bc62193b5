"""The contract of the shared clipboard: what they take and what they answer."""
from __future__ import annotations

from marshmallow import ValidationError, fields

from ...web.schemas import Strict
from ..contract import Answer

# --- what the routes take --------------------------------------------------------------------------------------------
CLIPBOARD_MAX_BYTES = 64 * 1024


def _clipboard_size(text: str) -> None:
    if len(text.encode("utf-8")) > CLIPBOARD_MAX_BYTES:
        raise ValidationError(f"text is larger than {CLIPBOARD_MAX_BYTES} bytes")


class ClipboardWriteSchema(Strict):
    """The shared clipboard takes text alone: any other field (a tabId too) is refused."""

    text = fields.String(required=True, validate=_clipboard_size, error_messages={"required": "text required"})


# --- what they answer ------------------------------------------------------------------------------------------------
class ClipboardWrittenResponse(Answer):
    success = fields.Boolean(required=True)


class ClipboardTextResponse(Answer):
    text = fields.String(required=True)
