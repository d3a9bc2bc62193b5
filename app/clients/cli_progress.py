"""How far a long verb (``pinchtab scrape``, ``pinchtab audit``) is, on one updating line of stderr.

On a terminal the verb asks the server for its run's progress events and redraws one line as they
come: pages done of the pages found so far, the errors so far, the current URL. When stderr is not a
terminal (piped, redirected, a CI log) or ``--quiet`` is given, nothing is drawn and the verb makes
the plain request. stdout gets the same report either way: the line is stderr's alone and is wiped
before the verb prints.
"""
from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping
from typing import Any, TextIO

from .cli_verbs import Ctx
from .rest import ClientError

__all__ = ["ProgressLine", "add_quiet_flag", "run_report"]

_CLEAR = "\r\x1b[K"  # back to the line's start and erase it


class ProgressLine:
    """One line of ``stream``, redrawn in place; wiped by :meth:`clear`."""

    def __init__(self, stream: TextIO, verb: str) -> None:
        self.stream, self.verb = stream, verb
        self.drawn = False

    def show(self, done: int, total: int, url: str, errors: int) -> None:
        width = _columns(self.stream)
        head = f"{self.verb}: {done}/{total} page(s)"
        if errors:
            head += f" · {errors} error(s)"
        text = f"{head} · {url}" if url else head
        if len(text) > width - 1:  # a wrapped line could not be redrawn in place
            text = text[:max(0, width - 2)] + "…"
        self.stream.write(_CLEAR + text)
        self.stream.flush()
        self.drawn = True

    def clear(self) -> None:
        if self.drawn:
            self.stream.write(_CLEAR)
            self.stream.flush()
            self.drawn = False


def _columns(stream: TextIO) -> int:
    """The width of the terminal ``stream`` is on (stdout, which shutil asks, may be a pipe)."""
    try:
        columns = os.get_terminal_size(stream.fileno()).columns
    except (OSError, ValueError):
        columns = 0
    return columns if columns > 0 else shutil.get_terminal_size((80, 24)).columns


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def run_report(ctx: Ctx, verb: str, path: str, body: Mapping[str, Any], params: Mapping[str, Any] | None,
               timeout_s: float, quiet: bool = False) -> dict[str, Any]:
    """POST ``body`` to ``path`` and return the report; with progress on stderr when it is a terminal
    and not ``quiet``."""
    stream = sys.stderr
    if quiet or not stream.isatty():
        report: dict[str, Any] = ctx.client.request("POST", path, body=body, params=params, timeout_s=timeout_s).json()
        return report
    line = ProgressLine(stream, verb)
    try:
        for event, data in ctx.client.events("POST", path, body=body, params=params, timeout_s=timeout_s):
            if event == "progress" and isinstance(data, dict):
                line.show(_count(data.get("done")), _count(data.get("total")), str(data.get("url") or ""),
                          _count(data.get("errors")))
            elif event == "result" and isinstance(data, dict):
                return data
            elif event == "error":
                info = data if isinstance(data, dict) else {}
                raise ClientError(str(info.get("error") or f"the {verb} failed"), code=str(info.get("code") or "error"))
    finally:
        line.clear()
    raise ClientError(f"the {verb}'s progress stream ended without a report", code="bad_response")


def add_quiet_flag(p: Any) -> None:
    """``--quiet``/``-q`` on a verb's parser: no progress line."""
    p.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr (shown only on a terminal)")
