"""The page verbs of ``pinchtab``: open it (``nav``, ``quick``, ``back``, ``forward``, ``reload``), see it
(``snap``), and read it (``text``, ``title``, ``url``, ``html``, ``styles``, ``value``...``attr``, ``find``,
``eval``, ``wait``). Two declaring functions, because :data:`app.clients.cli.VERBS` lists the action verbs
between them (the order ``pinchtab help`` has always shown).
"""
from __future__ import annotations

import argparse
import re
import sys
from typing import Any

from .cli_output import scalar
from .cli_verbs import Ctx, UsageError, Verb, Verbs, normalize_url, print_after, target
from .rest import ClientError

__all__ = ["register_navigation", "register_reading"]


# --------------------------------------------------------------------------
# Navigation


def _nav_body(ctx: Ctx, url: str) -> dict[str, Any]:
    body: dict[str, Any] = {"url": normalize_url(url)}
    for flag, key in (("new_tab", "newTab"), ("block_images", "blockImages"), ("block_ads", "blockAds"),
                      ("dismiss_banners", "dismissBanners")):
        if ctx.opt(flag):
            body[key] = True
    return body


def navigate(ctx: Ctx, url: str, *, wait_for: str | None = None) -> dict[str, Any]:
    """POST /navigate in the current tab (a new tab with --new-tab or when there is none)."""
    body = _nav_body(ctx, url)
    if wait_for:
        body["waitFor"] = wait_for
    if body.get("newTab"):
        return ctx.client.post("/navigate", body)
    tab_id = ctx.tab()
    if not tab_id:
        return ctx.client.post("/navigate", body)
    try:
        return ctx.client.post("/navigate", body, tab=tab_id)
    except ClientError as exc:
        if exc.status != 404 or ctx.explicit_tab:
            raise
        ctx.tabs.forget(tab_id)  # the remembered tab was closed: open a new one
        return ctx.client.post("/navigate", body)


def nav(ctx: Ctx) -> None:
    """Print the tab id (all a script needs: ``tab=$(pinchtab nav URL)``), or the JSON."""
    from .cli_server import ensure_server

    ensure_server(ctx.client)
    reply = navigate(ctx, ctx.args.url)
    tab_id = reply.get("tabId") or ""
    ctx.remember(tab_id)
    if ctx.out.as_json or tab_id:
        ctx.out.answer(reply, tab_id)
    print_after(ctx, tab_id or None)


def quick(ctx: Ctx) -> None:
    """For people: navigate (waiting for the network to go quiet), then the page's structure."""
    from .cli_server import ensure_server

    ensure_server(ctx.client)
    url = normalize_url(ctx.args.url)
    if not ctx.out.as_json:
        ctx.out.line(f"Navigating to {url}...")
    reply = navigate(ctx, url, wait_for="networkidle")
    tab_id = reply.get("tabId") or None
    ctx.remember(tab_id)
    snapshot = ctx.client.request("GET", "/snapshot", tab=tab_id, params={
        "filter": "interactive", "format": "json" if ctx.out.as_json else "compact"})
    if ctx.out.as_json:
        ctx.out.json({**reply, "snapshot": snapshot.json()})
        return
    ctx.out.line(f"{tab_id or ''}\n\nPage structure\n{snapshot.text}\n")
    ctx.out.line(f"Title: {reply.get('title', '')}\nURL: {reply.get('url', '')}")


def history(path: str) -> Verb:
    """``back``/``forward`` print the URL they land on, ``reload`` OK."""

    def go(ctx: Ctx) -> None:
        params = {"dismissBanners": True} if ctx.opt("dismiss_banners") else None
        reply = ctx.post(path, params=params)
        ctx.out.answer(reply, "OK" if path == "/reload" else reply.get("url") or "OK")
        print_after(ctx, ctx.tab() or reply.get("tabId"))

    return go


# --------------------------------------------------------------------------
# Snapshot


def snap(ctx: Ctx) -> None:
    """GET /snapshot: interactive and compact unless told otherwise (as the original)."""
    a = ctx.args
    as_json = ctx.out.as_json or a.full or a.compact is False
    fmt = "text" if a.text else "json" if as_json else "compact"
    interactive = a.interactive is not False and not a.full
    # The tab as ?tabId=, not /tabs/{id}/snapshot: the route the original's clients call, which the
    # activity log records and scripts look for (`activity tab <id>` lists a /snapshot event).
    reply = ctx.client.request("GET", "/snapshot", params={
        "filter": "interactive" if interactive else "all", "format": fmt, "diff": a.diff or None,
        "maxTokens": a.max_tokens, "selector": a.selector or a.scope, "depth": a.depth, "after": a.after,
        "tabId": ctx.tab()})
    if fmt == "json":
        ctx.out.json(reply.json())
    else:
        ctx.out.line(reply.text)


# --------------------------------------------------------------------------
# Reading the page


def text(ctx: Ctx) -> None:
    """GET /text: the text itself (the JSON with --json)."""
    a = ctx.args
    sel = a.selector or a.scope
    params: dict[str, Any] = {"mode": "raw" if a.raw or a.full else None, "frameId": a.frame or None,
                              "maxChars": a.max_chars, **(_sel_params(sel) if sel else {})}
    reply = ctx.get("/text", params)
    ctx.out.answer(reply, reply.get("text", ""))


def _sel_params(sel: str) -> dict[str, str]:
    return {"ref": target(sel)["ref"]} if "ref" in target(sel) else {"selector": sel}


def inspect(path: str, key: str, *, needs_selector: bool = False) -> Verb:
    """``title``, ``url``, ``html``, ``styles``, ``value``, ``attr``, ``box``, ``visible``, ``enabled``,
    ``checked``, ``count``: one GET, the one value printed (the JSON with --json)."""

    def read(ctx: Ctx) -> None:
        a = ctx.args
        params: dict[str, Any] = {"frameId": ctx.opt("frame") or None, "maxChars": ctx.opt("max_chars"),
                                  "prop": ctx.opt("prop") or None, "name": ctx.opt("name") or None}
        sel = ctx.opt("scope") or ctx.opt("selector")
        if sel:
            params.update({"selector": sel} if path == "/count" else _sel_params(sel))
        elif needs_selector:
            raise UsageError(f"pinchtab {a.command} <selector>")
        reply = ctx.get(path, params)
        value = reply.get(key) if isinstance(reply, dict) else reply
        if path == "/styles" and a.prop and isinstance(value, dict):
            value = value.get(a.prop, "")
        if isinstance(value, dict) and not ctx.out.as_json:
            ctx.out.json(value)
            return
        ctx.out.answer(reply, "" if value is None else value)  # a missing attribute prints an empty line

    return read


def find(ctx: Ctx) -> int | None:
    """POST /find: ``<ref>\\t<role>\\t"<name>"`` per match; ``--ref-only`` prints just the best ref."""
    a = ctx.args
    body: dict[str, Any] = {"query": a.query}
    if a.threshold is not None:
        body["threshold"] = a.threshold
    if a.explain:
        body["explain"] = True
    reply = ctx.post("/find", body)
    if a.ref_only:
        best = reply.get("best_ref")
        if not best:
            print("Error: no element found", file=sys.stderr)
            return 1
        ctx.out.value(best)
        return 0
    if ctx.out.as_json:
        ctx.out.json(reply)
        return 0
    for m in reply.get("matches") or []:
        line = f"{m.get('ref', '')}\t{m.get('role', '')}\t\"{m.get('name', '')}\""
        if a.explain and m.get("explain"):
            line += "\t" + scalar(m["explain"])
        ctx.out.line(line)
    return 0


def evaluate(ctx: Ctx) -> None:
    """POST /evaluate: a scalar as it is, an object or array as compact JSON."""
    body: dict[str, Any] = {"expression": " ".join(ctx.args.expression)}
    if ctx.args.await_promise:
        body["awaitPromise"] = True
    reply = ctx.post("/evaluate", body)
    ctx.out.answer(reply, reply.get("result"))


def wait(ctx: Ctx) -> int:
    """POST /wait: ``wait <selector|ms>``, ``--text``, ``--not-text``, ``--url``, ``--load``, ``--fn``."""
    a = ctx.args
    body: dict[str, Any] = {}
    if a.what is not None:
        if re.fullmatch(r"\d+", a.what):
            body["ms"] = int(a.what)
        else:
            body["selector"] = a.what
    for flag, key in (("wait_text", "text"), ("not_text", "notText"), ("url", "url"), ("load", "load"),
                      ("fn", "fn"), ("state", "state"), ("timeout", "timeout")):
        if ctx.opt(flag) is not None:
            body[key] = ctx.opt(flag)
    if not body:
        raise UsageError("pinchtab wait <selector|ms> | --text T | --not-text T | --url GLOB | --load L | --fn JS")
    reply = ctx.post("/wait", body, on_tab="ms" not in body)
    if ctx.out.as_json:
        ctx.out.json(reply)
    elif reply.get("waited"):
        ctx.out.ok()
    if not reply.get("waited"):
        print(f"Error: {reply.get('error') or 'timeout'}", file=sys.stderr)
        return 4  # the original's exit status for a wait that ran out of time
    return 0


# --------------------------------------------------------------------------
# The parsers


def register_navigation(sub: Any) -> None:
    """Add nav, quick, back, forward, reload and snap to the ``pinchtab`` subparsers
    (:class:`app.clients.cli.Subcommands`)."""
    v = Verbs(sub)

    p = v.add("nav", "open a URL in the current tab (prints the tab id)", nav, aliases=("goto", "navigate", "open"),
              post=True)
    p.add_argument("url")
    p.add_argument("--new-tab", action="store_true", help="open it in a new tab")
    p.add_argument("--block-images", action="store_true", help="do not load images")
    p.add_argument("--block-ads", action="store_true", help="do not load ads")
    p.add_argument("--dismiss-banners", action="store_true", help="dismiss cookie/consent banners after load")
    p.add_argument("--print-tab-id", action="store_true", help=argparse.SUPPRESS)  # what it prints anyway
    p = v.add("quick", "open a URL and print its interactive snapshot", quick)
    p.add_argument("url")
    for name, help_ in (("back", "go back in the tab's history (prints the URL)"),
                        ("forward", "go forward in the tab's history (prints the URL)"),
                        ("reload", "reload the page")):
        p = v.add(name, help_, history(f"/{name}"), post_text=True)
        p.add_argument("--dismiss-banners", action="store_true", help="dismiss cookie/consent banners after")

    p = v.add("snap", "print the page's accessibility snapshot (refs to act on)", snap, aliases=("snapshot",),
              description="Print the page as an accessibility snapshot: one line per element, `e5 button Save`. "
                          "Interactive elements in compact text by default; --full or --compact=false for JSON.")
    p.add_argument("scope", nargs="?", metavar="selector", help="only this element's subtree")
    p.add_argument("-i", "--interactive", action=argparse.BooleanOptionalAction, default=None,
                   help="interactive elements only (the default; --interactive=false for every node)")
    p.add_argument("-c", "--compact", action=argparse.BooleanOptionalAction, default=None,
                   help="compact lines (the default; --compact=false for JSON)")
    p.add_argument("--full", action="store_true", help="every node, as JSON")
    p.add_argument("--text", action="store_true", help="an indented tree")
    p.add_argument("-d", "--diff", action="store_true", help="only what changed since the last snapshot")
    p.add_argument("-s", "--selector", metavar="SEL", help="only this element's subtree")
    p.add_argument("--max-tokens", type=int, metavar="N", help="cut at about N tokens (then page on with --after)")
    p.add_argument("--after", metavar="REF", help="continue a cut snapshot after this ref")
    p.add_argument("--depth", type=int, metavar="N", help="at most N levels deep")


def register_reading(sub: Any) -> None:
    """Add the verbs that read the page (text to wait) to the ``pinchtab`` subparsers."""
    v = Verbs(sub)

    p = v.add("text", "print the page's readable text", text)
    p.add_argument("scope", nargs="?", metavar="selector", help="only this element's text")
    p.add_argument("-s", "--selector", metavar="SEL", help="only this element's text")
    p.add_argument("--raw", action="store_true", help="all of the body's text (same as --full)")
    p.add_argument("--full", action="store_true", help="all of the body's text, not just the main content")
    p.add_argument("--frame", metavar="FRAME_ID", help="the text of this iframe")
    p.add_argument("--max-chars", type=int, metavar="N", help="cut after N characters")
    for name, path, key, help_ in (("title", "/title", "title", "print the page's title"),
                                   ("url", "/url", "url", "print the page's URL")):
        p = v.add(name, help_, inspect(path, key))
        p.add_argument("--frame", metavar="FRAME_ID", help="of this iframe")
    p = v.add("html", "print the page's (or an element's) HTML", inspect("/html", "html"))
    p.add_argument("scope", nargs="?", metavar="selector")
    p.add_argument("-s", "--selector", metavar="SEL")
    p.add_argument("--frame", metavar="FRAME_ID")
    p.add_argument("--max-chars", type=int, metavar="N")
    p = v.add("styles", "print computed styles of the root or an element", inspect("/styles", "styles"))
    p.add_argument("scope", nargs="?", metavar="selector")
    p.add_argument("-s", "--selector", metavar="SEL")
    p.add_argument("--prop", metavar="NAME", help="only this property")
    p.add_argument("--frame", metavar="FRAME_ID")
    for name, key, help_ in (("value", "value", "print a form element's value"),
                             ("box", "box", "print an element's bounding box"),
                             ("visible", "visible", "print whether an element is visible"),
                             ("enabled", "enabled", "print whether an element is enabled"),
                             ("checked", "checked", "print whether a checkbox is checked"),
                             ("count", "count", "print how many elements match")):
        p = v.add(name, help_, inspect(f"/{name}", key, needs_selector=True))
        p.add_argument("scope", metavar="selector")
    p = v.add("attr", "print an element's attribute", inspect("/attr", "value", needs_selector=True))
    p.add_argument("scope", metavar="selector")
    p.add_argument("name")

    p = v.add("find", "find elements by description (ref, role, name per line)", find)
    p.add_argument("query", help='what to look for, e.g. "login button" or "role:button Sign in"')
    p.add_argument("--ref-only", action="store_true", help="print only the best ref")
    p.add_argument("--explain", action="store_true", help="add each match's score breakdown")
    p.add_argument("--threshold", type=float, help="the lowest score that counts (0-1)")
    p = v.add("eval", "run JavaScript in the page (needs security.allowEvaluate)", evaluate, aliases=("evaluate",))
    p.add_argument("expression", nargs="+")
    p.add_argument("--await-promise", action="store_true", help="wait for a returned promise")
    p = v.add("wait", "wait for an element, text, URL, load state, JS condition or a time", wait)
    p.add_argument("what", nargs="?", metavar="selector|ms")
    p.add_argument("--text", dest="wait_text", metavar="TEXT", help="until the page shows this text")
    p.add_argument("--not-text", metavar="TEXT", help="until this text is gone")
    p.add_argument("--url", metavar="GLOB", help="until the URL matches")
    p.add_argument("--load", metavar="STATE", help="until this load state (networkidle, ready-state...)")
    p.add_argument("--fn", metavar="JS", help="until this expression is truthy")
    p.add_argument("--state", choices=("visible", "hidden"), help="with a selector: visible (default) or hidden")
    p.add_argument("--timeout", type=int, metavar="MS", help="give up after MS (default 10000, max 30000)")
