"""What ``pinchtab debug connect`` and ``attach`` say and understand, as pure functions.

The agent's side of a debug session, without its I/O: :func:`json_line` turns a protocol message
into the line the original ``debug-bridge connect --json`` prints (plus the lines it lacks: DOM
mutation batches, agents' connection events, drops, and an error for a command no app received);
:func:`render` shows such a line to a person; :func:`parse_input` turns a line typed on stdin (a
JSON command object, or one of the REPL's words) into a command for the app or a :class:`Local`
answer; :func:`find` searches the cached UI tree. ``app/clients/debug_cli.py`` does the reading and writing.
"""
from __future__ import annotations

import base64
import binascii
import json
import os
import shlex
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..debug import protocol

# Each word of the REPL and its aliases, as the original's help lists them.
ALIASES = {"tree": "ui", "search": "find", "js": "eval", "dom": "snapshot", "ss": "screenshot",
           "go": "navigate", "goto": "navigate", "?": "help", "cls": "clear"}
USAGE = {
    "ui": "ui", "find": "find <query>", "click": "click <id>", "type": "type <id> <text>",
    "eval": "eval <code>", "snapshot": "snapshot", "screenshot": "screenshot", "state": "state [scope]",
    "navigate": "navigate <url>", "focus": "focus <id>", "scroll": "scroll <x> <y>", "clear": "clear",
    "help": "help",
}
HELP = """Commands:
  ui                 request the UI tree (interactive elements)            alias: tree
  find <query>       search the last UI tree here (text, label, role, id)  alias: search
  click <id>         click an element by its stableId ("quoted" = by text)
  type <id> <text>   type text into an element
  eval <code>        run JavaScript in the page (if the app enabled eval)  alias: js
  snapshot           the page's HTML                                       alias: dom
  screenshot         save a PNG of the page in this directory              alias: ss
  state [scope]      the app's state (cookies, localStorage, ... or one scope)
  navigate <url>     load a URL                                            aliases: go, goto
  focus <id>         focus an element
  scroll <x> <y>     scroll the page to x, y
  clear              clear the screen
  help               this list                                             alias: ?
A line that is a JSON object is sent as a command as it is (the envelope and requestId filled in)."""

NO_APP = "no app is connected"


@dataclass(frozen=True)
class Local:
    """A line answered here without the app: ``action`` (find, help, clear, usage, unknown) and the
    line to show for it (None: nothing to show, as for an unknown word in JSON mode)."""

    action: str
    line: dict[str, Any] | None = None


@dataclass
class Cache:
    """What the console remembers between lines: the last UI tree, and the last request id it made."""

    items: list[dict[str, Any]] = field(default_factory=list)
    _last_ms: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def remember(self, msg: dict[str, Any]) -> None:
        """Keep a ui_tree's items for ``find`` (called with every message from the app)."""
        if msg.get("type") == "ui_tree" and isinstance(msg.get("items"), list):
            self.items = msg["items"]

    def request_id(self) -> str:
        """``cmd-<ms>`` as the original makes them, unique: two in one millisecond take the next one."""
        with self._lock:
            self._last_ms = max(int(time.time() * 1000), self._last_ms + 1)
            return f"cmd-{self._last_ms}"


# --- stdin -> commands

def complete(cmd: dict[str, Any], session_id: str, cache: Cache) -> dict[str, Any]:
    """A command object with the envelope and ``requestId`` filled in where missing (given ones win)."""
    out = {"protocolVersion": protocol.PROTOCOL_VERSION, "sessionId": session_id,
           "timestamp": int(time.time() * 1000)}
    out.update(cmd)
    if not out.get("requestId"):
        out["requestId"] = cache.request_id()
    return out


def parse_input(line: str, session_id: str, cache: Cache) -> dict[str, Any] | Local | None:
    """One line of stdin: a command to send (a dict), a :class:`Local` answer, or None (blank).

    A JSON object is a command as it is (the hub checks it against its schema and answers a bad
    one with ``INVALID_COMMAND``); anything else is read as a REPL word and its arguments.
    """
    text = line.strip()
    if not text:
        return None
    if text.startswith("{"):
        try:
            obj = json.loads(text)
        except ValueError:
            obj = None
        if isinstance(obj, dict):
            return complete(obj, session_id, cache)
    word, _, rest = text.partition(" ")
    word = ALIASES.get(word.lower(), word.lower())
    rest = rest.strip()
    cmd = _word(word, rest, cache)
    if cmd is None or isinstance(cmd, Local):
        return cmd
    return complete(cmd, session_id, cache)


def _usage(word: str, why: str = "") -> Local:
    message = f"usage: {USAGE[word]}" + (f" ({why})" if why else "")
    return Local("usage", {"event": "error", "error": message})


def _word(word: str, rest: str, cache: Cache) -> dict[str, Any] | Local | None:
    if word == "help":
        return Local("help", {"event": "info", "message": HELP})
    if word == "clear":
        return Local("clear")
    if word == "find":
        if not rest:
            return _usage(word)
        matches = find(cache.items, rest)
        return Local("find", {"event": "find_results", "query": rest, "count": len(matches), "items": matches})
    if word == "ui":
        return {"type": "request_ui_tree"}
    if word == "snapshot":
        return {"type": "request_dom_snapshot"}
    if word == "screenshot":
        return {"type": "request_screenshot"}
    if word == "state":
        return {"type": "request_state", **({"scope": rest.split()[0]} if rest else {})}
    if word == "eval":
        return {"type": "evaluate", "code": rest} if rest else _usage(word)
    if word == "navigate":
        return {"type": "navigate", "url": rest.split()[0]} if rest else _usage(word)
    if word in ("click", "focus"):
        target, extra = _split_target(rest)
        if target is None or extra:
            return _usage(word)
        return {"type": word, "target": target}
    if word == "type":
        target, extra = _split_target(rest)
        if target is None or not extra:
            return _usage(word)
        return {"type": "type", "target": target, "text": _unquote(extra)}
    if word == "scroll":
        parts = rest.split()
        try:
            x, y = (_number(p) for p in parts)
        except ValueError:
            return _usage(word, "two numbers")
        return {"type": "scroll", "x": x, "y": y}
    return Local("unknown", {"event": "error", "error": f"unknown command {word!r}; type help for the list"})


def _split_target(rest: str) -> tuple[dict[str, str] | None, str]:
    """The element an ``<id>`` names and what follows it: a stableId, or "quoted text" to match."""
    if not rest:
        return None, ""
    if rest[0] in "\"'":
        end = rest.find(rest[0], 1)
        if end > 1:
            return {"text": rest[1:end]}, rest[end + 1:].strip()
        return None, ""
    ident, _, extra = rest.partition(" ")
    return {"stableId": ident}, extra.strip()


def _unquote(text: str) -> str:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        try:
            parts = shlex.split(text)
        except ValueError:
            return text
        return parts[0] if len(parts) == 1 else text
    return text


def _number(text: str) -> int | float:
    value = float(text)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(text)
    return int(value) if value.is_integer() else value


def find(items: list[dict[str, Any]], query: str) -> list[dict[str, Any]]:
    """The UI tree's items where every word of ``query`` appears (any case) in the item's text,
    label, role, stableId, selector, placeholder or name."""
    words = query.lower().split()
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        meta = item.get("meta") if isinstance(item.get("meta"), dict) else {}
        hay = " ".join(str(v) for v in (item.get("text"), item.get("label"), item.get("role"), item.get("stableId"),
                                         item.get("selector"), meta.get("placeholder"), meta.get("name")) if v)
        hay = hay.lower()
        if words and all(w in hay for w in words):
            out.append(item)
    return out


# --- messages -> lines

def dumps(obj: dict[str, Any]) -> str:
    """One JSON line as JSON.stringify writes it: compact, characters as they are."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def server_started(url: str, session_id: str) -> dict[str, Any]:
    return {"event": "server_started", "url": url, "session": session_id}


def command_sent(cmd: dict[str, Any]) -> dict[str, Any]:
    return _pick({"event": "command_sent"}, cmd, "requestId", "type")


def dropped(count: int, total: int | None = None) -> dict[str, Any]:
    """Ours: the printer fell behind and the oldest ``count`` messages went."""
    line: dict[str, Any] = {"event": "dropped", "count": count}
    if total is not None:
        line["total"] = total
    return line


# The telemetry line of each type: the message's fields the original prints (in its order).
_TELEMETRY_FIELDS: dict[str, tuple[str, ...]] = {
    "console": ("level", "args"),
    "error": ("message", "stack"),
    "state_update": ("scope", "state"),
    "capabilities": ("capabilities",),
    "network_request": ("requestId", "method", "url", "initiator"),
    "navigation": ("url", "previousUrl", "trigger"),
    "dom_mutations": ("batchId", "mutations"),
}


def json_line(msg: dict[str, Any], screenshot_dir: str = ".") -> dict[str, Any] | None:
    """The ``--json`` line for one message an agent received, or None when it prints none.

    A screenshot's PNG is written to ``screenshot_dir`` (the line names the file). Fields the
    message lacks are left out, as JSON.stringify leaves out undefined ones.
    """
    kind = msg.get("type")
    if kind == "hello":
        return _pick({"event": "app_connected"}, msg, "appName", "appVersion", "url")
    if kind == "connection_event":
        event = msg.get("event")
        if event == "app_disconnected":
            return {"event": "app_disconnected"}
        if event in ("agent_connected", "agent_disconnected"):
            return _pick({"event": event}, msg, "agentId", "connectedAgents")
        return None   # app_connected: the app's hello, right after, says it with its name
    if kind == "command_result":
        if msg.get("noApp"):
            return {"event": "error", "requestId": msg.get("requestId"), "type": msg.get("requestType"),
                    "error": NO_APP}
        return _pick({"event": "command_result"}, msg, "requestId", "success", "duration", "result", "error")
    if kind == "dropped":
        return dropped(msg.get("count", 0), msg.get("total"))
    line: dict[str, Any] = {"event": "telemetry", "type": kind}
    if kind in _TELEMETRY_FIELDS:
        return _pick(line, msg, *_TELEMETRY_FIELDS[kind])
    if kind == "ui_tree":
        items = msg.get("items") if isinstance(msg.get("items"), list) else []
        return {**line, "itemCount": len(items), "items": items}
    if kind == "dom_snapshot":
        return {**line, "length": _js_length(msg.get("html"))}
    if kind == "network_response":
        line = _pick(line, msg, "requestId", "status", "statusText", "duration", "ok")
        return {**line, "bodyLength": _js_length(msg.get("body"))}
    if kind == "screenshot":
        line = _pick(line, msg, "width", "height")
        return {**line, "file": save_screenshot(msg.get("data"), screenshot_dir)}
    return None


def _pick(line: dict[str, Any], msg: dict[str, Any], *names: str) -> dict[str, Any]:
    for name in names:
        if name in msg:
            line[name] = msg[name]
    return line


def _js_length(text: Any) -> int:
    """A string's length as JavaScript counts it (UTF-16 code units), which the original prints."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2 if isinstance(text, str) else 0


def save_screenshot(data: Any, directory: str) -> str | None:
    """Write a screenshot's base64 PNG as ``screenshot-<ms>.png`` in ``directory``; its path, or None
    when there was no readable image."""
    if not isinstance(data, str) or not data:
        return None
    if data.startswith("data:"):
        data = data.partition(",")[2]
    try:
        png = base64.b64decode(data, validate=False)
    except (binascii.Error, ValueError):
        return None
    if not png:
        return None
    stamp = int(time.time() * 1000)
    for n in range(1000):
        name = f"screenshot-{stamp}.png" if n == 0 else f"screenshot-{stamp}-{n}.png"
        path = os.path.normpath(os.path.join(directory, name))
        try:
            with open(path, "xb") as f:   # never over an earlier one taken in the same millisecond
                f.write(png)
        except FileExistsError:
            continue
        return path
    return None


# --- lines -> people

_COLOURS = {"red": "31", "green": "32", "yellow": "33", "blue": "34", "magenta": "35", "cyan": "36", "dim": "2",
            "bold": "1"}
_LEVEL_COLOUR = {"error": "red", "warn": "yellow", "info": "cyan", "debug": "dim", "log": ""}
_CUT = 200


def _paint(text: str, colour: str, on: bool) -> str:
    code = _COLOURS.get(colour)
    return f"\x1b[{code}m{text}\x1b[0m" if on and code else text


def _cut(text: str, limit: int = _CUT) -> str:
    text = " ".join(text.split()) if "\n" in text else text
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _compact(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def render(line: dict[str, Any], colour: bool = False) -> str:
    """A line of :func:`json_line` (or of the console itself) as text for a person, coloured with
    ANSI codes when ``colour``."""
    event = line.get("event")
    p = lambda text, c: _paint(text, c, colour)   # noqa: E731
    if event == "server_started":
        return (f"{p('Debug bridge', 'bold')} on {line['url']}  session {line['session']}\n"
                f"Apps join at {line['url']}?role=app&sessionId={line['session']}. Type help for commands.")
    if event == "app_connected":
        name = " ".join(str(line[k]) for k in ("appName", "appVersion") if line.get(k)) or "an app"
        return p(f"✓ connected: {name}", "green") + (f"  {line['url']}" if line.get("url") else "")
    if event == "app_disconnected":
        return p("✗ the app disconnected", "yellow")
    if event in ("agent_connected", "agent_disconnected"):
        verb = "joined" if event == "agent_connected" else "left"
        return p(f"· agent {line.get('agentId', '?')} {verb} ({line.get('connectedAgents', '?')} agents now)", "dim")
    if event == "command_sent":
        return p(f"→ {line.get('type', '?')} {line.get('requestId', '')}", "dim")
    if event == "command_result":
        took = f" ({line['duration']} ms)" if "duration" in line else ""
        if line.get("success"):
            result = f"  {_cut(_compact(line['result']))}" if line.get("result") is not None else ""
            return p(f"✓ {line.get('requestId', '')}{took}", "green") + result
        err = line.get("error") if isinstance(line.get("error"), dict) else {}
        return p(f"✗ {line.get('requestId', '')} {err.get('code', 'failed')}: {err.get('message', '')}{took}", "red")
    if event == "error":
        what = f"{line['type']} {line.get('requestId', '')}: " if line.get("type") else ""
        return p(f"✗ {what}{line.get('error', '')}", "red")
    if event == "dropped":
        return p(f"! {line.get('count')} messages dropped: the output fell behind", "yellow")
    if event == "info":
        return str(line.get("message", ""))
    if event == "find_results":
        head = f"{line.get('count', 0)} match(es) for {line.get('query', '')!r}"
        return "\n".join([head, *_items(line.get("items") or [], colour)])
    if event == "telemetry":
        return _telemetry(line, colour)
    return _compact(line)


def _telemetry(line: dict[str, Any], colour: bool) -> str:
    kind = line.get("type")
    p = lambda text, c: _paint(text, c, colour)   # noqa: E731
    if kind == "console":
        level = str(line.get("level", "log"))
        args = " ".join(_compact(a) for a in line.get("args") or [])
        return p(f"[{level}]", _LEVEL_COLOUR.get(level, "")) + " " + _cut(args)
    if kind == "error":
        stack = (line.get("stack") or "").strip().splitlines()
        where = f"\n    {stack[1].strip()}" if len(stack) > 1 else ""
        return p(f"[error] {line.get('message', '')}", "red") + where
    if kind == "ui_tree":
        return "\n".join([p(f"[ui_tree] {line.get('itemCount', 0)} elements", "blue"),
                          *_items(line.get("items") or [], colour)])
    if kind == "state_update":
        return f"{p('[state]', 'magenta')} {line.get('scope')}: {_cut(_compact(line.get('state')))}"
    if kind == "capabilities":
        return f"{p('[capabilities]', 'dim')} {', '.join(map(str, line.get('capabilities') or []))}"
    if kind == "dom_snapshot":
        return f"{p('[dom_snapshot]', 'blue')} {line.get('length', 0):,} characters"
    if kind == "screenshot":
        size = f"{line.get('width')}x{line.get('height')}"
        saved = f"saved to {line['file']}" if line.get("file") else "(no image)"
        return f"{p('[screenshot]', 'blue')} {size} {saved}"
    if kind == "network_request":
        return f"{p('→', 'dim')} {line.get('method', '')} {_cut(str(line.get('url', '')), 120)}"
    if kind == "network_response":
        mark = p(f"← {line.get('status')} {line.get('statusText', '')}".rstrip(), "green" if line.get("ok") else "red")
        return f"{mark} ({line.get('duration', '?')} ms, {line.get('bodyLength', 0)} chars)"
    if kind == "navigation":
        return f"{p('[' + str(line.get('trigger', 'navigation')) + ']', 'cyan')} {line.get('url', '')}"
    if kind == "dom_mutations":
        muts = line.get("mutations") or []
        kinds = sorted({str(m.get("mutationType")) for m in muts if isinstance(m, dict)})
        return f"{p('[dom]', 'dim')} {len(muts)} mutation(s) ({', '.join(kinds)})"
    return _compact(line)


def _items(items: list[Any], colour: bool) -> list[str]:
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        words = item.get("text") or item.get("label") or (item.get("meta") or {}).get("placeholder") or ""
        flags = [f for f, on in (("disabled", item.get("disabled")), ("hidden", item.get("visible") is False)) if on]
        row = f"  {_paint(str(item.get('stableId', '')), 'bold', colour)}  {item.get('role', '')}"
        if words:
            row += f"  {_cut(str(words), 60)!r}"
        if flags:
            row += "  " + _paint(",".join(flags), "dim", colour)
        out.append(row)
    return out
