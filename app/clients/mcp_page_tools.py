"""The ``pinchtab mcp`` tools on the page: open it, read it (snapshot, frame, screenshot, capture,
text), act on it (click ... keyup; each takes an element as selector, ref or query, tabId and snap),
and its content (evaluate, PDF, find). Declared in the order the tool list shows them.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from mcp import types

from .mcp_params import (
    BROWSER,
    ELEMENT,
    ELEMENT_ALIASES,
    NODE_ID,
    SNAP,
    TAB,
    WAIT_NAV,
    X,
    Y,
    act,
    compact_snapshot,
    image,
    snap_mode,
    tab_of,
    with_snapshot,
)
from .mcp_toolkit import Content, ToolError, ToolSpec, as_json, declarer, p, text
from .rest import Client, ClientError

__all__ = ["TOOLS", "navigate"]

TOOLS: list[ToolSpec] = []
tool = declarer(TOOLS)


# --------------------------------------------------------------------------
# Navigation and reading


@tool("pinchtab_navigate", "Open an http(s) URL in your tab (opened on first use) or tabId; returns tabId, url, "
      "title.", route="POST /navigate", required=("url",),
      url=p("string", "http(s) URL"), tabId=TAB, newTab=p("boolean", "in a new tab"), snap=SNAP,
      browser=BROWSER)
def navigate(client: Client, args: dict[str, Any]) -> list[Content]:
    url = args["url"].strip()
    try:
        scheme, netloc = urlsplit(url)[:2]
    except ValueError:  # malformed (an unclosed IPv6 bracket): the server's 400 says what is wrong
        scheme, netloc = url.partition(":")[0], "?"
    if scheme.lower() not in ("http", "https") or not netloc:
        raise ToolError(f"refused {url[:100]!r}: pinchtab_navigate opens http:// and https:// URLs only "
                        "(write the scheme)")
    body: dict[str, Any] = {"url": url, "newTab": bool(args.get("newTab"))}
    if args.get("browser"):
        body["browser"] = args["browser"]
    reply = client.post("/navigate", body, tab=tab_of(args))
    summary = {k: reply.get(k) for k in ("tabId", "url", "title")}
    mode = snap_mode(args.get("snap"))
    if mode:
        return with_snapshot(summary, {"snapshot": compact_snapshot(client, reply["tabId"], mode)})
    return text(as_json(summary))


@tool("pinchtab_snapshot", "The page as lines `ref role name` (e.g. `e5 button Save`); act on elements by ref.",
      route="GET /snapshot", read_only=True, tabId=TAB,
      interactive=p("boolean", "only interactive elements and headings", default=True),
      compact=p("boolean", "false: JSON with tags, labels, values", default=True),
      format=p("string", "overrides compact", enum=["compact", "text", "json", "yaml"]),
      diff=p("boolean", "only changes since your last snapshot"), selector=p("string", "only this subtree"),
      maxTokens=p("integer", "cut at about N tokens (continue with after)", minimum=1),
      after=p("string", "continue after this ref"), depth=p("integer", "max depth", minimum=0),
      noAnimations=p("boolean", "freeze animations"), browser=BROWSER)
def snapshot(client: Client, args: dict[str, Any]) -> list[Content]:
    params = {"filter": "interactive" if args["interactive"] else "all",
              "format": args.get("format") or ("compact" if args["compact"] else "json"),
              "diff": args.get("diff") or None, "selector": args.get("selector"),
              "maxTokens": args.get("maxTokens"), "after": args.get("after"), "depth": args.get("depth"),
              "noAnimations": args.get("noAnimations") or None, "browser": args.get("browser")}
    return text(client.request("GET", "/snapshot", params=params, tab=tab_of(args)).text)


@tool("pinchtab_frame", "The frame selectors act in; with target, set it.", route="GET|POST /frame", tabId=TAB,
      target=p("string", "iframe ref, selector, name or URL, or \"main\""), browser=BROWSER)
def frame(client: Client, args: dict[str, Any]) -> list[Content]:
    if args.get("target"):
        return text(as_json(client.post("/frame", {"target": args["target"]}, tab=tab_of(args))))
    return text(as_json(client.get("/frame", tab=tab_of(args))))


@tool("pinchtab_screenshot", "Image of the viewport, an element or the whole page (snapshot reads cheaper).",
      route="GET /screenshot", read_only=True, aliases={"fullPage": "beyondViewport"},
      tabId=TAB, selector=p("string", "only this element"),
      beyondViewport=p("boolean", "whole page"), format=p("string", "image format", enum=["jpeg", "png"]),
      quality=p("integer", "JPEG quality", default=80, minimum=1, maximum=100),
      scale=p("number", "0.05..4", minimum=0.05, maximum=4),
      annotate=p("boolean", "label interactive elements with refs"), browser=BROWSER)
def screenshot(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.get("/screenshot", {"format": args.get("format") or "jpeg", "quality": args["quality"],
                                       "beyondViewport": args.get("beyondViewport") or None,
                                       "selector": args.get("selector"), "scale": args.get("scale"),
                                       "annotate": args.get("annotate") or None, "browser": args.get("browser")},
                       tab=tab_of(args))
    out = [image(reply["base64"], reply.get("format", "jpeg"))]
    if args.get("annotate"):
        out += text(as_json({"format": reply.get("format"), "annotations": reply.get("annotations", [])}))
    return out


@tool("pinchtab_capture", "Screenshot and snapshot (with boxes) of one moment.",
      route="GET /capture", read_only=True, tabId=TAB, selector=p("string", "only this element"),
      filter=p("string", "snapshot nodes", enum=["interactive", "all"]), format=p("string", "image format",
                                                                                enum=["jpeg", "png"]),
      quality=p("integer", "JPEG quality", minimum=1, maximum=100), depth=p("integer", "max tree depth", minimum=0),
      scale=p("number", "0.05..4", minimum=0.05, maximum=4),
      wait=p("string", "settle first", enum=["stable", "load", "none"]), withBounds=p("boolean", "element boxes"),
      beyondViewport=p("boolean", "whole page"), requirePair=p("boolean", "fail if it navigated between"),
      noAnimations=p("boolean", "freeze animations"), browser=BROWSER)
def capture(client: Client, args: dict[str, Any]) -> list[Content]:
    params = {k: args.get(k) for k in ("selector", "filter", "format", "quality", "depth", "scale", "wait",
                                       "withBounds", "beyondViewport", "requirePair", "noAnimations", "browser")}
    envelope = client.get("/capture", {**params, "output": "inline"}, tab=tab_of(args))
    shot = dict(envelope.get("image") or {})
    data = shot.pop("base64", None)
    out = [image(data, shot.get("format", "jpeg"))] if data else []
    return out + text(as_json({**envelope, "image": shot}))


@tool("pinchtab_get_text", "The page's main text (raw: all of it).", route="GET /text",
      read_only=True, tabId=TAB, raw=p("boolean", "all body text"), maxChars=p("integer", "max chars", minimum=1),
      selector=p("string", "only this element"),
      format=p("string", "json adds url, title, truncated", enum=["text", "plain", "json"]),
      browser=BROWSER)
def get_text(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.get("/text", {"mode": "raw" if args.get("raw") else None, "maxChars": args.get("maxChars"),
                                 "selector": args.get("selector"), "browser": args.get("browser")}, tab=tab_of(args))
    if args.get("format") == "json":
        return text(as_json(reply))
    return text(reply.get("text", "") + ("\n[truncated]" if reply.get("truncated") else ""))


# --------------------------------------------------------------------------
# Interaction: each takes an element (selector, ref or query), tabId and snap


@tool("pinchtab_click", "Click an element (or a point).", route="POST /action", aliases=ELEMENT_ALIASES, **ELEMENT,
      tabId=TAB, x=X, y=Y, nodeId=NODE_ID, waitNav=WAIT_NAV,
      dialogAction=p("string", "answer the dialog it opens", enum=["accept", "dismiss"]),
      dialogText=p("string", "prompt text"),
      mode=p("string", "dom: el.click(); dispatch: synthetic events", enum=["dom", "dispatch"]),
      snap=SNAP, browser=BROWSER)
def click(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "click", args)


@tool("pinchtab_type", "Type text key by key into an element (appends; fill replaces).",
      route="POST /action", required=("text",), aliases=ELEMENT_ALIASES, **ELEMENT, text=p("string", "text"),
      tabId=TAB, snap=SNAP)
def type_(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "type", args, text=args["text"])


@tool("pinchtab_fill", "Set an input's value at once, replacing it.", route="POST /action", required=("value",),
      aliases={**ELEMENT_ALIASES, "text": "value"}, **ELEMENT, value=p("string", "new value"), tabId=TAB,
      snap=SNAP)
def fill(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "fill", args, text=args["value"])


@tool("pinchtab_press", "Press a key (Enter, Escape, Control+a...) in the focused or given element.",
      route="POST /action", required=("key",), aliases=ELEMENT_ALIASES, key=p("string", "key or combo"), **ELEMENT,
      tabId=TAB, waitNav=WAIT_NAV, snap=SNAP)
def press(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "press", args, required=False, key=args["key"])


@tool("pinchtab_hover", "Hover an element (or a point).", route="POST /action",
      aliases=ELEMENT_ALIASES, **ELEMENT, tabId=TAB, x=X, y=Y, nodeId=NODE_ID, snap=SNAP)
def hover(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "hover", args)


@tool("pinchtab_focus", "Focus an element.", route="POST /action", aliases=ELEMENT_ALIASES, **ELEMENT, tabId=TAB,
      nodeId=NODE_ID, snap=SNAP)
def focus(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "focus", args)


@tool("pinchtab_select", "Choose a <select> option.", route="POST /action",
      required=("value",), aliases={**ELEMENT_ALIASES, "text": "value"}, **ELEMENT,
      value=p("string", "option value or text"), tabId=TAB, snap=SNAP)
def select(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "select", args, value=args["value"])


@tool("pinchtab_scroll", "Scroll an element into view, or the page by direction (pixels x steps, else 600 px) "
      "or deltaX/deltaY.", route="POST /action", aliases=ELEMENT_ALIASES, **ELEMENT,
      tabId=TAB, direction=p("string", "page", enum=["down", "up", "left", "right"], default="down"),
      pixels=p("integer", "per step (120)", minimum=1), steps=p("integer", "wheel steps", minimum=1, maximum=100),
      deltaX=p("number", "wheel dx"), deltaY=p("number", "wheel dy"), x=p("number", "wheel at viewport x"),
      y=p("number", "and y"), snap=SNAP)
def scroll(client: Client, args: dict[str, Any]) -> list[Content]:
    # An element is scrolled into view; otherwise the wheel turns at x/y (default: the viewport's centre).
    if any(args.get(k) for k in ("selector", "ref", "query")):
        return act(client, "scroll", {k: v for k, v in args.items() if k not in ("x", "y")})
    if "deltaX" in args or "deltaY" in args:
        return act(client, "mouse-wheel", args, required=False, deltaX=args.get("deltaX", 0),
                   deltaY=args.get("deltaY", 0))
    if "pixels" in args or "steps" in args:
        pixels = args.get("pixels", 120) * args.get("steps", 1)
    else:
        pixels = 600
    return act(client, "scroll", args, required=False, direction=args["direction"], pixels=pixels)


@tool("pinchtab_scroll_into_view", "Scroll an element into view; returns its box.", route="POST /action",
      aliases=ELEMENT_ALIASES, **ELEMENT, tabId=TAB, snap=SNAP)
def scroll_into_view(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "scrollintoview", args)


@tool("pinchtab_keyboard_type", "Type text as keys into the focused element.", route="POST /action",
      required=("text",), text=p("string", "text"), tabId=TAB, snap=SNAP)
def keyboard_type(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "keyboard-type", args, required=False, text=args["text"])


@tool("pinchtab_keyboard_inserttext", "Insert text into the focused element at once (no key events).",
      route="POST /action", required=("text",), text=p("string", "text"), tabId=TAB, snap=SNAP)
def keyboard_inserttext(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "keyboard-inserttext", args, required=False, text=args["text"])


@tool("pinchtab_keydown", "Hold a key down until keyup.", route="POST /action",
      required=("key",), key=p("string", "key"), tabId=TAB)
def keydown(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "keydown", args, required=False, key=args["key"])


@tool("pinchtab_keyup", "Release a held key.", route="POST /action", required=("key",),
      key=p("string", "key"), tabId=TAB)
def keyup(client: Client, args: dict[str, Any]) -> list[Content]:
    return act(client, "keyup", args, required=False, key=args["key"])


# --------------------------------------------------------------------------
# Content


@tool("pinchtab_eval", "Run JavaScript in the page; returns its JSON value (needs security.allowEvaluate).",
      route="POST /evaluate", required=("expression",), expression=p("string", "JS expression"), tabId=TAB,
      awaitPromise=p("boolean", "await a promise result"))
def evaluate(client: Client, args: dict[str, Any]) -> list[Content]:
    try:
        reply = client.post("/evaluate", {"expression": args["expression"],
                                          "awaitPromise": bool(args.get("awaitPromise"))}, tab=tab_of(args))
    except ClientError as exc:
        if exc.code == "evaluate_disabled":
            raise ClientError(f"{exc.message}: set \"security\": {{\"allowEvaluate\": true}} in the pinchtab "
                              "config and restart the server", status=exc.status, code=exc.code) from None
        raise
    return text(as_json(reply.get("result")))


@tool("pinchtab_pdf", "The page as a PDF (base64 resource).", route="GET /pdf", read_only=True, tabId=TAB,
      landscape=p("boolean", "landscape"), scale=p("number", "0.1..2", minimum=0.1, maximum=2),
      pageRanges=p("string", "e.g. 1-3,5"))
def pdf(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.request("GET", "/pdf", tab=tab_of(args), params={
        "landscape": args.get("landscape") or None, "scale": args.get("scale"), "pageRanges": args.get("pageRanges")})
    tab_id = reply.headers.get("X-PinchTab-Tab-Id", "page")
    doc = reply.json()
    return [types.EmbeddedResource(type="resource", resource=types.BlobResourceContents(
        uri=f"pinchtab://tabs/{tab_id}/page.pdf", mime_type="application/pdf", blob=doc["base64"]))]


@tool("pinchtab_find", "Find elements by description (\"login button\"); best refs first.",
      route="POST /find", required=("query",), read_only=True, query=p("string", "description"), tabId=TAB)
def find(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.post("/find", {"query": args["query"]}, tab=tab_of(args))
    matches = [{k: m.get(k) for k in ("ref", "role", "name", "score")} for m in reply.get("matches", [])]
    return text(as_json({"best": reply.get("best_ref", ""), "confidence": reply.get("confidence"),
                         "matches": matches}))

