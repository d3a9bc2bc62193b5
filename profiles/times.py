"""Timestamps: ISO 8601, UTC, with a ``Z``; to the second as the store writes them, and to the
millisecond (:func:`utc_iso`) as the servers answer them."""
from __future__ import annotations

import time
from datetime import UTC, datetime

_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


def utc_now_iso() -> str:
    """The current time, e.g. ``2025-03-10T12:00:00Z``."""
    return datetime.now(UTC).strftime(_FORMAT)


def iso_from_timestamp(ts: float) -> str:
    """A POSIX timestamp (an mtime) in the same format."""
    return datetime.fromtimestamp(ts, UTC).strftime(_FORMAT)


def utc_iso(ts: float | None = None) -> str:
    """A POSIX timestamp (default: now) to the millisecond, e.g. ``2025-03-10T12:00:00.123Z``."""
    return datetime.fromtimestamp(ts if ts is not None else time.time(), UTC) \
        .isoformat(timespec="milliseconds").replace("+00:00", "Z")
