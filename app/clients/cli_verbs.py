"""The browser verbs of ``pinchtab`` (``nav``, ``snap``, ``click``, ``text``...): thin REST clients that
take the original's arguments and print what it prints, so scripts written for it run unchanged:
``tab=$(pinchtab nav URL)``, ``pinchtab snap -i``, ``pinchtab click e5 --tab $tab``.

Who calls: ``--agent-id`` (or ``PINCHTAB_AGENT_ID``) makes the calls as that agent, whose current tab
the server keeps; ``PINCHTAB_SESSION`` sends an agent session token. Without either the calls are
anonymous, and the CLI remembers its current tab itself (:mod:`app.clients.cli_state`).
Exit status: 0 on success, 1 when the server (or the way to it) answers with an error (the message
on stderr), 2 for usage and config errors, 4 when ``wait`` runs out of time (as the original).
"""
from __future__ import annotations

import argparse
import base64
import os
import re
import sys
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from .cli_output import Output, render_error, scalar, table
from .cli_state import TabState
from .rest import Client, ClientError, connect

__all__ = ["Ctx", "UsageError", "Verb", "Verbs", "add_global_options", "bool_flags", "client_for", "normalize_url",
           "register", "save", "server_only", "target"]

_REF = re.compile(r"(?:ref:)?(e\d+)")
_TAB_PROBE_TIMEOUT_S = 2.0


class Ctx:
    """One run of a verb: the parsed arguments, the client, the output, and the current tab."""

    def __init__(self, args: argparse.Namespace, client: Client, out: Output, tabs: TabState,
                 anonymous: bool) -> None:
        self.args = args
        self.client = client
        self.out = out
        self.tabs = tabs
        self.anonymous = anonymous
        self._tab: str | None = None
        self._resolved = False

    def opt(self, name: str, default: Any = None) -> Any:
        return getattr(self.args, name, default)

    @property
    def explicit_tab(self) -> str | None:
        return self.opt("tab") or None

    def tab(self) -> str | None:
        """``--tab``, else (anonymous callers) the remembered tab, else None: the server's choice."""
        if not self._resolved:
            self._resolved = True
            self._tab = self.explicit_tab or (self.tabs.current(self._exists) if self.anonymous else "") or None
        return self._tab

    @property
    def remembered_tab(self) -> str | None:
        """The tab this run took from the CLI's memory (not from ``--tab``), if any."""
        return self._tab if self._resolved and self.anonymous and not self.explicit_tab else None

    def _exists(self, tab_id: str) -> bool:
        try:
            self.client.request("GET", "/title", tab=tab_id, timeout_s=_TAB_PROBE_TIMEOUT_S)
        except ClientError as exc:
            return exc.status != 404  # only a definite "gone" forgets it
        return True

    def remember(self, tab_id: str | None) -> None:
        if self.anonymous and tab_id:
            self.tabs.write(tab_id)

    # The REST calls, on the verb's tab (the /tabs/{id}/... twin) unless told otherwise.
    def get(self, path: str, params: dict[str, Any] | None = None, *, on_tab: bool = True) -> Any:
        return self.client.get(path, params, tab=self.tab() if on_tab else None)

    def post(self, path: str, body: dict[str, Any] | None = None, *, on_tab: bool = True,
             params: dict[str, Any] | None = None) -> Any:
        return self.client.post(path, body, tab=self.tab() if on_tab else None, params=params)

    def raw(self, method: str, path: str, *, params: dict[str, Any] | None = None,
            body: dict[str, Any] | None = None, on_tab: bool = True) -> Any:
        return self.client.request(method, path, params=params, body=body, tab=self.tab() if on_tab else None)


Verb = Callable[[Ctx], int | None]


def add_global_options(parser: argparse.ArgumentParser) -> None:
    """``--server``, ``--tab``, ``--json``, ``--agent-id``, before or after the verb.

    The defaults are SUPPRESS so a verb's parser does not overwrite what was given before the
    verb (``pinchtab --json tabs`` and ``pinchtab tabs --json`` both work).
    """
    g = parser.add_argument_group("connection and output")
    g.add_argument("--server", metavar="URL", default=argparse.SUPPRESS,
                   help="the pinchtab server (default: $PINCHTAB_SERVER, else 127.0.0.1 and the config's port)")
    g.add_argument("--tab", metavar="ID", default=argparse.SUPPRESS,
                   help="act on this tab (default: the tab your last `nav` opened)")
    g.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="print the server's full JSON answer")
    g.add_argument("--agent-id", metavar="ID", default=argparse.SUPPRESS,
                   help="call as this agent, whose current tab the server keeps (default: $PINCHTAB_AGENT_ID, "
                        "else anonymous)")


def agent_of(args: argparse.Namespace, env: dict[str, str] | None = None) -> str:
    env = dict(os.environ) if env is None else env
    return (getattr(args, "agent_id", None) or env.get("PINCHTAB_AGENT_ID") or "").strip()


def client_for(args: argparse.Namespace, *, timeout_s: float | None = None) -> tuple[Client, bool]:
    """The client the user means, and whether its calls are anonymous."""
    agent = agent_of(args)
    session = os.environ.get("PINCHTAB_SESSION", "").strip()
    kwargs: dict[str, Any] = {"timeout_s": timeout_s} if timeout_s else {}
    client = connect(getattr(args, "server", None), source="client", agent_id=agent, session=session, **kwargs)
    return client, not agent and not session


def runner(fn: Verb) -> Callable[[argparse.Namespace], int]:
    """Connect as the caller asked, run the verb, and turn a failed request into exit status 1."""

    def run(args: argparse.Namespace) -> int:
        client, anonymous = client_for(args)
        ctx = Ctx(args, client, Output(bool(getattr(args, "json", False))), TabState(), anonymous)
        try:
            return fn(ctx) or 0
        except ClientError as exc:
            print(render_error(exc), file=sys.stderr)
            remembered = ctx.remembered_tab
            if exc.status == 404 and remembered and remembered in exc.message:
                # The remembered tab is gone: forget it, so the next command targets the server's tab.
                ctx.tabs.forget(remembered)
                print("   The remembered current tab was closed; it is forgotten now. Retry, or open one "
                      "with: pinchtab nav <url>", file=sys.stderr)
            return 1
        except UsageError as exc:
            print(f"Usage: {exc}", file=sys.stderr)
            return 2
        except OSError as exc:  # writing -o FILE, reading a file to upload
            what = getattr(exc, "what", None) or exc.filename or ""
            print(f"Error: {f'{what}: ' if what else ''}{exc.strerror or exc}", file=sys.stderr)
            return 1

    run.calls_api = True  # type: ignore[attr-defined]  # read by app.clients.cli.main
    return run


class UsageError(Exception):
    """Arguments argparse accepted that do not make a command (exit 2, like argparse's own)."""


def target(sel: str) -> dict[str, str]:
    """A ref (``e5``, ``ref:e5``) or any unified selector (CSS, ``text:``, ``xpath:``, ``role:``...)."""
    m = _REF.fullmatch(sel)
    return {"ref": m.group(1)} if m else {"selector": sel}


def normalize_url(url: str) -> str:
    """``example.com`` -> ``https://example.com``, as the original; schemes and ``about:`` kept."""
    if "://" in url or url.startswith(("about:", "data:", "file:", "chrome:")):
        return url
    host = url.split("/", 1)[0].split(":", 1)[0]
    local = host in ("localhost", "127.0.0.1", "[::1]") or host.endswith(".localhost")
    return ("http://" if local else "https://") + url


def save(ctx: Ctx, path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` (atomically; ``-`` is stdout) and say so: ``Saved page.pdf (N bytes)``."""
    if path == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    from ..web.files import write_atomic  # it loads the error shape's schemas: only for a file

    write_atomic(Path(path), data, mode=0o644, what=path)
    if ctx.out.as_json:
        ctx.out.json({"path": path, "size": len(data)})
    else:
        ctx.out.line(f"Saved {path} ({len(data)} bytes)")


# --------------------------------------------------------------------------
# After an action: --snap, --snap-diff, --text


def print_after(ctx: Ctx, tab_id: str | None, reply: dict[str, Any] | None = None) -> None:
    """The snapshot (or its diff) and the page text the post-action flags ask for."""
    mode = ctx.opt("snap") or ""
    if mode:
        snapshot = (reply or {}).get("snapshot")
        if not isinstance(snapshot, str):
            snapshot = ctx.client.request("GET", "/snapshot", tab=tab_id, params={
                "filter": "interactive", "format": "compact", "diff": mode == "diff" or None}).text
        if not (ctx.out.as_json and reply is not None and "snapshot" in reply):
            ctx.out.line(snapshot)
    if ctx.opt("text_after"):
        ctx.out.line(ctx.client.get("/text", tab=tab_id).get("text", ""))


def snap_options(p: argparse.ArgumentParser, *, text: bool) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument("--snap", dest="snap", action="store_const", const="compact", default="",
                   help="print the page's interactive snapshot afterwards")
    g.add_argument("--snap-diff", dest="snap", action="store_const", const="diff",
                   help="print what changed on the page afterwards")
    if text:
        p.add_argument("--text", dest="text_after", action="store_true", help="print the page's text afterwards")


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


_BOOL_FLAG = re.compile(r"(--[a-z][a-z-]*)=(true|false|1|0|yes|no)", re.I)


def bool_flags(argv: list[str]) -> list[str]:
    """``--compact=false`` -> ``--no-compact`` (and ``=true`` -> ``--compact``): the original's flags
    are Go booleans that take ``=false``; argparse spells that ``--no-``."""
    out = []
    for word in argv:
        m = _BOOL_FLAG.fullmatch(word)
        if m and m.group(1) in _BOOL_FLAG_NAMES:
            on = m.group(2).lower() in ("true", "1", "yes")
            out.append(m.group(1) if on else "--no-" + m.group(1)[2:])
        else:
            out.append(word)
    return out


_BOOL_FLAG_NAMES = ("--interactive", "--compact", "--with-bounds", "--screenshot", "--network-monitor")


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
# Actions


def _pointer(ctx: Ctx, sel: str | None, kind: str) -> dict[str, Any]:
    """The target of a pointer action: ``--css``, ``--x/--y``, or the selector argument."""
    fields: dict[str, Any] = {}
    if ctx.opt("x") is not None or ctx.opt("y") is not None:
        fields.update(x=ctx.opt("x") or 0, y=ctx.opt("y") or 0)
    elif ctx.opt("css"):
        fields["selector"] = ctx.opt("css")
    elif sel:
        fields.update(target(sel))
    else:
        raise UsageError(f"pinchtab {kind} <selector>  or  pinchtab {kind} --css <selector>  or  "
                         f"pinchtab {kind} --x <num> --y <num>")
    return fields


def act(ctx: Ctx, body: dict[str, Any]) -> dict[str, Any]:
    """POST /action; print OK (or the JSON), then what the post-action flags ask for."""
    if ctx.opt("snap"):
        body["snap"] = ctx.opt("snap")  # the snapshot comes back in the same answer
    if ctx.opt("humanize"):
        body["humanize"] = True
    reply = ctx.post("/action", body)
    ctx.out.answer(reply, "OK")
    print_after(ctx, ctx.tab(), reply)
    return reply


def action(kind: str, fields: Callable[[Ctx], dict[str, Any]]) -> Verb:
    def run(ctx: Ctx) -> None:
        act(ctx, {"kind": kind, **fields(ctx)})

    return run


def click_fields(kind: str) -> Callable[[Ctx], dict[str, Any]]:
    def fields(ctx: Ctx) -> dict[str, Any]:
        body = _pointer(ctx, ctx.opt("selector"), kind)
        if ctx.opt("wait_nav"):
            body["waitNav"] = True
            if ctx.opt("dismiss_banners"):
                body["dismissBanners"] = True
        for flag, key in (("dialog_action", "dialogAction"), ("dialog_text", "dialogText"), ("mode", "mode"),
                          ("button", "button")):
            if ctx.opt(flag):
                body[key] = ctx.opt(flag)
        return body

    return fields


def press_fields(ctx: Ctx) -> dict[str, Any]:
    """``press <key>``; ``press <selector> <key>`` focuses the element first."""
    if ctx.args.second:
        return {**target(ctx.args.first), "key": ctx.args.second}
    return {"key": ctx.args.first}


_SCROLL_PX = 800


def scroll_fields(ctx: Ctx) -> dict[str, Any]:
    """``scroll down|up|left|right|<pixels>|<selector>`` (pixels and directions scroll the page)."""
    arg = ctx.args.where
    if ctx.opt("css"):
        return {"selector": ctx.opt("css")}
    if arg is None or re.fullmatch(r"-?\d+", arg):
        return {"scrollY": int(arg) if arg is not None else _SCROLL_PX}
    way = {"down": ("scrollY", _SCROLL_PX), "up": ("scrollY", -_SCROLL_PX),
           "right": ("scrollX", _SCROLL_PX), "left": ("scrollX", -_SCROLL_PX)}.get(arg.lower())
    if way:
        return {way[0]: way[1]}
    return target(arg)


def drag(ctx: Ctx) -> None:
    """``drag <sel> --drag-x N --drag-y N`` (one drag), or ``drag <from> <to>`` (each a selector or x,y)."""
    a = ctx.args
    if a.drag_x or a.drag_y:
        if a.to:
            raise UsageError("pinchtab drag <selector> --drag-x <n> --drag-y <n>")
        act(ctx, {"kind": "drag", **target(a.source), "dragX": a.drag_x or 0, "dragY": a.drag_y or 0})
        return
    if not a.to:
        raise UsageError("pinchtab drag <from> <to>  or  pinchtab drag <selector> --drag-x <n> --drag-y <n>")

    def point(raw: str) -> dict[str, Any]:
        m = re.fullmatch(r"\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*", raw)
        return {"x": float(m.group(1)), "y": float(m.group(2))} if m else target(raw)

    button = {"button": a.button} if a.button else {}
    steps = [{"kind": "mouse-move", **point(a.source)}, {"kind": "mouse-down", **button},
             {"kind": "mouse-move", **point(a.to)}, {"kind": "mouse-up", **button}]
    reply = ctx.post("/actions", {"actions": steps, "stopOnError": True})
    failed = [r for r in reply.get("results", []) if not r.get("success")]
    if failed:
        raise ClientError(f"drag step {failed[0].get('index')}: {failed[0].get('error')}", status=400,
                          code="action_failed")
    ctx.out.answer(reply, "OK")


def mouse(ctx: Ctx) -> None:
    """``mouse move <x> <y>|<sel>``, ``mouse down|up [sel]``, ``mouse wheel [dy|sel] --dx --dy``."""
    a = ctx.args
    what, rest = a.what, list(a.rest)
    body: dict[str, Any] = {"kind": f"mouse-{what}"}
    if a.button and what in ("down", "up"):
        body["button"] = a.button
    if what == "move":
        if len(rest) == 2:
            try:
                body.update(x=float(rest[0]), y=float(rest[1]))
            except ValueError:
                raise UsageError("pinchtab mouse move <x> <y>") from None
        elif len(rest) == 1:
            body.update(target(rest[0]))
        else:
            body.update(_pointer(ctx, None, "mouse move"))
    elif what in ("down", "up"):
        if len(rest) > 1:
            raise UsageError(f"pinchtab mouse {what} [selector]")
        if rest or ctx.opt("css") or ctx.opt("x") is not None or ctx.opt("y") is not None:
            body.update(_pointer(ctx, rest[0] if rest else None, f"mouse {what}"))
    else:  # wheel
        if len(rest) > 1:
            raise UsageError("pinchtab mouse wheel <dy> [--dx <n>]  or  pinchtab mouse wheel [selector]")
        if rest and re.fullmatch(r"-?\d+", rest[0]):
            body["deltaY"] = int(rest[0])
        elif rest:
            body.update(target(rest[0]))
        if a.dx is not None:
            body["deltaX"] = a.dx
        if a.dy is not None:
            body["deltaY"] = a.dy
    act(ctx, body)


def keyboard(ctx: Ctx) -> None:
    """``keyboard type <text>`` (key events) or ``keyboard inserttext <text>`` (one insert)."""
    kind = "keyboard-type" if ctx.args.how == "type" else "keyboard-inserttext"
    act(ctx, {"kind": kind, "text": " ".join(ctx.args.text)})


def dialog(ctx: Ctx) -> None:
    """POST /dialog accept|dismiss [text]."""
    body: dict[str, Any] = {"action": ctx.args.how}
    if ctx.args.text:
        body["text"] = " ".join(ctx.args.text)
    ctx.out.answer(ctx.post("/dialog", body), "OK")


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
# Files: screenshot, pdf


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def screenshot(ctx: Ctx) -> None:
    """GET /screenshot into a file: ``Saved X (N bytes)``; ``--annotate`` adds a ``[n] ref`` legend."""
    a = ctx.args
    png = a.format == "png" or a.png or (a.output or "").lower().endswith(".png")
    fmt = "png" if png else "jpeg"
    path = a.output or f"screenshot-{_stamp()}.{'png' if png else 'jpg'}"
    params: dict[str, Any] = {"format": fmt, "quality": a.quality, "selector": a.selector, "scale": a.scale,
                              "beyondViewport": True if a.beyond_viewport else None}
    if a.annotate:
        reply = ctx.get("/screenshot", {**params, "annotate": True})
        save(ctx, path, base64.b64decode(reply.get("base64", "")))
        for ann in reply.get("annotations") or []:
            ref = ann.get("ref", "")
            digits = re.search(r"\d+", ref)
            line = f"[{digits.group(0) if digits else ref}] {ref}"
            if ann.get("role"):
                line += f" {ann['role']}"
            line += f' "{ann["name"]}"' if ann.get("name") else (f" <{ann['tag']}>" if ann.get("tag") else "")
            ctx.out.line(line)
        return
    save(ctx, path, ctx.raw("GET", "/screenshot", params={**params, "raw": True}).body)


_PDF_OPTIONS = (("scale", "scale"), ("paper_width", "paperWidth"), ("paper_height", "paperHeight"),
                ("margin_top", "marginTop"), ("margin_bottom", "marginBottom"), ("margin_left", "marginLeft"),
                ("margin_right", "marginRight"), ("page_ranges", "pageRanges"), ("header_template", "headerTemplate"),
                ("footer_template", "footerTemplate"))
_PDF_SWITCHES = (("landscape", "landscape"), ("prefer_css_page_size", "preferCSSPageSize"),
                 ("display_header_footer", "displayHeaderFooter"), ("generate_tagged_pdf", "generateTaggedPDF"),
                 ("generate_document_outline", "generateDocumentOutline"))


def pdf(ctx: Ctx) -> None:
    """GET /pdf into a local file, or (``--file-output``) into the server's state dir."""
    a = ctx.args
    params: dict[str, Any] = {key: getattr(a, flag) for flag, key in _PDF_OPTIONS if getattr(a, flag) is not None}
    params.update({key: True for flag, key in _PDF_SWITCHES if getattr(a, flag)})
    if a.file_output:
        ctx.out.json(ctx.get("/pdf", {**params, "output": "file", "path": a.path}))
        return
    save(ctx, a.output or f"page-{_stamp()}.pdf", ctx.raw("GET", "/pdf", params={**params, "raw": True}).body)


# --------------------------------------------------------------------------
# Logs, tabs, the server


def logs(kind: str) -> Verb:
    """``console`` and ``errors``: ``HH:MM:SS [LEVEL] message`` per entry; ``--clear`` empties the buffer."""

    def show(ctx: Ctx) -> None:
        if ctx.args.clear:
            reply = ctx.post(f"/{kind}/clear")
            ctx.out.answer(reply, "Console logs cleared" if kind == "console" else "Error logs cleared")
            return
        reply = ctx.get(f"/{kind}", {"limit": ctx.args.limit})
        if ctx.out.as_json:
            ctx.out.json(reply)
            return
        entries = reply.get(kind) or []
        if not entries:
            ctx.out.line("No console logs" if kind == "console" else "No errors")
        for e in entries:
            when = _clock(e.get("timestamp"))
            if kind == "console":
                ctx.out.line(f"{when} [{str(e.get('level', '')).upper()}] {e.get('message', '')}")
            else:
                ctx.out.line(f"{when} [ERROR] {e.get('message', '')}")
                if e.get("url"):
                    ctx.out.line(f"  at {e['url']}:{e.get('line', 0)}:{e.get('column', 0)}")

    return show


def _clock(stamp: Any) -> str:
    """``HH:MM:SS`` (local time) of an ISO timestamp or epoch milliseconds."""
    try:
        if isinstance(stamp, int | float):
            when = datetime.fromtimestamp(stamp / 1000 if stamp > 1e11 else stamp)
        else:
            when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).astimezone()
        return when.strftime("%H:%M:%S")
    except (ValueError, OverflowError, OSError):
        return "--:--:--"


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


def server_only(ctx: Ctx, method: str, path: str, body: dict[str, Any] | None = None, *, what: str = "") -> Any:
    """A call only ``pinchtab server`` answers (instances, profiles): a bridge's 404 said plainly."""
    try:
        return ctx.client.request(method, path, body=body).json()
    except ClientError as exc:
        if exc.status in (404, 405):
            need = f"; {what} needs `pinchtab server`" if what else ""
            raise ClientError(f"{ctx.client.base_url} has no {path}: it is a bridge (one browser); instances "
                              f"and profiles are served by `pinchtab server`{need}", status=exc.status,
                              code=exc.code) from None
        raise


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


class Verbs:
    """Adds verbs to the ``pinchtab`` subparsers, each with the global options and a runner."""

    def __init__(self, sub: Any) -> None:
        self.sub = sub
        self.common = argparse.ArgumentParser(add_help=False)
        add_global_options(self.common)

    def add(self, name: str, summary: str, fn: Verb, *, aliases: tuple[str, ...] = (), post: bool = False,
            post_text: bool = False, description: str | None = None) -> argparse.ArgumentParser:
        p = self.sub.add_parser(name, help=summary, aliases=list(aliases), parents=[self.common],
                                description=description or summary[0].upper() + summary[1:] + ".")
        if post or post_text:
            snap_options(p, text=post_text)
        p.set_defaults(run=runner(fn), command=name)
        return p


def _selector_arg(p: argparse.ArgumentParser, *, optional: bool = False) -> None:
    p.add_argument("selector", nargs="?" if optional else None,
                   help="a ref from snap (e5) or a selector (CSS, xpath:, text:, role:...)")


def _pointer_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--css", metavar="SEL", help="a CSS selector instead of a ref")
    p.add_argument("--x", type=float, help="x coordinate (CSS pixels)")
    p.add_argument("--y", type=float, help="y coordinate (CSS pixels)")
    p.add_argument("--humanize", action="store_true", help="a human-like mouse path")


def register(sub: Any) -> None:
    """Add the browser verbs to the ``pinchtab`` subparsers (:class:`app.clients.cli.Subcommands`)."""
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

    for name, help_ in (("click", "click an element"), ("dblclick", "double-click an element"),
                        ("hover", "move the mouse over an element")):
        p = v.add(name, help_, action(name, click_fields(name)), post=True, post_text=name == "click")
        _selector_arg(p, optional=True)
        _pointer_flags(p)
        if name == "click":
            p.add_argument("--wait-nav", action="store_true", help="the click loads a new page: wait for it")
            p.add_argument("--dismiss-banners", action="store_true", help="with --wait-nav: dismiss banners after")
            p.add_argument("--dialog-action", choices=("accept", "dismiss"), help="answer a dialog the click opens")
            p.add_argument("--dialog-text", metavar="TEXT", help="the prompt() answer, with --dialog-action accept")
            p.add_argument("--mode", choices=("dom", "dispatch"), help="deliver the click through the DOM")
    p = v.add("focus", "focus an element", action("focus", click_fields("focus")))
    _selector_arg(p, optional=True)
    p.add_argument("--css", metavar="SEL", help="a CSS selector instead of a ref")
    p = v.add("type", "type text into an element, key by key",
              action("type", lambda c: {**target(c.args.selector), "text": " ".join(c.args.text)}))
    _selector_arg(p)
    p.add_argument("text", nargs="+")
    p.add_argument("--humanize", action="store_true", help="human typing rhythm")
    p = v.add("fill", "set an input's value at once",
              action("fill", lambda c: {**target(c.args.selector), "text": " ".join(c.args.text)}), post_text=True)
    _selector_arg(p)
    p.add_argument("text", nargs="+")
    p = v.add("press", "press a key (Enter, Tab, Control+a)", action("press", press_fields), post_text=True,
              description="Press a key: `press <key>`, or `press <selector> <key>` to focus an element first.")
    p.add_argument("first", metavar="key")
    p.add_argument("second", nargs="?", metavar="key2", help=argparse.SUPPRESS)
    p = v.add("select", "choose an option of a <select>",
              action("select", lambda c: {**target(c.args.selector), "value": c.args.value}), post_text=True)
    _selector_arg(p)
    p.add_argument("value", help="the option's value or visible text")
    for name, help_ in (("check", "check a checkbox or radio"), ("uncheck", "uncheck a checkbox")):
        p = v.add(name, help_, action(name, lambda c: target(c.args.selector)))
        _selector_arg(p)
    p = v.add("scroll", "scroll the page (down, up, left, right, pixels) or an element into view",
              action("scroll", scroll_fields), post=True)
    p.add_argument("where", nargs="?", help="down|up|left|right|<pixels>|<selector> (default: down)")
    p.add_argument("--css", metavar="SEL", help="scroll this CSS selector into view")
    p = v.add("scrollintoview", "scroll an element into view", action("scrollintoview", click_fields("scrollintoview")))
    _selector_arg(p, optional=True)
    p.add_argument("--css", metavar="SEL", help="a CSS selector instead of a ref")
    p = v.add("drag", "drag an element by an offset, or from one point to another", drag)
    p.add_argument("source", metavar="from")
    p.add_argument("to", nargs="?")
    p.add_argument("--drag-x", type=int, help="horizontal offset in pixels")
    p.add_argument("--drag-y", type=int, help="vertical offset in pixels")
    p.add_argument("--button", choices=("left", "right", "middle"))
    p = v.add("mouse", "low-level mouse: move, down, up, wheel", mouse)
    p.add_argument("what", choices=("move", "down", "up", "wheel"))
    p.add_argument("rest", nargs="*", metavar="ARG", help="x y | selector | wheel delta")
    _pointer_flags(p)
    p.add_argument("--button", choices=("left", "right", "middle"))
    p.add_argument("--dx", type=int, help="wheel delta x")
    p.add_argument("--dy", type=int, help="wheel delta y")
    p = v.add("keyboard", "type at the focused element: keyboard type|inserttext <text>", keyboard)
    p.add_argument("how", choices=("type", "inserttext"))
    p.add_argument("text", nargs="+")
    for name in ("keydown", "keyup"):
        p = v.add(name, f"send one {name} event", action(name, lambda c: {"key": c.args.key}))
        p.add_argument("key")
    p = v.add("dialog", "accept or dismiss the open JavaScript dialog", dialog)
    p.add_argument("how", choices=("accept", "dismiss"))
    p.add_argument("text", nargs="*", help="the prompt() answer")

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

    p = v.add("screenshot", "save a screenshot (JPEG, or PNG)", screenshot, aliases=("ss",))
    p.add_argument("-o", "--output", metavar="FILE", help="where (- for stdout; default screenshot-<time>.jpg)")
    p.add_argument("-q", "--quality", type=int, metavar="N", help="JPEG quality 0-100 (default 80)")
    p.add_argument("-s", "--selector", metavar="SEL", help="only this element")
    p.add_argument("--scale", type=float, metavar="F", help="rescale the image (0.5 = half size)")
    p.add_argument("--annotate", action="store_true", help="numbered ref boxes on interactive elements, and a legend")
    p.add_argument("--format", choices=("jpeg", "png"))
    p.add_argument("--png", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--beyond-viewport", "--full-page", dest="beyond_viewport", action="store_true",
                   help="the whole document, not just the viewport")
    p = v.add("pdf", "save the page as PDF", pdf)
    p.add_argument("-o", "--output", metavar="FILE", help="where (- for stdout; default page-<time>.pdf)")
    p.add_argument("--landscape", action="store_true")
    for flag, _key in _PDF_OPTIONS:
        numeric = flag not in ("page_ranges", "header_template", "footer_template")
        p.add_argument("--" + flag.replace("_", "-"), type=float if numeric else str)
    for flag, _key in _PDF_SWITCHES[1:]:
        p.add_argument("--" + flag.replace("_", "-"), action="store_true")
    p.add_argument("--file-output", action="store_true", help="save on the server, in its state dir")
    p.add_argument("--path", help="with --file-output: the name in the server's state dir")

    for name, help_ in (("console", "print the page's console messages"),
                        ("errors", "print the page's uncaught JavaScript errors")):
        p = v.add(name, help_, logs(name))
        p.add_argument("--limit", type=int, metavar="N", help="only the last N")
        p.add_argument("--clear", action="store_true", help="empty the buffer")

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
