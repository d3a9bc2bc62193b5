"""Timestamps as the store writes them: ISO 8601, UTC, to the second, with a ``Z``."""
from __future__ import annotations

from datetime import UTC, datetime

_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_now_iso() -> str:
    """The current time, e.g. ``2025-03-10T12:00:00Z``."""
    return datetime.now(UTC).strftime(_FORMAT)


def iso_from_timestamp(ts: float) -> str:
    """A POSIX timestamp (an mtime) in the same format."""
    return datetime.fromtimestamp(ts, UTC).strftime(_FORMAT)
