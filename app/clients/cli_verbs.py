"""The browser verbs of the ``pinchtab`` command (``nav``, ``snap``, ``click``...): thin REST clients.

Each verb is one or two calls through :class:`app.clients.rest.Client`, made as the agent ``cli``
(``--agent-id``) so the command line keeps its own current tab on the server between runs.
Output is for people by default (a snapshot prints as its compact text, an object as
``key: value`` lines, a list as a short table) and the server's JSON with ``--json``.
Exit status: 0 on success, 1 when the server (or the way to it) answers with an error, whose
message and code go to stderr, 2 for usage and config errors.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TextIO

from .rest import Client, ClientError, connect

__all__ = ["DEFAULT_AGENT_ID", "add_global_options", "format_human", "register"]

DEFAULT_AGENT_ID = "cli"
_REF = re.compile(r"e\d+")
_CELL_MAX = 60
Verb = Callable[[Client, argparse.Namespace, "Output"], int | None]


# --------------------------------------------------------------------------
# Output


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return str(value)


def _cell(value: Any) -> str:
    s = " ".join(_scalar(value).split())
    return s if len(s) <= _CELL_MAX else s[: _CELL_MAX - 1] + "…"


def table(rows: Sequence[Mapping[str, Any]], columns: Sequence[str] | None = None) -> str:
    """Rows as aligned columns under upper-case headers (long cells cut)."""
    if not rows:
        return "(none)"
    if columns is None:
        columns = list(dict.fromkeys(k for row in rows for k in row))
    cells = [[c.upper() for c in columns]] + [[_cell(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(columns))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in cells)


def format_human(value: Any) -> str:
    """``key: value`` lines for an object, a table for a list of objects, the value otherwise."""
    if isinstance(value, dict):
        return "\n".join(f"{k}: {_scalar(v)}" for k, v in value.items())
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            return table(value)
        return "\n".join(_scalar(v) for v in value)
    return _scalar(value)


class Output:
    """Where a verb's answer goes: JSON with ``--json``, text for people otherwise."""

    def __init__(self, as_json: bool, stream: TextIO | None = None) -> None:
        self.as_json = as_json
        self.stream = stream or sys.stdout

    def line(self, text: str) -> None:
        self.stream.write(text if text.endswith("\n") else text + "\n")

    def data(self, value: Any, human: str | None = None) -> None:
        """``value`` as JSON, or ``human`` (default: :func:`format_human` of it)."""
        if self.as_json:
            self.line(json.dumps(value, ensure_ascii=False, indent=2))
        else:
            self.line(format_human(value) if human is None else human)

    def reply(self, reply: Mapping[str, Any], summary: Any) -> None:
        """An action's answer: the summary, then the post-action snapshot when there is one."""
        if self.as_json:
            self.data(dict(reply))
            return
        self.line(format_human(summary))
        if reply.get("snapshot"):
            self.line("")
            self.line(reply["snapshot"])


# --------------------------------------------------------------------------
# Options every verb takes


def add_global_options(parser: argparse.ArgumentParser) -> None:
    """``--server``, ``--tab``, ``--json``, ``--agent-id``, before or after the verb.

    The defaults are SUPPRESS so a verb's parser does not overwrite what was given before the
    verb (``pinchtab --json tabs`` and ``pinchtab tabs --json`` both work).
    """
    g = parser.add_argument_group("connection and output")
    g.add_argument("--server", metavar="URL", default=argparse.SUPPRESS,
                   help="the pinchtab server (default: $PINCHTAB_SERVER, else 127.0.0.1 and the config's port)")
    g.add_argument("--tab", metavar="ID", default=argparse.SUPPRESS,
                   help="act on this tab (it becomes your current tab, as in the API)")
    g.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help="print the server's JSON")
    g.add_argument("--agent-id", metavar="ID", default=argparse.SUPPRESS,
                   help=f"who calls; each agent keeps its own current tab (default: {DEFAULT_AGENT_ID})")


def _snap_options(parser: argparse.ArgumentParser) -> None:
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--snap", dest="snap", action="store_const", const="compact", default="",
                   help="print the page's interactive snapshot afterwards")
    g.add_argument("--snap-diff", dest="snap", action="store_const", const="diff",
                   help="print what changed on the page afterwards")


def _runner(fn: Verb) -> Callable[[argparse.Namespace], int]:
    """Connect as the caller asked, run the verb, and turn a failed request into exit status 1."""

    def run(args: argparse.Namespace) -> int:
        client = connect(getattr(args, "server", None), source="cli",
                         agent_id=getattr(args, "agent_id", None) or DEFAULT_AGENT_ID)
        try:
            return fn(client, args, Output(getattr(args, "json", False))) or 0
        except ClientError as exc:
            print(f"pinchtab: {exc.describe()}", file=sys.stderr)
            return 1
        except OSError as exc:  # writing -o FILE
            print(f"pinchtab: {exc}", file=sys.stderr)
            return 1

    return run


def _tab(args: argparse.Namespace) -> str | None:
    return getattr(args, "tab", None)


def target(ref: str) -> dict[str, str]:
    """A ref (``e5``) or any unified selector (CSS, ``text:``, ``xpath:``, ``role:``)."""
    return {"ref": ref} if _REF.fullmatch(ref) else {"selector": ref}


# --------------------------------------------------------------------------
# Navigation and reading


def nav(c: Client, a: argparse.Namespace, out: Output) -> None:
    """POST /navigate, then GET /snapshot of that tab with ``--snap``/``--snap-diff``."""
    reply = c.post("/navigate", {"url": a.url, "newTab": a.new_tab}, tab=_tab(a))
    if a.snap:
        reply["snapshot"] = c.request("GET", "/snapshot", tab=reply.get("tabId"), params={
            "filter": "interactive", "format": "compact", "diff": a.snap == "diff"}).text
    out.reply(reply, {k: reply.get(k) for k in ("tabId", "url", "title")})


def history(path: str) -> Verb:
    """``back``, ``forward``, ``reload``: POST ``path``."""

    def go(c: Client, a: argparse.Namespace, out: Output) -> None:
        out.data(c.post(path, tab=_tab(a)))

    return go


def snap(c: Client, a: argparse.Namespace, out: Output) -> None:
    """GET /snapshot: interactive and compact unless told otherwise."""
    fmt = "json" if out.as_json else ("text" if a.text else "compact")
    reply = c.request("GET", "/snapshot", tab=_tab(a), params={
        "filter": "all" if a.full else "interactive", "format": fmt, "diff": a.diff or None,
        "maxTokens": a.max_tokens, "selector": a.selector, "depth": a.depth, "after": a.after})
    if out.as_json:
        out.data(reply.json())
    else:
        out.line(reply.text)


def text(c: Client, a: argparse.Namespace, out: Output) -> None:
    """GET /text."""
    reply = c.get("/text", {"mode": "raw" if a.raw else None, "maxChars": a.max_chars}, tab=_tab(a))
    out.data(reply, human=reply.get("text", "") + ("\n[truncated]" if reply.get("truncated") else ""))


def _save(out: Output, path: str, data: bytes, fmt: str) -> None:
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    with open(path, "wb") as fh:
        fh.write(data)
    out.data({"path": path, "bytes": len(data), "format": fmt}, human=f"saved {path} ({len(data):,} bytes)")


def screenshot(c: Client, a: argparse.Namespace, out: Output) -> None:
    """GET /screenshot?raw=true into a file (PNG when the name ends in .png)."""
    png = a.png or (a.output or "").lower().endswith(".png")
    fmt = "png" if png else "jpeg"
    path = a.output or time.strftime(f"screenshot-%Y%m%d-%H%M%S.{'png' if png else 'jpg'}")
    reply = c.request("GET", "/screenshot", tab=_tab(a), params={
        "raw": True, "format": fmt, "quality": a.quality, "beyondViewport": a.full_page or None,
        "selector": a.selector})
    _save(out, path, reply.body, fmt)


def pdf(c: Client, a: argparse.Namespace, out: Output) -> None:
    """GET /pdf?raw=true into a file."""
    path = a.output or time.strftime("page-%Y%m%d-%H%M%S.pdf")
    reply = c.request("GET", "/pdf", tab=_tab(a), params={"raw": True, "landscape": a.landscape or None})
    _save(out, path, reply.body, "pdf")


# --------------------------------------------------------------------------
# Actions


def action(kind: str, fields: Callable[[argparse.Namespace], dict[str, Any]]) -> Verb:
    """A verb that is one POST /action of ``kind``; ``--snap``/``--snap-diff`` ride along."""

    def act(c: Client, a: argparse.Namespace, out: Output) -> None:
        body: dict[str, Any] = {"kind": kind, **fields(a)}
        if getattr(a, "snap", ""):
            body["snap"] = a.snap
        if getattr(a, "wait_nav", False):
            body["waitNav"] = True
        reply = c.post("/action", body, tab=_tab(a))
        out.reply(reply, reply.get("result", {}))

    return act


def _scroll_fields(a: argparse.Namespace) -> dict[str, Any]:
    if a.ref:
        return target(a.ref)
    fields: dict[str, Any] = {"direction": a.direction or "down"}
    if a.pixels:
        fields["pixels"] = a.pixels
    return fields


# --------------------------------------------------------------------------
# Content, tabs, the server


def find(c: Client, a: argparse.Namespace, out: Output) -> None:
    """POST /find: the best ref, then the matches as a table."""
    reply = c.post("/find", {"query": a.query}, tab=_tab(a))
    matches = [{k: m.get(k) for k in ("ref", "role", "name", "score")} for m in reply.get("matches", [])]
    best = reply.get("best_ref")
    head = f"best: {best} ({reply.get('confidence')}, score {reply.get('score')})" if best else "no good match"
    out.data(reply, human=head + ("\n" + table(matches) if matches else ""))


def evaluate(c: Client, a: argparse.Namespace, out: Output) -> None:
    """POST /evaluate: the value (strings as they are, the rest as JSON)."""
    reply = c.post("/evaluate", {"expression": a.expression}, tab=_tab(a))
    result = reply.get("result")
    out.data(reply, human=result if isinstance(result, str) else json.dumps(result, ensure_ascii=False))


def logs(kind: str) -> Verb:
    """``console`` and ``errors``: GET /console or /errors, one line per entry."""

    def show(c: Client, a: argparse.Namespace, out: Output) -> None:
        reply = c.get(f"/{kind}", {"limit": a.limit or None}, tab=_tab(a))
        entries = reply.get(kind, [])
        if kind == "console":
            lines = [f"[{e.get('level', '')}] {e.get('message', '')}" for e in entries]
        else:
            lines = [e.get("message", "") + (f" ({e['url']}:{e.get('line', '')})" if e.get("url") else "")
                     for e in entries]
        out.data(reply, human="\n".join(lines) or f"(no {'console messages' if kind == 'console' else 'errors'})")

    return show


def tabs(c: Client, a: argparse.Namespace, out: Output) -> None:
    """GET /tabs as a table."""
    reply = c.get("/tabs")
    out.data(reply, human=table(reply.get("tabs", []), ("id", "title", "url")))


def tab(c: Client, a: argparse.Namespace, out: Output) -> None:
    """POST /tab focus (the tab becomes the caller's current one); without an id, ``tabs``."""
    if not a.id:
        tabs(c, a, out)
        return
    out.data(c.post("/tab", {"action": "focus", "tabId": a.id}))


def close(c: Client, a: argparse.Namespace, out: Output) -> None:
    """POST /close."""
    tab_id = a.id or _tab(a)
    out.data(c.post("/close", {"tabId": tab_id} if tab_id else {}))


def health(c: Client, a: argparse.Namespace, out: Output) -> int | None:
    """GET /health; exit 1 when the server says it is not ok (503)."""
    try:
        reply = c.get("/health")
    except ClientError as exc:
        if exc.status != 503:
            raise
        # 503 carries the status document (starting, draining, error): show it, and fail.
        out.data(exc.body if isinstance(exc.body, dict) else {"status": "error", "reason": exc.message})
        return 1
    out.data(reply)
    return 0


def server_list(path: str, columns: tuple[str, ...]) -> Verb:
    """``instances`` and ``profiles``: server mode only; a bridge says so plainly."""

    def show(c: Client, a: argparse.Namespace, out: Output) -> None:
        try:
            reply = c.get(path)
        except ClientError as exc:
            if exc.status in (404, 405):
                raise ClientError(f"{c.base_url} has no {path}: it is a bridge (one browser); instances and "
                                  "profiles are served by `pinchtab server`", status=exc.status,
                                  code=exc.code) from None
            raise
        rows = reply if isinstance(reply, list) else next(
            (v for v in reply.values() if isinstance(v, list)), None) if isinstance(reply, dict) else None
        out.data(reply, human=table(rows, columns) if rows is not None else format_human(reply))

    return show


# --------------------------------------------------------------------------
# The parsers


def register(sub: argparse._SubParsersAction) -> None:
    """Add every browser verb to the ``pinchtab`` command's subparsers."""
    common = argparse.ArgumentParser(add_help=False)
    add_global_options(common)

    def verb(name: str, summary: str, fn: Verb, *, snap_opts: bool = False,
             description: str | None = None) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=summary, description=description or summary[0].upper() + summary[1:] + ".",
                           parents=[common])
        if snap_opts:
            _snap_options(p)
        p.set_defaults(run=_runner(fn))
        return p

    p = verb("nav", "open a URL in the current tab (the first run opens one)", nav, snap_opts=True)
    p.add_argument("url")
    p.add_argument("--new-tab", action="store_true", help="open it in a new tab")
    for name, help_ in (("back", "go back in the tab's history"), ("forward", "go forward in the tab's history"),
                        ("reload", "reload the page")):
        verb(name, help_, history(f"/{name}"))

    p = verb("snap", "print the page's accessibility snapshot (refs to act on)", snap,
             description="Print the page as an accessibility snapshot: one line per element, `e5 button Save`. "
                         "Interactive elements in compact text by default.")
    scope = p.add_mutually_exclusive_group()
    scope.add_argument("-i", "--interactive", action="store_true", help="interactive elements only (the default)")
    scope.add_argument("--full", action="store_true", help="every node, not just interactive ones")
    style = p.add_mutually_exclusive_group()
    style.add_argument("-c", "--compact", action="store_true", help="compact lines (the default)")
    style.add_argument("--text", action="store_true", help="an indented tree")
    p.add_argument("-d", "--diff", action="store_true", help="only what changed since the last snapshot")
    p.add_argument("--max-tokens", type=int, metavar="N", help="cut at about N tokens (then page on with --after)")
    p.add_argument("--after", metavar="REF", help="continue a cut snapshot after this ref")
    p.add_argument("-s", "--selector", metavar="S", help="only this element's subtree")
    p.add_argument("--depth", type=int, metavar="N", help="at most N levels deep")

    p = verb("click", "click an element", action("click", lambda a: target(a.ref)), snap_opts=True)
    p.add_argument("ref", help="a ref from snap (e5) or a selector")
    p.add_argument("--wait-nav", action="store_true", help="the click loads a new page: wait for it")
    p = verb("type", "type text into an element, key by key", action("type", lambda a: {**target(a.ref),
                                                                                        "text": a.text}),
             snap_opts=True)
    p.add_argument("ref", help="a ref from snap (e5) or a selector")
    p.add_argument("text")
    p = verb("fill", "set an input's value at once", action("fill", lambda a: {**target(a.ref), "text": a.text}),
             snap_opts=True)
    p.add_argument("ref", help="a ref from snap (e5) or a selector")
    p.add_argument("text")
    p = verb("press", "press a key (Enter, Tab, Control+a)",
             action("press", lambda a: {"key": a.key, **(target(a.ref) if a.ref else {})}), snap_opts=True)
    p.add_argument("key")
    p.add_argument("ref", nargs="?", help="focus this element first")
    p.add_argument("--wait-nav", action="store_true", help="the key loads a new page: wait for it")
    p = verb("hover", "move the mouse over an element", action("hover", lambda a: target(a.ref)), snap_opts=True)
    p.add_argument("ref", help="a ref from snap (e5) or a selector")
    p = verb("focus", "focus an element", action("focus", lambda a: target(a.ref)), snap_opts=True)
    p.add_argument("ref", help="a ref from snap (e5) or a selector")
    p = verb("select", "choose an option of a <select>",
             action("select", lambda a: {**target(a.ref), "value": a.value}), snap_opts=True)
    p.add_argument("ref", help="a ref from snap (e5) or a selector")
    p.add_argument("value", help="the option's value or visible text")
    p = verb("scroll", "scroll an element into view, or the page", action("scroll", _scroll_fields), snap_opts=True)
    p.add_argument("ref", nargs="?", help="scroll this element into view")
    way = p.add_mutually_exclusive_group()
    for d in ("down", "up", "left", "right"):
        way.add_argument(f"--{d}", dest="direction", action="store_const", const=d, help=f"scroll the page {d}")
    p.add_argument("--pixels", type=int, metavar="N", help="how far to scroll the page")

    p = verb("text", "print the page's readable text", text)
    p.add_argument("--raw", action="store_true", help="all of the body's text, not just the main content")
    p.add_argument("--max-chars", type=int, metavar="N", help="cut after N characters")
    p = verb("screenshot", "save a screenshot (JPEG, or PNG for .png)", screenshot)
    p.add_argument("-o", "--output", metavar="FILE", help="where to write it (- for stdout; default "
                                                          "screenshot-<time>.jpg)")
    p.add_argument("--png", action="store_true", help="PNG instead of JPEG")
    p.add_argument("--quality", type=int, metavar="N", help="JPEG quality 0-100 (default 80)")
    p.add_argument("--full-page", action="store_true", help="the whole page, not just the viewport")
    p.add_argument("-s", "--selector", metavar="S", help="only this element")
    p = verb("pdf", "save the page as PDF", pdf)
    p.add_argument("-o", "--output", metavar="FILE", help="where to write it (- for stdout; default page-<time>.pdf)")
    p.add_argument("--landscape", action="store_true")

    p = verb("find", "find elements by description (best refs first)", find)
    p.add_argument("query", help='what to look for, e.g. "login button" or "role:button Sign in"')
    p = verb("eval", "run JavaScript in the page (needs security.allowEvaluate)", evaluate)
    p.add_argument("expression")
    for name, help_ in (("console", "print the page's console messages"),
                        ("errors", "print the page's uncaught JavaScript errors")):
        p = verb(name, help_, logs(name))
        p.add_argument("--limit", type=int, metavar="N", help="only the last N")

    verb("tabs", "list the open tabs", tabs)
    p = verb("tab", "make a tab the current one (no ID: list tabs)", tab)
    p.add_argument("id", nargs="?", metavar="ID")
    p = verb("close", "close a tab (default: the current one)", close)
    p.add_argument("id", nargs="?", metavar="ID")
    verb("health", "whether the server and its browser are up", health)
    verb("instances", "list browser instances (server mode)",
         server_list("/instances", ("id", "profileName", "port", "mode", "status", "url")))
    verb("profiles", "list browser profiles (server mode)",
         server_list("/profiles", ("id", "name", "running", "lastUsed", "accountEmail")))
