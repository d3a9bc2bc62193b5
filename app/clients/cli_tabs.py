"""The tab and server verbs of ``pinchtab``: ``tabs``, ``tab`` (focus, new, close, handoff...), ``close``,
``handoff``, ``resume``, ``handoff-status``, ``health``, and (server mode) ``instances`` and ``profiles``.
"""
from __future__ import annotations

import re
from typing import Any

from .cli_output import table
from .cli_verbs import Ctx, UsageError, Verb, Verbs, normalize_url, server_only
from .rest import ClientError

__all__ = ["register"]


def tabs(ctx: Ctx) -> None:
    """GET /tabs, as JSON (what the original prints)."""
    ctx.out.json(ctx.client.get("/tabs"))


def _tab_ref(ctx: Ctx, ref: str) -> str:
    """A tab id, or a 1-based position in ``pinchtab tabs``."""
    if not re.fullmatch(r"\d{1,3}", ref):
        return ref
    listed = ctx.client.get("/tabs").get("tabs") or []
    n = int(ref)
    if not 1 <= n <= len(listed):
        raise UsageError(f"tab index {n} out of range (1-{len(listed)})")
    return str(listed[n - 1]["id"])


_TAB_SUBCOMMANDS = ("new", "close", "handoff", "resume", "handoff-status")


def tab(ctx: Ctx) -> None:
    """``tab`` lists; ``tab <id|n>`` focuses (and makes it the CLI's current tab); ``tab new [url]``;
    ``tab close <id>``; ``tab handoff|resume|handoff-status [id]``."""
    words = list(ctx.args.words)
    if not words:
        tabs(ctx)
        return
    head, rest = words[0], words[1:]
    if head == "new":
        body: dict[str, Any] = {"action": "new"}
        if rest:
            body["url"] = normalize_url(rest[0])
        reply = ctx.client.post("/tab", body)
        ctx.remember(reply.get("tabId"))
        ctx.out.json(reply)
    elif head == "close":
        if not rest:
            raise UsageError("pinchtab tab close <id>")
        close_tab(ctx, _tab_ref(ctx, rest[0]))
    elif head in ("handoff", "resume", "handoff-status"):
        handoff(ctx, head, rest[0] if rest else None)
    else:
        tab_id = _tab_ref(ctx, head)
        reply = ctx.client.post("/tab", {"action": "focus", "tabId": tab_id})
        ctx.remember(tab_id)
        ctx.out.json(reply)


def close_tab(ctx: Ctx, tab_id: str | None) -> None:
    """POST /close; OK (the JSON with --json)."""
    tab_id = tab_id or ctx.tab()
    reply = ctx.client.post("/close", {"tabId": tab_id} if tab_id else {})
    if ctx.anonymous:
        ctx.tabs.forget(reply.get("tabId") or tab_id)
    ctx.out.answer(reply, "OK")


def close(ctx: Ctx) -> None:
    """POST /close (default: the current tab); OK."""
    close_tab(ctx, _tab_ref(ctx, ctx.args.id) if ctx.args.id else None)


def handoff(ctx: Ctx, what: str, tab_id: str | None) -> None:
    """Hand a tab to a person and back: /tabs/{id}/handoff, /resume (tab-only routes)."""
    tab_id = tab_id or ctx.tab()
    if not tab_id:
        raise UsageError(f"pinchtab tab {what} <id>  (no current tab)")
    if what == "handoff":
        body: dict[str, Any] = {"reason": ctx.opt("reason") or "manual_handoff"}
        if ctx.opt("timeout_ms"):
            body["timeoutMs"] = ctx.opt("timeout_ms")
        ctx.out.json(ctx.client.post("/handoff", body, tab=tab_id))
    elif what == "resume":
        body = {"status": ctx.opt("status")} if ctx.opt("status") else {}
        ctx.out.json(ctx.client.post("/resume", body, tab=tab_id))
    else:
        ctx.out.json(ctx.client.get("/handoff", tab=tab_id))


def handoff_verb(what: str) -> Verb:
    def run(ctx: Ctx) -> None:
        handoff(ctx, what, ctx.args.id)

    return run


def health(ctx: Ctx) -> int:
    """GET /health as JSON; exit 1 when the server says it is not ok (503)."""
    try:
        ctx.out.json(ctx.client.get("/health"))
    except ClientError as exc:
        if exc.status != 503:
            raise
        ctx.out.json(exc.body if isinstance(exc.body, dict) else {"status": "error", "reason": exc.message})
        return 1
    return 0


def server_list(path: str, columns: tuple[str, ...]) -> Verb:
    """``instances`` and ``profiles``: a table (JSON with --json); server mode only."""

    def show(ctx: Ctx) -> None:
        reply = server_only(ctx, "GET", path)
        rows = reply if isinstance(reply, list) else next(
            (v for v in reply.values() if isinstance(v, list)), None) if isinstance(reply, dict) else None
        if ctx.out.as_json or rows is None:
            ctx.out.json(reply)
        else:
            ctx.out.line(table(rows, columns))

    return show


# --------------------------------------------------------------------------
# The parsers


def register(sub: Any) -> None:
    """Add the tab and server verbs to the ``pinchtab`` subparsers."""
    v = Verbs(sub)

    v.add("tabs", "list the open tabs (JSON)", tabs)
    p = v.add("tab", "list tabs; tab <id|n> makes one current; tab new|close|handoff|resume|handoff-status", tab)
    p.add_argument("words", nargs="*", metavar="ARG")
    p.set_defaults(word_choices=_TAB_SUBCOMMANDS)
    p.add_argument("--reason", help="tab handoff: why a person takes over")
    p.add_argument("--timeout-ms", type=int, help="tab handoff: resume by itself after this long")
    p.add_argument("--status", help="tab resume: a note (completed, failed...)")
    p = v.add("close", "close a tab (default: the current one)", close)
    p.add_argument("id", nargs="?", metavar="ID")
    for name, what, help_ in (("handoff", "handoff", "pause automation on a tab for a person"),
                              ("resume", "resume", "resume automation on a paused tab"),
                              ("handoff-status", "handoff-status", "show a tab's handoff state")):
        p = v.add(name, help_, handoff_verb(what))
        p.add_argument("id", nargs="?", metavar="ID")
        if what == "handoff":
            p.add_argument("--reason")
            p.add_argument("--timeout-ms", type=int)
        if what == "resume":
            p.add_argument("--status")
    v.add("health", "whether the server and its browser are up (JSON)", health)
    v.add("instances", "list browser instances (server mode)",
          server_list("/instances", ("id", "profileName", "port", "mode", "status", "url")))
    v.add("profiles", "list browser profiles (server mode)",
          server_list("/profiles", ("id", "name", "running", "lastUsed", "accountEmail")))
