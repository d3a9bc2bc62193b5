"""The rest of the browser verbs: network, route, cookies, storage, state, clipboard, cache, record,
set (emulation), frame, annotate, capture, download, upload, instance, activity, compare,
session (audit is :mod:`app.clients.cli_audit`'s, scrape :mod:`app.clients.cli_scrape`'s).
Each is a thin client of one REST route (reference §1.11-§1.19, §7); most print the server's JSON,
as the original does, and a few a terse line.
"""
from __future__ import annotations

import argparse
import base64
import json
import os
import sys
from pathlib import Path
from typing import Any

from .cli_output import table
from .cli_verbs import Ctx, UsageError, Verb, Verbs, normalize_url, save

__all__ = ["register"]


def _json_arg(raw: str, what: str) -> Any:
    try:
        return json.loads(raw)
    except ValueError:
        raise UsageError(f"{what} must be JSON: {raw!r}") from None


def _words(ctx: Ctx, usage: str, minimum: int = 1) -> list[str]:
    words = list(ctx.args.words)
    if len(words) < minimum:
        raise UsageError(usage)
    return words


# --------------------------------------------------------------------------
# Network


def network(ctx: Ctx) -> None:
    """``network`` lists requests, ``network <id>`` shows one, ``--clear`` empties the log;
    ``network route|unroute ...`` intercept (as the top-level ``route``/``unroute``)."""
    a = ctx.args
    words = list(a.words)
    if words and words[0] in ("route", "unroute"):
        (route_add if words[0] == "route" else route_remove)(ctx, words[1:])
        return
    if a.clear:
        ctx.out.json(ctx.client.post("/network/clear", params={"tabId": ctx.tab()}))
        return
    if words:
        ctx.out.json(ctx.get(f"/network/{words[0]}", {"body": True if a.body else None}))
        return
    reply = ctx.get("/network", {"filter": a.filter, "method": a.method, "status": a.status, "type": a.type,
                                 "limit": a.limit, "bufferSize": a.buffer_size})
    if ctx.out.as_json:
        ctx.out.json(reply)
        return
    rows = reply.get("entries") or reply.get("items") or []
    ctx.out.line(table(rows, ("requestId", "method", "status", "resourceType", "url")))


def _route_body(ctx: Ctx, pattern: str) -> dict[str, Any]:
    a = ctx.args
    if a.abort and a.body is not None:
        raise UsageError("pinchtab route <pattern> --abort  or  --body JSON (not both)")
    body: dict[str, Any] = {"pattern": pattern, "action": "abort" if a.abort else
                            "fulfill" if a.body is not None else "continue"}
    if a.body is not None:
        body["body"] = a.body
        body["contentType"] = a.content_type or "application/json"
        if a.status and str(a.status).isdigit():
            body["status"] = int(a.status)
    if a.resource_type:
        body["resourceType"] = a.resource_type
    if a.method:
        body["method"] = a.method
    return body


def route_add(ctx: Ctx, words: list[str]) -> None:
    """``route <pattern> ...`` adds a rule; plain ``route`` lists the tab's rules."""
    if not words:
        ctx.out.json(ctx.get("/network/route"))
        return
    if len(words) != 1:
        raise UsageError("pinchtab route <pattern> [--abort | --body JSON] [--resource-type T] [--method M]")
    ctx.out.json(ctx.post("/network/route", _route_body(ctx, words[0])))


def route_remove(ctx: Ctx, words: list[str]) -> None:
    ctx.out.json(ctx.raw("DELETE", "/network/route", params={"pattern": words[0] if words else None}).json())


def route(ctx: Ctx) -> None:
    route_add(ctx, list(ctx.args.words))


def unroute(ctx: Ctx) -> None:
    route_remove(ctx, list(ctx.args.words))


def _route_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--abort", action="store_true", help="block matching requests")
    p.add_argument("--body", help="answer matching requests with this body")
    p.add_argument("--content-type", help="with --body (default application/json)")
    p.add_argument("--status", type=int, help="with --body: the status code (default 200)")
    p.add_argument("--resource-type", help="only this resource type (script, image, xhr, fetch...)")
    p.add_argument("--method", help="only this HTTP method")


# --------------------------------------------------------------------------
# Cookies, storage, saved state, clipboard, cache


def cookies(ctx: Ctx) -> None:
    """``cookies`` (GET, JSON) or ``cookies clear`` (all of the browser's)."""
    words = list(ctx.args.words)
    if words and words[0] == "clear":
        ctx.out.json(ctx.raw("DELETE", "/cookies").json())
    elif words:
        raise UsageError("pinchtab cookies [clear]")
    else:
        ctx.out.json(ctx.get("/cookies", {"url": ctx.args.url, "name": ctx.args.name}))


def _flag_or_word(ctx: Ctx, flag: str, rest: list[str], usage: str) -> tuple[str | None, list[str]]:
    """The value of ``--<flag>`` (the original's form), else the first word after the subcommand
    (ours); the words left. Both at once is ambiguous, so a usage error."""
    value = ctx.opt(flag)
    if value is None:
        return (rest[0], rest[1:]) if rest else (None, rest)
    if rest:
        raise UsageError(usage)
    return value, rest


_STORAGE_USAGE = ("pinchtab storage get [--key K] | set <key> <value> | delete [--key K] | clear [--all] "
                  "[--type local|session]")


def storage(ctx: Ctx) -> None:
    """``storage get [key]``, ``storage set <key> <value>``, ``storage delete [key]``, ``storage clear``;
    the key also as ``--key K``; ``--all`` is both storages."""
    words = _words(ctx, _STORAGE_USAGE)
    what, rest = words[0], words[1:]
    kind = "all" if ctx.args.all else ctx.args.type
    if what == "set" and len(rest) == 2 and ctx.args.key is None:
        ctx.out.json(ctx.post("/storage", {"key": rest[0], "value": rest[1], "type": kind or "local"}))
        return
    if what not in ("get", "delete", "clear"):
        raise UsageError(_STORAGE_USAGE)
    key, rest = _flag_or_word(ctx, "key", rest, _STORAGE_USAGE)
    if rest or (what == "clear" and key is not None):
        raise UsageError(_STORAGE_USAGE)
    if what == "get":
        ctx.out.json(ctx.get("/storage", {"type": kind if kind != "all" else None, "key": key}))
    elif what == "delete":
        # One key lives in one storage: local, as `set` writes it, unless --type says session;
        # without a key, delete empties that storage (as the original's).
        body: dict[str, Any] = {"type": kind or "local", **({"key": key} if key is not None else {})}
        ctx.out.json(ctx.raw("DELETE", "/storage", body=body).json())
    else:
        ctx.out.json(ctx.raw("DELETE", "/storage", body={"type": kind or "all"}).json())


_STATE_USAGE = ("pinchtab state list | save [--name N] [--encrypt] | load --name N | show --name N | "
                "delete --name N | clean [--older-than H]  (the name may also follow the subcommand)")


def state(ctx: Ctx) -> None:
    """Saved browser state: ``list``, ``save [name]``, ``load <name>``, ``show <name>``, ``delete <name>``,
    ``clean [--older-than-hours N]``; the name also as ``--name N``. ``load`` takes a name's prefix
    too (the newest match wins)."""
    words = _words(ctx, _STATE_USAGE)
    what = words[0]
    name, rest = _flag_or_word(ctx, "name", words[1:], _STATE_USAGE)
    tab_id = ctx.tab()
    on_tab = {"tabId": tab_id} if tab_id else {}
    if rest or (name is None and what in ("load", "show", "delete")) or (name is not None and what in (
            "list", "clean")):
        raise UsageError(_STATE_USAGE)
    if what == "list":
        ctx.out.json(ctx.client.get("/state/list"))
    elif what == "save":
        body: dict[str, Any] = {**on_tab, **({"name": name} if name else {})}
        if ctx.args.encrypt:
            body["encrypt"] = True
        ctx.out.json(ctx.client.post("/state/save", body))
    elif what == "load":
        ctx.out.json(ctx.client.post("/state/load", {"name": name, **on_tab}))
    elif what == "show":
        ctx.out.json(ctx.client.get("/state/show", {"name": name}))
    elif what == "delete":
        ctx.out.json(ctx.client.request("DELETE", "/state", params={"name": name}).json())
    elif what == "clean":
        ctx.out.json(ctx.client.post("/state/clean", {"olderThanHours": ctx.args.older_than_hours}))
    else:
        raise UsageError(_STATE_USAGE)


def clipboard(ctx: Ctx) -> None:
    """The server's shared clipboard: ``read``/``paste`` print the text, ``write``/``copy <text>`` say
    ``Clipboard updated`` (the original's confirmation)."""
    words = _words(ctx, "pinchtab clipboard read | write <text> | copy <text> | paste")
    what, rest = words[0], words[1:]
    if what in ("read", "paste") and not rest:
        reply = ctx.client.get(f"/clipboard/{what}")
        ctx.out.answer(reply, reply.get("text", ""))
    elif what in ("write", "copy") and rest:
        ctx.out.answer(ctx.client.post(f"/clipboard/{what}", {"text": " ".join(rest)}), "Clipboard updated")
    else:
        raise UsageError("pinchtab clipboard read | write <text> | copy <text> | paste")


def cache(ctx: Ctx) -> None:
    """``cache clear`` prints OK; ``cache status`` ``can-clear`` or ``cache-empty`` (the JSON with --json)."""
    what = _words(ctx, "pinchtab cache clear|status")[0]
    if what == "clear":
        ctx.out.answer(ctx.client.post("/cache/clear"), "OK")
    elif what == "status":
        reply = ctx.client.get("/cache/status")
        ctx.out.answer(reply, "can-clear" if reply.get("canClear") else "cache-empty")
    else:
        raise UsageError("pinchtab cache clear|status")


def record(ctx: Ctx) -> None:
    """``record start <file> [--fps --quality --scale]``, ``record stop``, ``record status``."""
    words = _words(ctx, "pinchtab record start <file> | stop | status")
    what, rest = words[0], words[1:]
    tab_id = ctx.tab()
    if what == "start":
        body: dict[str, Any] = {"fps": ctx.args.fps, "quality": ctx.args.quality, "scale": ctx.args.scale}
        if rest:
            body["file"] = rest[0]
        if tab_id:
            body["tabId"] = tab_id
        ctx.out.json(ctx.client.post("/record/start", body))
    elif what == "stop":
        ctx.out.json(ctx.client.post("/record/stop", {"tabId": tab_id} if tab_id else {}))
    elif what == "status":
        ctx.out.json(ctx.client.get("/record/status", {"tabId": tab_id}))
    else:
        raise UsageError("pinchtab record start <file> | stop | status")


# --------------------------------------------------------------------------
# Emulation


_SET_USAGE = ("pinchtab set viewport <w> <h> [--scale F] [--mobile] | geo <lat> <lon> [accuracy] | "
              "offline on|off | headers <json> | credentials <user> <pass> | credentials clear | "
              "media <feature> <value>")


def emulation(ctx: Ctx) -> None:
    """``set viewport|geo|offline|headers|credentials|media ...``: POST /emulation/*."""
    words = _words(ctx, _SET_USAGE, 2)
    what, rest = words[0], words[1:]
    try:
        if what == "viewport" and len(rest) == 2:
            path, body = "/emulation/viewport", {"width": int(rest[0]), "height": int(rest[1])}
            if ctx.args.scale:
                body["deviceScaleFactor"] = ctx.args.scale
            if ctx.args.mobile:
                body["mobile"] = True
        elif what in ("geo", "geolocation") and len(rest) in (2, 3):
            path, body = "/emulation/geolocation", {"latitude": float(rest[0]), "longitude": float(rest[1])}
            if len(rest) == 3:
                body["accuracy"] = float(rest[2])
        elif what == "offline" and len(rest) == 1 and rest[0] in ("on", "off", "true", "false"):
            path, body = "/emulation/offline", {"offline": rest[0] in ("on", "true")}
        elif what == "headers" and len(rest) == 1:
            path, body = "/emulation/headers", {"headers": _json_arg(rest[0], "headers")}
        elif what == "credentials" and rest == ["clear"]:
            path, body = "/emulation/credentials", {"username": "", "password": ""}
        elif what == "credentials" and len(rest) == 2:
            path, body = "/emulation/credentials", {"username": rest[0], "password": rest[1]}
        elif what == "media" and len(rest) == 2:
            path, body = "/emulation/media", {"feature": rest[0], "value": rest[1]}
        else:
            raise UsageError(_SET_USAGE)
    except ValueError:
        raise UsageError(_SET_USAGE) from None
    ctx.out.json(ctx.post(path, body))


# --------------------------------------------------------------------------
# Frames, annotate, capture, download, upload


def frame(ctx: Ctx) -> None:
    """``frame`` shows the frame scope; ``frame <target|main>`` sets it."""
    words = list(ctx.args.words)
    if words:
        ctx.out.json(ctx.post("/frame", {"target": words[0]}))
    else:
        ctx.out.json(ctx.get("/frame"))


def annotate(ctx: Ctx) -> None:
    """GET /annotate: a clickable overlay of the page's refs (``--clear`` removes it)."""
    reply = ctx.get("/annotate", {"selector": ctx.args.selector, "clear": True if ctx.args.clear else None})
    if ctx.out.as_json:
        ctx.out.json(reply)
    elif reply.get("cleared"):
        ctx.out.line("Annotations cleared")
    else:
        ctx.out.line(f"Annotated {reply.get('annotated', 0)} elements")


def capture(ctx: Ctx) -> None:
    """GET /capture (inline): the image into a file, then a one-line summary (``--json`` the envelope)."""
    a = ctx.args
    fmt = a.format or "jpeg"
    reply = ctx.get("/capture", {"output": "inline", "selector": a.selector, "filter": a.filter, "format": fmt,
                                 "quality": a.quality, "depth": a.depth, "wait": a.wait, "scale": a.scale,
                                 "withBounds": a.with_bounds, "beyondViewport": True if a.beyond_viewport else None,
                                 "requirePair": True if a.require_pair else None})
    image = reply.get("image") or {}
    path = a.output or f"capture-{reply.get('capturedAt', 'now')}.{'png' if fmt == 'png' else 'jpg'}".replace(":", "")
    data = base64.b64decode(image.get("base64", "")) if image.get("base64") else b""
    if data:
        from ..web.files import write_atomic

        write_atomic(Path(path), data, mode=0o644, what=path)
        image.pop("base64", None)
        image["path"] = path
    if ctx.out.as_json:
        ctx.out.json(reply)
        return
    snap = reply.get("snapshot") or {}
    ctx.out.line(f"Saved {path} ({len(data)} bytes); {snap.get('nodeCount', len(snap.get('nodes') or []))} nodes; "
                 f"epoch {((reply.get('epoch') or {}).get('domEpoch') or '')}")


def download(ctx: Ctx) -> None:
    """GET /download: into ``-o FILE`` (``Saved ...``), else the server's JSON."""
    url = normalize_url(ctx.args.url)
    if ctx.args.output:
        save(ctx, ctx.args.output, ctx.raw("GET", "/download", params={"url": url, "raw": True}).body)
    else:
        ctx.out.json(ctx.get("/download", {"url": url}))


def upload(ctx: Ctx) -> None:
    """POST /upload: local files, sent as base64, set on a file input (``-s`` picks it)."""
    files = []
    for name in ctx.args.files:
        data = Path(name).read_bytes()
        files.append(f"data:application/octet-stream;name={Path(name).name};base64,"
                     + base64.b64encode(data).decode())
    body: dict[str, Any] = {"files": files}
    if ctx.args.selector:
        body["selector"] = ctx.args.selector
    ctx.out.json(ctx.post("/upload", body))


# --------------------------------------------------------------------------
# Server mode, site tools, sessions


def instance(ctx: Ctx) -> None:
    """``instance start [--profile --mode --port]``, ``instance navigate <id> <url>``,
    ``instance stop|restart|logs <id>``."""
    words = _words(ctx, "pinchtab instance start | navigate <id> <url> | stop <id> | restart <id> | logs <id>")
    what, rest, a = words[0], words[1:], ctx.args
    c = ctx.client
    if what in ("start", "launch"):
        body = {k: v for k, v in (("profileId", a.profile), ("mode", a.mode), ("port", a.port)) if v}
        if a.browser:
            body["browser"] = a.browser
        if a.allow_domain:
            body["securityPolicy"] = {"allowedDomains": list(a.allow_domain)}
        ctx.out.json(c.post("/instances/start", body))
    elif what == "navigate" and len(rest) == 2:
        ctx.out.json(c.post(f"/instances/{rest[0]}/tabs/open", {"url": normalize_url(rest[1])}))
    elif what in ("stop", "restart") and len(rest) == 1:
        ctx.out.json(c.post(f"/instances/{rest[0]}/{what}"))
    elif what == "logs" and len(rest) == 1:
        ctx.out.line(c.request("GET", f"/instances/{rest[0]}/logs").text)
    else:
        raise UsageError("pinchtab instance start | navigate <id> <url> | stop <id> | restart <id> | logs <id>")


def activity(ctx: Ctx) -> None:
    """GET /api/activity (``activity tab <id>`` for one tab's), as JSON: what scripts read."""
    words = list(ctx.args.words)
    params: dict[str, Any] = {"limit": ctx.args.limit, "ageSec": ctx.args.age_sec or None,
                              "agentId": ctx.opt("agent_filter")}
    if words[:1] == ["tab"] and len(words) == 2:
        params["tabId"] = words[1]
    elif words:
        raise UsageError("pinchtab activity [tab <id>] [--limit N] [--age-sec N]")
    ctx.out.json(ctx.client.get("/api/activity", params))


def compare(ctx: Ctx) -> None:
    """Audit two URLs (live and staging) and print the two reports side by side, as JSON."""
    live = ctx.client.post("/audit/page", {"url": normalize_url(ctx.args.live)})
    staging = ctx.client.post("/audit/page", {"url": normalize_url(ctx.args.staging)})
    ctx.out.json({"live": live, "staging": staging})


def session(ctx: Ctx) -> int | None:
    """Agent sessions, as the original's verbs: ``session create --agent-id A [--label L]`` prints the
    token (``--json``: the whole answer), ``session info`` the session of ``$PINCHTAB_SESSION``
    (``GET /sessions/me``; ``info <id>`` any session, ours), ``session list``, ``session revoke <id>``."""
    words = _words(ctx, "pinchtab session info [id] | list | create --agent-id A | revoke <id>")
    what, rest = words[0], words[1:]
    c = ctx.client
    if what == "info" and rest:
        ctx.out.json(c.get(f"/sessions/{rest[0]}"))
    elif what == "info":
        if not os.environ.get("PINCHTAB_SESSION", "").strip():
            print("Error: no session set\n   create one: export PINCHTAB_SESSION=$(pinchtab session create "
                  "--agent-id <id>)", file=sys.stderr)
            return 1
        ctx.out.json(c.get("/sessions/me"))
    elif what == "list":
        ctx.out.json(c.get("/sessions"))
    elif what == "create":
        if not ctx.opt("agent_id"):
            raise UsageError("pinchtab session create --agent-id <id> [--label L] [--json]")
        body: dict[str, Any] = {"agentId": ctx.opt("agent_id")}
        if ctx.args.label:
            body["label"] = ctx.args.label
        reply = c.post("/sessions", body)
        if ctx.out.as_json:
            ctx.out.json(reply)
            return None
        if reply.get("status") != "active":
            print(f"Error: session is {reply.get('status')}", file=sys.stderr)
            return 1
        # Just the token, for `export PINCHTAB_SESSION=$(pinchtab session create --agent-id A)`.
        ctx.out.value(reply.get("sessionToken") or reply.get("token", ""))
    elif what == "revoke" and len(rest) == 1:
        ctx.out.json(c.post(f"/sessions/{rest[0]}/revoke"))
    else:
        raise UsageError("pinchtab session info [id] | list | create --agent-id A | revoke <id>")
    return None


def _words_verb(v: Verbs, name: str, summary: str, fn: Verb, choices: tuple[str, ...] = (), *,
                required: bool = True) -> argparse.ArgumentParser:
    """A verb whose first word picks what it does (``storage get``); ``choices`` feed completion."""
    p = v.add(name, summary, fn)
    p.add_argument("words", nargs="+" if choices and required else "*", metavar="|".join(choices) or "ARG")
    p.set_defaults(word_choices=choices)
    return p


def register(sub: Any) -> None:
    """Add these verbs, up to ``activity``, to the ``pinchtab`` subparsers (after
    :func:`app.clients.cli_tabs.register`; audit, compare, scrape and session follow)."""
    v = Verbs(sub)
    p = _words_verb(v, "network", "list or inspect network requests; network route|unroute", network,
                    ("route", "unroute"), required=False)
    p.add_argument("--filter", help="URL substring")
    p.add_argument("--method")
    p.add_argument("--status", help="status or class (4xx, 5xx, 200)")
    p.add_argument("--type", help="resource type (xhr, fetch, document...)")
    p.add_argument("--limit", type=int)
    p.add_argument("--body", nargs="?", const=True, default=None,
                   help="with a request id: include the response body; with route: the fulfil body")
    p.add_argument("--clear", action="store_true", help="empty the network log")
    p.add_argument("--buffer-size", type=int)
    p.add_argument("--abort", action="store_true", help="route: block matching requests")
    p.add_argument("--content-type")
    p.add_argument("--resource-type")
    p = _words_verb(v, "route", "intercept requests matching a pattern (abort, or answer with --body)", route)
    _route_flags(p)
    _words_verb(v, "unroute", "remove an interception (no pattern: all)", unroute)

    p = _words_verb(v, "cookies", "print the tab's cookies (JSON); cookies clear", cookies, ("clear",),
                    required=False)
    p.add_argument("--url", help="cookies for this URL (default: the tab's)")
    p.add_argument("--name", help="only this cookie")
    p = _words_verb(v, "storage", "the page's local/session storage: get|set|delete|clear", storage,
                    ("get", "set", "delete", "clear"))
    p.add_argument("--type", choices=("local", "session"))
    p.add_argument("--key", metavar="K", help="get|delete: this key (or give it after the subcommand)")
    p.add_argument("--all", action="store_true", help="delete|clear: both local and session storage")
    p = _words_verb(v, "state", "saved browser state: list|save|load|show|delete|clean", state,
                    ("list", "save", "load", "show", "delete", "clean"))
    p.add_argument("--name", metavar="N", help="save|load|show|delete: the state's name (load: or its prefix); "
                                               "or give it after the subcommand")
    p.add_argument("--encrypt", action="store_true", help="save: encrypt with the configured state key")
    p.add_argument("--older-than-hours", "--older-than", dest="older_than_hours", type=float, default=24,
                   metavar="H", help="clean: files older than this (default 24)")
    _words_verb(v, "clipboard", "the shared clipboard: read|write|copy|paste", clipboard,
                ("read", "write", "copy", "paste"))
    _words_verb(v, "cache", "the browser cache: clear|status", cache, ("clear", "status"))
    p = _words_verb(v, "record", "record the tab to a video: start|stop|status", record, ("start", "stop", "status"))
    p.add_argument("--fps", type=int, default=5)
    p.add_argument("--quality", type=int, default=80)
    p.add_argument("--scale", type=float, default=1.0)
    p = _words_verb(v, "set", "emulate: viewport|geo|offline|headers|credentials|media", emulation,
                    ("viewport", "geo", "offline", "headers", "credentials", "media"))
    p.add_argument("--scale", type=float, help="viewport: device scale factor")
    p.add_argument("--mobile", action="store_true", help="viewport: a mobile device")

    _words_verb(v, "frame", "show or set the frame that selectors resolve in (frame <target|main>)", frame, ("main",),
                required=False)
    p = v.add("annotate", "draw a clickable overlay of refs on the page (--clear removes it)", annotate)
    p.add_argument("-s", "--selector")
    p.add_argument("--clear", action="store_true")
    p = v.add("capture", "a screenshot and a snapshot from the same moment", capture, aliases=("cap",))
    p.add_argument("-o", "--output", metavar="FILE")
    p.add_argument("-s", "--selector")
    p.add_argument("--filter", choices=("interactive", "all"))
    p.add_argument("--format", choices=("jpeg", "png"))
    p.add_argument("-q", "--quality", type=int)
    p.add_argument("--depth", type=int)
    p.add_argument("--wait", choices=("stable", "load", "none"))
    p.add_argument("--with-bounds", action=argparse.BooleanOptionalAction, default=None,
                   help="a bounding box per node (default on)")
    p.add_argument("--beyond-viewport", action="store_true")
    p.add_argument("--scale", type=float)
    p.add_argument("--require-pair", action="store_true")
    p = v.add("download", "fetch a URL in the browser session (needs security.allowDownload)", download)
    p.add_argument("url")
    p.add_argument("-o", "--output", metavar="FILE")
    p = v.add("upload", "set local files on a file input (needs security.allowUpload)", upload)
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("-s", "--selector", help="the file input (default input[type=file])")

    p = _words_verb(v, "instance", "one instance: start|navigate|stop|restart|logs (server mode)", instance,
                    ("start", "navigate", "stop", "restart", "logs"))
    p.add_argument("--profile")
    p.add_argument("--mode", choices=("headless", "headed"))
    p.add_argument("--port", type=int)
    p.add_argument("--browser")
    p.add_argument("--allow-domain", action="append", default=[])
    p = _words_verb(v, "activity", "recent API activity (server mode); activity tab <id>", activity)
    p.add_argument("--limit", type=int, default=200)
    p.add_argument("--age-sec", type=int, default=0)


def register_compare(sub: Any) -> None:
    """Add ``compare`` (after :func:`app.clients.cli_audit.register`)."""
    p = Verbs(sub).add("compare", "audit a live and a staging URL side by side", compare)
    p.add_argument("live")
    p.add_argument("staging")


def register_session(sub: Any) -> None:
    """Add ``session`` (after :func:`app.clients.cli_scrape.register`)."""
    p = _words_verb(Verbs(sub), "session", "agent sessions: info|list|create|revoke", session,
                    ("info", "list", "create", "revoke"))
    p.add_argument("--label", help="create: a label")
    p.add_argument("--print-token", action="store_true",
                   help="create: print only the token (the default without --json; kept for older scripts)")


