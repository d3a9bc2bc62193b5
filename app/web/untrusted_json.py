"""JSON that others send us (request bodies, WebSocket frames, socket lines, files a user may plant).

``json.loads`` raises RecursionError, not ValueError, for nesting deeper than the interpreter's
stack (a 200,000-deep array is 200 KB): every caller that answers bad JSON with a 400 would answer
that one with a 500, or lose the connection. :func:`loads` makes it a ValueError like any other.
"""
from __future__ import annotations

import json
from typing import Any


def loads(raw: str | bytes | bytearray) -> Any:
    """The value ``raw`` holds; raises ValueError for anything that is not JSON we can read."""
    try:
        return json.loads(raw)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None
