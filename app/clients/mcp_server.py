"""``pinchtab mcp``: the browser API as MCP tools over stdio, a thin client of the REST API.

Every tool is one or two REST calls made by :class:`app.clients.rest.Client` as the agent ``mcp``,
so MCP calls keep their own current tab on the server. Built on the official MCP SDK's
low-level server: the tool schemas below are written by hand, because the model reads them
on every turn and generated ones are longer and vaguer.

stdout is the protocol: this module logs to stderr only. The process ends when stdin closes.
"""
from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from typing import Any
from urllib.parse import urlsplit

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .rest import Client, ClientError, connect

__all__ = ["TOOLS", "ToolError", "ToolSpec", "build_server", "check_tools", "run", "serve"]

log = logging.getLogger(__name__)

AGENT_ID = "mcp"
SOURCE = "mcp"
MAX_WAIT_MS = 30_000
INSTRUCTIONS = ("Drives a real browser. Loop: pinchtab_navigate, pinchtab_snapshot (lines like `e5 button Save`), "
                "then act by ref; pass snap=\"diff\" on an action to see what changed in the same call.")

Content = types.ContentBlock
Handler = Callable[[Client, dict[str, Any]], list[Content]]


class ToolError(Exception):
    """A call refused before any request: bad arguments, a URL we do not open."""


# --------------------------------------------------------------------------
# The tool table: one list, from which both the tool list and the handlers come


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the model sees it (name, description, parameters) and the function behind it."""

    name: str
    description: str
    properties: Mapping[str, Mapping[str, Any]]
    required: tuple[str, ...]
    read_only: bool
    handler: Handler

    def input_schema(self) -> dict[str, Any]:
        schema: dict[str, Any] = {"type": "object", "properties": {k: dict(v) for k, v in self.properties.items()}}
        if self.required:
            schema["required"] = list(self.required)
        # Unknown arguments are refused (a stray "tabId" must not silently act on another tab).
        schema["additionalProperties"] = False
        return schema

    def to_mcp(self) -> types.Tool:
        return types.Tool(name=self.name, description=self.description, input_schema=self.input_schema(),
                          annotations=types.ToolAnnotations(read_only_hint=True) if self.read_only else None)


TOOLS: list[ToolSpec] = []


def tool(name: str, description: str, /, *, required: tuple[str, ...] = (), read_only: bool = False,
         **properties: Mapping[str, Any]) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of tool ``name``."""

    def register(fn: Handler) -> Handler:
        TOOLS.append(ToolSpec(name, description, properties, required, read_only, fn))
        return fn

    return register


def p(type_: str, description: str, /, **extra: Any) -> dict[str, Any]:
    """A parameter's schema."""
    return {"type": type_, "description": description, **extra}


_SCHEMA_KEYWORDS = {"type", "description", "enum", "default", "minimum", "maximum"}
_TYPES: dict[str, Callable[[Any], bool]] = {
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool)
    or isinstance(v, float) and v.is_integer(),
    "number": lambda v: isinstance(v, int | float) and not isinstance(v, bool),
}


def check_tools(specs: list[ToolSpec]) -> tuple[list[types.Tool], dict[str, Handler]]:
    """Build the tool list and the handler table from ``specs``; fail (at start) if they disagree.

    Also checks what the argument checker relies on: known types and keywords only, required
    parameters that exist. Raises AssertionError naming the tool.
    """
    tools = [s.to_mcp() for s in specs]
    handlers = {s.name: s.handler for s in specs}
    assert len(handlers) == len(specs), "duplicate tool names"
    assert [t.name for t in tools] == list(handlers), "tool list and handler table differ"
    for s in specs:
        assert s.name.startswith("pinchtab_") and s.description, s.name
        assert callable(handlers[s.name]), f"{s.name} has no handler"
        assert set(s.required) <= set(s.properties), f"{s.name}: required parameter not declared"
        for key, schema in s.properties.items():
            assert schema.get("type") in _TYPES and schema.get("description"), f"{s.name}.{key}"
            assert set(schema) <= _SCHEMA_KEYWORDS, f"{s.name}.{key}: {set(schema) - _SCHEMA_KEYWORDS}"
    return tools, handlers


def check_args(spec: ToolSpec, args: Mapping[str, Any] | None) -> dict[str, Any]:
    """The arguments validated against the tool's schema, with defaults filled in."""
    args = dict(args or {})
    unknown = [k for k in args if k not in spec.properties]
    if unknown:
        raise ToolError(f"unknown parameter {unknown[0]!r}; {spec.name} takes: {', '.join(spec.properties) or 'none'}")
    for key in spec.required:
        if args.get(key) in (None, ""):
            raise ToolError(f"{key} is required")
    out: dict[str, Any] = {}
    for key, schema in spec.properties.items():
        value = args.get(key)
        if value is None:
            if "default" in schema:
                out[key] = schema["default"]
            continue
        if not _TYPES[schema["type"]](value):
            raise ToolError(f"{key} must be a {schema['type']}, not {type(value).__name__}")
        if schema["type"] == "integer":
            value = int(value)
        if "enum" in schema and value not in schema["enum"]:
            raise ToolError(f"{key} must be one of {', '.join(map(str, schema['enum']))}")
        if "minimum" in schema and value < schema["minimum"]:
            raise ToolError(f"{key} must be at least {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            raise ToolError(f"{key} must be at most {schema['maximum']}")
        out[key] = value
    return out


# --------------------------------------------------------------------------
# Results


def text(s: str) -> list[Content]:
    return [types.TextContent(type="text", text=s)]


def as_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def error_result(message: str) -> types.CallToolResult:
    """A tool error: the model reads it and can recover; it is never a protocol failure."""
    return types.CallToolResult(content=text(message), is_error=True)


def with_snapshot(summary: Any, reply: Mapping[str, Any]) -> list[Content]:
    """An action's result, followed by the post-action snapshot when one was asked for."""
    out = as_json(summary)
    if reply.get("snapshot"):
        out += "\n\n" + reply["snapshot"]
    return text(out)


# --------------------------------------------------------------------------
# Parameters several tools share

REF = p("string", "element ref from pinchtab_snapshot, e.g. e5")
SELECTOR = p("string", "instead of ref: CSS, xpath, text:Label or role:button Name")
SNAP = p("string", "also return the page afterwards: compact snapshot, or diff since your last view",
         enum=["compact", "diff"])
WAIT_NAV = p("boolean", "true when this loads a new page: waits for it")
TIMEOUT_MS = p("integer", "ms, at most 30000", default=10000, minimum=100, maximum=MAX_WAIT_MS)
LIMIT = p("integer", "last N entries (0: all)", default=0, minimum=0)


def target(args: Mapping[str, Any], required: bool = True) -> dict[str, Any]:
    """The element an action names (ref wins); refused when a required one is missing."""
    if args.get("ref"):
        return {"ref": args["ref"]}
    if args.get("selector"):
        return {"selector": args["selector"]}
    if required:
        raise ToolError("give ref (from pinchtab_snapshot) or selector")
    return {}


def act(client: Client, kind: str, args: Mapping[str, Any], *, required: bool = True,
        **fields: Any) -> list[Content]:
    """POST /action with the target, the kind's fields, and ``snap`` passed through."""
    body: dict[str, Any] = {"kind": kind, **target(args, required), **fields}
    if args.get("snap"):
        body["snap"] = args["snap"]
    if args.get("waitNav"):
        body["waitNav"] = True
    reply = client.post("/action", body)
    return with_snapshot(reply.get("result", {}), reply)


# --------------------------------------------------------------------------
# Navigation and reading


@tool("pinchtab_navigate", "Open an http(s) URL in your current tab (the first call opens one). Returns tabId, "
      "url, title.", required=("url",),
      url=p("string", "http:// or https:// URL"), newTab=p("boolean", "open in a new tab"), snap=SNAP)
def navigate(client: Client, args: dict[str, Any]) -> list[Content]:
    url = args["url"].strip()
    try:
        scheme, netloc = urlsplit(url)[:2]
    except ValueError:  # malformed (an unclosed IPv6 bracket): the server's 400 says what is wrong
        scheme, netloc = url.partition(":")[0], "?"
    if scheme.lower() not in ("http", "https") or not netloc:
        raise ToolError(f"refused {url[:100]!r}: pinchtab_navigate opens http:// and https:// URLs only "
                        "(write the scheme)")
    reply = client.post("/navigate", {"url": url, "newTab": bool(args.get("newTab"))})
    summary = {k: reply.get(k) for k in ("tabId", "url", "title")}
    if args.get("snap"):
        snap = client.request("GET", "/snapshot", tab=reply["tabId"], params={
            "filter": "interactive", "format": "compact", "diff": args["snap"] == "diff"}).text
        return with_snapshot(summary, {"snapshot": snap})
    return text(as_json(summary))


@tool("pinchtab_snapshot", "The page as lines `ref role name` (e.g. `e5 button Save`); act on elements by ref.",
      read_only=True,
      interactive=p("boolean", "interactive elements and headings only", default=True),
      compact=p("boolean", "compact text; false gives JSON with tags, labels, values", default=True),
      diff=p("boolean", "only what changed since your last snapshot"),
      selector=p("string", "only this element's subtree (CSS or ref)"),
      maxTokens=p("integer", "cut at about this many tokens; the cut names the `after` to continue from",
                  minimum=1),
      after=p("string", "continue a cut snapshot after this ref"),
      depth=p("integer", "max tree depth", minimum=0))
def snapshot(client: Client, args: dict[str, Any]) -> list[Content]:
    params = {"filter": "interactive" if args["interactive"] else "all",
              "format": "compact" if args["compact"] else "json",
              "diff": args.get("diff") or None, "selector": args.get("selector"),
              "maxTokens": args.get("maxTokens"), "after": args.get("after"), "depth": args.get("depth")}
    return text(client.request("GET", "/snapshot", params=params).text)


@tool("pinchtab_screenshot", "A JPEG of the viewport, one element or the whole page. To read or act, "
      "pinchtab_snapshot is cheaper.", read_only=True,
      selector=p("string", "only this element (CSS or ref)"), fullPage=p("boolean", "the whole page"),
      quality=p("integer", "JPEG quality", default=80, minimum=1, maximum=100))
def screenshot(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.get("/screenshot", {"format": "jpeg", "quality": args["quality"],
                                       "beyondViewport": args.get("fullPage") or None,
                                       "selector": args.get("selector")})
    return [types.ImageContent(type="image", data=reply["base64"], mime_type=f"image/{reply.get('format', 'jpeg')}")]


@tool("pinchtab_get_text", "The page's readable text (main content), or all of it with raw.", read_only=True,
      raw=p("boolean", "all body text, not just the main content"),
      maxChars=p("integer", "cut after this many characters", minimum=1))
def get_text(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.get("/text", {"mode": "raw" if args.get("raw") else None, "maxChars": args.get("maxChars")})
    return text(reply.get("text", "") + ("\n[truncated]" if reply.get("truncated") else ""))


# --------------------------------------------------------------------------
# Interaction: each takes ref or selector, and snap


@tool("pinchtab_click", "Click an element.", ref=REF, selector=SELECTOR, waitNav=WAIT_NAV, snap=SNAP)
def click(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "click", args)


@tool("pinchtab_type", "Type text key by key into an element (appends; pinchtab_fill replaces).",
      required=("text",), ref=REF, selector=SELECTOR, text=p("string", "text to type"), snap=SNAP)
def type_(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "type", args, text=args["text"])


@tool("pinchtab_fill", "Set an input's value at once, replacing it.", required=("text",),
      ref=REF, selector=SELECTOR, text=p("string", "the new value"), snap=SNAP)
def fill(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "fill", args, text=args["text"])


@tool("pinchtab_press", "Press a key (Enter, Tab, Escape, ArrowDown, Control+a) in the focused or given element.",
      required=("key",), key=p("string", "key or combo"), ref=REF, selector=SELECTOR, waitNav=WAIT_NAV, snap=SNAP)
def press(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "press", args, required=False, key=args["key"])


@tool("pinchtab_hover", "Move the mouse over an element.", ref=REF, selector=SELECTOR, snap=SNAP)
def hover(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "hover", args)


@tool("pinchtab_focus", "Focus an element.", ref=REF, selector=SELECTOR, snap=SNAP)
def focus(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "focus", args)


@tool("pinchtab_select", "Choose an option of a <select> by value or visible text.", required=("value",),
      ref=REF, selector=SELECTOR, value=p("string", "option value or text"), snap=SNAP)
def select(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "select", args, value=args["value"])


@tool("pinchtab_scroll", "Scroll an element into view, or the page by direction.", ref=REF, selector=SELECTOR,
      direction=p("string", "page scroll", enum=["down", "up", "left", "right"], default="down"),
      pixels=p("integer", "page scroll distance", default=600, minimum=1), snap=SNAP)
def scroll(client: Client, args: dict[str, Any]) -> list[Content]:
    if args.get("ref") or args.get("selector"):
        return act(client, "scroll", args)
    return act(client, "scroll", args, required=False, direction=args["direction"], pixels=args["pixels"])


# --------------------------------------------------------------------------
# Content


@tool("pinchtab_eval", "Run a JavaScript expression in the page; returns its JSON value. Needs "
      "security.allowEvaluate on the server.", required=("expression",),
      expression=p("string", "JavaScript expression"), awaitPromise=p("boolean", "await a returned promise"))
def evaluate(client: Client, args: dict[str, Any]) -> list[Content]:
    try:
        reply = client.post("/evaluate", {"expression": args["expression"],
                                          "awaitPromise": bool(args.get("awaitPromise"))})
    except ClientError as exc:
        if exc.code == "evaluate_disabled":
            raise ClientError(f"{exc.message}: set \"security\": {{\"allowEvaluate\": true}} in the pinchtab "
                              "config and restart the server", status=exc.status, code=exc.code) from None
        raise
    return text(as_json(reply.get("result")))


@tool("pinchtab_pdf", "The page as a PDF (base64 resource).", read_only=True,
      landscape=p("boolean", "landscape pages"), pageRanges=p("string", "e.g. 1-3,5"))
def pdf(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.request("GET", "/pdf", params={"landscape": args.get("landscape") or None,
                                                  "pageRanges": args.get("pageRanges")})
    tab_id = reply.headers.get("X-PinchTab-Tab-Id", "page")
    doc = reply.json()
    return [types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
        uri=f"pinchtab://tabs/{tab_id}/page.pdf", mime_type="application/pdf", blob=doc["base64"]))]


@tool("pinchtab_find", "Find elements by description (\"login button\", \"role:button Sign in\"); best refs first.",
      required=("query",), read_only=True, query=p("string", "what to look for"))
def find(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.post("/find", {"query": args["query"]})
    matches = [{k: m.get(k) for k in ("ref", "role", "name", "score")} for m in reply.get("matches", [])]
    return text(as_json({"best": reply.get("best_ref", ""), "confidence": reply.get("confidence"),
                         "matches": matches}))


# --------------------------------------------------------------------------
# Tabs and the server


@tool("pinchtab_list_tabs", "Open tabs (id, title, url), your current tab first.", read_only=True)
def list_tabs(client: Client, args: dict[str, Any]) -> list[Content]:
    tabs = client.get("/tabs").get("tabs", [])
    return text(as_json([{k: t.get(k) for k in ("id", "title", "url")} for t in tabs]))


@tool("pinchtab_switch_tab", "Make a tab your current tab, the one the other tools act on.", required=("tabId",),
      tabId=p("string", "id from pinchtab_list_tabs"))
def switch_tab(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.post("/tab", {"action": "focus", "tabId": args["tabId"]})))


@tool("pinchtab_close_tab", "Close a tab (default: your current tab).", tabId=p("string", "tab to close"))
def close_tab(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.post("/close", {"tabId": args["tabId"]} if args.get("tabId") else {})))


@tool("pinchtab_health", "Whether the Pinchtab server and its browser are up.", read_only=True)
def health(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(client.request("GET", "/health").text.strip())


@tool("pinchtab_cookies", "Cookies the browser sends to the page (or url). Needs security.allowCookies.",
      read_only=True, url=p("string", "default: the current page"), name=p("string", "only this cookie"))
def cookies(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.get("/cookies", {"url": args.get("url"), "name": args.get("name")})))


# --------------------------------------------------------------------------
# Waiting, dialogs, history, logs


@tool("pinchtab_wait", "Pause (at most 30 s).", required=("ms",), read_only=True,
      ms=p("integer", "milliseconds", minimum=0, maximum=MAX_WAIT_MS))
def wait(client: Client, args: dict[str, Any]) -> list[Content]:
    ms = min(args["ms"], MAX_WAIT_MS)  # runs on a worker thread: the event loop keeps serving
    time.sleep(ms / 1000)
    return text(as_json({"waited": ms}))


def _wait(client: Client, body: dict[str, Any]) -> list[Content]:
    reply = client.post("/wait", {**body, "timeout": min(body.get("timeout", 10000), MAX_WAIT_MS)})
    if not reply.get("waited"):
        raise ToolError(reply.get("error") or "timed out")
    return text(as_json(reply))


@tool("pinchtab_wait_for_selector", "Wait until an element matches a CSS selector (or is gone, with hidden).",
      required=("selector",), read_only=True, selector=p("string", "CSS, xpath or text:..."),
      state=p("string", "wait to appear or to go", enum=["visible", "hidden"], default="visible"),
      timeout=TIMEOUT_MS)
def wait_for_selector(client: Client, args: dict[str, Any]) -> list[Content]:
    return _wait(client, {"selector": args["selector"], "state": args["state"], "timeout": args["timeout"]})


@tool("pinchtab_wait_for_text", "Wait until text appears on the page.", required=("text",), read_only=True,
      text=p("string", "substring of the page text"), timeout=TIMEOUT_MS)
def wait_for_text(client: Client, args: dict[str, Any]) -> list[Content]:
    return _wait(client, {"text": args["text"], "timeout": args["timeout"]})


@tool("pinchtab_dialog", "Accept or dismiss the page's open alert, confirm or prompt.", required=("action",),
      action=p("string", "accept or dismiss", enum=["accept", "dismiss"]), text=p("string", "prompt answer"))
def dialog(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.post("/dialog", {"action": args["action"], "text": args.get("text", "")})))


@tool("pinchtab_back", "Go back in your current tab's history.")
def back(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.post("/back")))


@tool("pinchtab_console", "The page's console messages, oldest first.", read_only=True, limit=LIMIT)
def console(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.get("/console", {"limit": args["limit"]}).get("console", [])))


@tool("pinchtab_errors", "The page's uncaught JavaScript errors, oldest first.", read_only=True, limit=LIMIT)
def errors(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.get("/errors", {"limit": args["limit"]}).get("errors", [])))


# --------------------------------------------------------------------------
# The server


def build_server(client: Client, specs: list[ToolSpec] | None = None) -> Server[Any]:
    """The MCP server for ``specs`` (default: every tool), calling the REST API through ``client``."""
    specs = TOOLS if specs is None else specs
    tools, handlers = check_tools(specs)
    by_name = {s.name: s for s in specs}

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            return error_result(f"unknown tool {params.name!r}")
        started = time.monotonic()
        try:
            args = check_args(spec, params.arguments)
            # Blocking HTTP on a worker thread; a cancelled call returns at once, its request
            # finishes (bounded by the client timeout) in the background.
            content = await anyio.to_thread.run_sync(partial(handlers[spec.name], client, args),
                                                     abandon_on_cancel=True)
        except ClientError as exc:
            log.info("%s failed: %s (%s)", spec.name, exc.code, exc.status)
            return error_result(exc.describe())
        except ToolError as exc:
            log.info("%s refused: %s", spec.name, exc)
            return error_result(str(exc))
        except Exception as exc:  # a bug here must not end the session: report it to the caller
            log.exception("%s raised", spec.name)
            return error_result(f"internal error in {spec.name}: {type(exc).__name__}")
        log.info("%s ok in %.0f ms", spec.name, (time.monotonic() - started) * 1000)
        return types.CallToolResult(content=content)

    return Server("pinchtab", version=_version(), instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pinchtab")
    except PackageNotFoundError:
        return "0"


async def serve(server: Server[Any]) -> None:
    """Serve MCP on stdin/stdout until stdin closes."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(server_url: str | None) -> int:
    """``pinchtab mcp``: resolve the server and token, then serve until stdin closes."""
    client = connect(server_url, agent_id=AGENT_ID, source=SOURCE)
    server = build_server(client)  # a tool table that does not add up stops here, before serving
    logging.getLogger("mcp").setLevel(logging.WARNING)  # the SDK logs every request at INFO
    log.info("pinchtab mcp: %d tools, REST API at %s", len(TOOLS), client.base_url)
    anyio.run(serve, server)
    in_flight = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    log.info("stdin closed; exiting")
    if in_flight:
        # Calls the host gave up on still wait for the server (up to the HTTP timeout) on worker
        # threads the interpreter would join; their answers have nowhere to go, so do not wait.
        logging.shutdown()
        sys.stdout.flush()
        os._exit(0)
    return 0
