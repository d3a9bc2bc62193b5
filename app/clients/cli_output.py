"""What the ``pinchtab`` verbs print, as the original prints it.

Scripts read stdout: a verb prints the one thing a script wants (``nav`` the tab id, ``title`` the
title, an action ``OK``), or the server's JSON, pretty, with ``--json`` (and for the verbs whose
answer is a document: ``tabs``, ``health``, ``cookies``...). Errors go to stderr as
``Error <status>: <message> (<code>)``, then the server's hint and remedy when it gave them.
"""
from __future__ import annotations

import json
import sys
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

from .rest import ClientError

__all__ = ["Output", "render_error", "scalar", "table"]

_CELL_MAX = 60


def scalar(value: Any) -> str:
    """A value as a shell wants it: strings verbatim, true/false/null, the rest as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _cell(value: Any) -> str:
    s = " ".join(("" if value is None else scalar(value)).split())
    return s if len(s) <= _CELL_MAX else s[: _CELL_MAX - 1] + "…"


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str]) -> str:
    """Rows as aligned columns under upper-case headers (long cells cut)."""
    if not rows:
        return "(none)"
    cells = [[c.upper() for c in columns]] + [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells)


def render_error(exc: ClientError) -> str:
    """The original's error block: ``Error 404: tab X not found (tab_not_found)``, the hint, the remedy."""
    head = f"Error {exc.status}: {exc.message}" if exc.status else f"Error: {exc.message}"
    if exc.code and exc.code not in ("error", exc.message):
        head += f" ({exc.code})"
    lines = [head]
    rest = {k: v for k, v in exc.details.items() if k not in ("hint", "remedy", "setting") and v not in (None, "")}
    if rest:
        lines.append("   " + json.dumps(rest, ensure_ascii=False, separators=(",", ":"))[:2000])
    hint = exc.details.get("hint")
    if isinstance(hint, str) and hint:
        lines.append(f"\n💡 {hint}")
    remedy = exc.details.get("remedy")
    if isinstance(remedy, str) and remedy:
        lines.append(f"   Remedy: {remedy}")
    return "\n".join(lines)


class Output:
    """Where a verb's answer goes: stdout, as JSON with ``--json`` or terse otherwise."""

    def __init__(self, as_json: bool, stream: TextIO | None = None) -> None:
        self.as_json = as_json
        self.stream = stream or sys.stdout

    def line(self, text: str) -> None:
        self.stream.write(text if text.endswith("\n") else text + "\n")
        self.stream.flush()

    def json(self, value: Any) -> None:
        """``value`` as indented JSON."""
        self.line(json.dumps(value, ensure_ascii=False, indent=2))

    def value(self, value: Any) -> None:
        """One scalar (a title, a count, a ref) on its own line."""
        self.line(scalar(value))

    def ok(self) -> None:
        """``OK``: the command did what it was asked and has nothing else to say."""
        self.line("OK")

    def answer(self, reply: Any, terse: Any) -> None:
        """The server's JSON with ``--json``; else the one value ``terse`` (None prints ``null``)."""
        if self.as_json:
            self.json(reply)
        else:
            self.value(terse)
