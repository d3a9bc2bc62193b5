"""The activity log: one JSON line per agent request, one file per UTC day.

Lines go to ``<dir>/events-YYYY-MM-DD.jsonl``. Each is written with a single ``os.write`` on an
``O_APPEND`` descriptor and kept under 4 KiB, so lines from many threads and processes never
interleave (the kernel appends each write whole). Only whitelisted fields are kept, and URLs and
paths lose credentials and secret-looking parameter values, so the log never holds what an agent
typed, cookies, tokens or passwords.
"""
from __future__ import annotations

import heapq
import json
import logging
import math
import os
import re
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any, TypedDict, cast
from urllib.parse import urlsplit

from .redact import scrub_url

log = logging.getLogger(__name__)

MAX_LINE_BYTES = 4000  # under the 4 KiB PIPE_BUF of Linux, newline included
DEFAULT_LIMIT = 100
MAX_LIMIT = 10_000
TOP_N = 10
_FILE = re.compile(r"events-(\d{4}-\d{2}-\d{2})\.jsonl")
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

# The whitelist, in line order after ``timestamp``: a string field maps to its cap in characters,
# a number field to None. Anything else an event carries (text, value, cookies, token, password,
# authorization, headers, ...) is dropped.
FIELDS: dict[str, int | None] = {
    "agentId": 128, "method": 16, "path": 512, "status": None, "durationMs": None,
    "instanceId": 128, "profileId": 64, "profileName": 64, "tabId": 128, "url": 1024,
    "action": 64, "ref": 64,
}
URL_FIELDS = frozenset({"url", "path"})


class ActivityEvent(TypedDict, total=False):
    """One logged request (every field but ``timestamp`` is optional)."""

    timestamp: str
    agentId: str
    method: str
    path: str
    status: int
    durationMs: float
    instanceId: str
    profileId: str
    profileName: str
    tabId: str
    url: str
    action: str
    ref: str


class Analytics(TypedDict):
    """What one profile was used for: counts, busiest hosts and endpoints, calls per UTC day."""

    totalActions: int
    last24h: int
    topHosts: dict[str, int]
    topEndpoints: dict[str, int]
    byDay: dict[str, int]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _stamp(moment: datetime) -> str:
    """ISO 8601 UTC to the millisecond with a ``Z``; fixed width, so strings sort by time."""
    moment = moment.astimezone(UTC)
    return f"{moment:%Y-%m-%dT%H:%M:%S}.{moment.microsecond // 1000:03d}Z"


def _parse_when(value: datetime | str | None) -> datetime | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)  # naive means UTC here, as in the log
    return value.astimezone(UTC)


def clean_event(event: Mapping[str, Any]) -> dict[str, Any]:
    """The whitelisted, capped and scrubbed fields of ``event`` (without the timestamp)."""
    out: dict[str, Any] = {}
    for key, cap in FIELDS.items():
        value = event.get(key)
        if value is None or isinstance(value, bool):
            continue
        if cap is None:  # a number field
            if key == "status":
                if isinstance(value, int):
                    out[key] = value
            elif isinstance(value, (int, float)) and math.isfinite(value):  # NaN is not JSON
                out[key] = round(float(value), 2)
            continue
        text = value if isinstance(value, str) else str(value)
        if key in URL_FIELDS:
            text = scrub_url(text[: cap * 4])  # scrub before capping: a cut could split a key
        out[key] = text[:cap]
    return out


def _encode(fields: dict[str, Any]) -> bytes:
    line = json.dumps(fields, separators=(",", ":")).encode("ascii") + b"\n"
    # ASCII escaping can blow a capped field up sixfold (\u escapes); halve the longest string until
    # the line fits, so no line ever exceeds what one atomic append can carry.
    while len(line) > MAX_LINE_BYTES:
        longest = max((k for k, v in fields.items() if isinstance(v, str) and k != "timestamp"),
                      key=lambda k: len(json.dumps(fields[k])), default=None)
        if longest is None or not fields[longest]:
            break
        fields[longest] = fields[longest][: len(fields[longest]) // 2]
        line = json.dumps(fields, separators=(",", ":")).encode("ascii") + b"\n"
    return line


class ActivityLog:
    """Append-only JSON-lines activity log with day files, retention and queries.

    Thread-safe; several processes may append to the same dir. Call :meth:`close` at shutdown.
    """

    def __init__(self, dir: Path, retention_days: int, *, clock: Callable[[], datetime] = _utc_now) -> None:
        if retention_days < 0:
            raise ValueError("retention_days must be 0 or more")
        self.dir = Path(dir)
        self.retention_days = retention_days
        self._clock = clock
        self._lock = threading.Lock()
        self._fd = -1
        self._day = ""
        self.dropped = 0  # lines that could not be written (disk full, ...)
        self.skipped_lines = 0  # corrupt lines skipped by the latest query or analytics call
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        self.prune()

    # --- writing -----------------------------------------------------------------------------
    def record(self, event: Mapping[str, Any]) -> None:
        """Append one event; never raises for I/O (a failed line is counted in ``dropped``)."""
        now = self._clock()
        fields: dict[str, Any] = {"timestamp": _stamp(now)}
        fields.update(clean_event(event))
        line = _encode(fields)
        day = fields["timestamp"][:10]
        with self._lock:
            # The lock covers the write too: closing a day's fd while another thread writes to
            # it could let that write land in whatever file reuses the descriptor number.
            try:
                if day != self._day:
                    self._open_day(day)
                written = os.write(self._fd, line)
            except OSError as exc:
                self.dropped += 1
                log.warning("activity log: could not write a line: %s", exc.strerror or exc)
                return
        if written != len(line):
            self.dropped += 1
            log.warning("activity log: short write (%d of %d bytes)", written, len(line))

    def _open_day(self, day: str) -> None:
        # Called with self._lock held.
        previous = self._day
        fd = os.open(self.dir / f"events-{day}.jsonl",
                     os.O_WRONLY | os.O_APPEND | os.O_CREAT | _CLOEXEC | _NOFOLLOW, 0o600)
        if self._fd >= 0:
            os.close(self._fd)
        self._fd, self._day = fd, day
        if previous:  # a new day began in this process: drop the day that left the window
            self._prune_locked(date.fromisoformat(day))

    def close(self) -> None:
        """Close the open day file."""
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
            self._fd, self._day = -1, ""

    # --- retention ---------------------------------------------------------------------------
    def prune(self) -> int:
        """Delete day files older than the retention (today plus ``retention_days`` days stay)."""
        with self._lock:
            return self._prune_locked(self._clock().astimezone(UTC).date())

    def _prune_locked(self, today: date) -> int:
        oldest_kept = today - timedelta(days=self.retention_days)
        removed = 0
        for day, path in self._day_files():
            if day < oldest_kept:
                try:
                    path.unlink()
                    removed += 1
                except FileNotFoundError:
                    pass  # another process pruned it first
                except OSError as exc:
                    log.warning("activity log: could not prune %s: %s", path.name, exc)
        if removed:
            log.info("activity log: pruned %d day file(s) before %s", removed, oldest_kept)
        return removed

    def _day_files(self) -> list[tuple[date, Path]]:
        try:
            names = os.listdir(self.dir)
        except OSError:
            return []
        files = []
        for name in names:
            match = _FILE.fullmatch(name)
            if match:
                try:
                    files.append((date.fromisoformat(match.group(1)), self.dir / name))
                except ValueError:
                    continue
        return files

    # --- reading -----------------------------------------------------------------------------
    def query(self, profile: str | None = None, agent: str | None = None, tab: str | None = None,
              since: datetime | str | None = None, until: datetime | str | None = None,
              limit: int = DEFAULT_LIMIT, instance: str | None = None,
              path: str | None = None) -> list[ActivityEvent]:
        """Events matching every given filter, newest first, at most ``limit``.

        ``profile`` matches the profile id or name, ``path`` the request path exactly.
        ``since``/``until`` are datetimes or ISO 8601 strings (naive means UTC); only the day
        files between them are read.
        """
        wanted = {k: v for k, v in (("instanceId", instance), ("path", path)) if v is not None}
        limit = max(0, min(int(limit), MAX_LIMIT))
        self.skipped_lines = 0
        if limit == 0:
            return []
        start, end = _parse_when(since), _parse_when(until)
        lo = _stamp(start) if start else ""
        hi = _stamp(end) if end else ""
        result: list[ActivityEvent] = []
        for _day, path in sorted(self._files_between(start, end), reverse=True):
            matched = [e for e in self._read(path)
                       if _matches(e, profile, agent, tab) and all(e.get(k) == v for k, v in wanted.items())
                       and (not lo or e["timestamp"] >= lo)
                       and (not hi or e["timestamp"] <= hi)]
            # Lines are appended in time order, nearly: several processes can land a few out of
            # order, so sort each day; reversing first keeps the later line first on a tie.
            matched.reverse()
            matched.sort(key=lambda e: e["timestamp"], reverse=True)
            result.extend(cast("list[ActivityEvent]", matched[: limit - len(result)]))
            if len(result) >= limit:
                break
        return result

    def analytics(self, profile: str | None) -> Analytics:
        """Totals for ``profile`` (id or name; None for every profile) over the retention window."""
        self.skipped_lines = 0
        since_24h = _stamp(self._clock() - timedelta(hours=24))
        total = recent = 0
        hosts: Counter[str] = Counter()
        endpoints: Counter[str] = Counter()
        days: Counter[str] = Counter()
        for _day, path in self._files_between(None, None):
            for event in self._read(path):
                if not _matches(event, profile, None, None):
                    continue
                total += 1
                days[event["timestamp"][:10]] += 1
                if event["timestamp"] >= since_24h:
                    recent += 1
                url = event.get("url")
                if isinstance(url, str) and url:
                    try:
                        host = urlsplit(url).hostname
                    except ValueError:
                        host = None
                    if host:
                        hosts[host] += 1
                endpoint = event.get("path")
                if isinstance(endpoint, str) and endpoint:
                    endpoints[endpoint.partition("?")[0]] += 1
        return {"totalActions": total, "last24h": recent,
                "topHosts": dict(_top(hosts)), "topEndpoints": dict(_top(endpoints)),
                "byDay": dict(sorted(days.items()))}

    def _files_between(self, start: datetime | None, end: datetime | None) -> list[tuple[date, Path]]:
        first = start.date() if start else date.min
        last = end.date() if end else date.max
        return [(day, path) for day, path in self._day_files() if first <= day <= last]

    def _read(self, path: Path) -> Iterator[dict[str, Any]]:
        """The events of one day file; corrupt lines are skipped and counted."""
        try:
            fh = open(path, "rb")
        except OSError:
            return
        with fh:
            for raw in fh:
                if raw.isspace():
                    continue  # a blank line carries nothing; not worth counting as damage
                try:
                    event = json.loads(raw)
                except (ValueError, RecursionError):
                    self.skipped_lines += 1
                    continue
                if not isinstance(event, dict) or not isinstance(event.get("timestamp"), str):
                    self.skipped_lines += 1
                    continue
                yield event


def _matches(event: dict[str, Any], profile: str | None, agent: str | None, tab: str | None) -> bool:
    if profile is not None and event.get("profileId") != profile and event.get("profileName") != profile:
        return False
    if agent is not None and event.get("agentId") != agent:
        return False
    return tab is None or event.get("tabId") == tab


def _top(counter: Counter[str]) -> list[tuple[str, int]]:
    # Ties broken by name so the answer is stable between calls.
    return heapq.nsmallest(TOP_N, counter.items(), key=lambda kv: (-kv[1], kv[0]))
