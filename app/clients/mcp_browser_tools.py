"""The ``pinchtab mcp`` tools around the page: tabs, the server and profiles, waiting, the network,
recording, dialogs, history, the page's logs, and scraping. Declared in the order the tool list shows
them (after :mod:`app.clients.mcp_page_tools`'s).
"""
from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

from .mcp_params import BROWSER, LIMIT, TAB, TIMEOUT_MS, tab_of
from .mcp_toolkit import Content, ToolError, ToolSpec, as_json, declarer, p, text
from .rest import Client

__all__ = ["MAX_WAIT_MS", "TOOLS"]

MAX_WAIT_MS = 30_000
SCRAPE_SLACK_S = 30.0  # over the scrape's own timeout: the server's answer must still reach us

TOOLS: list[ToolSpec] = []
tool = declarer(TOOLS)


# --------------------------------------------------------------------------
# Tabs, the server, profiles


@tool("pinchtab_list_tabs", "Open tabs (id, title, url), your current tab first.", route="GET /tabs", read_only=True)
def list_tabs(client: Client, args: dict[str, Any]) -> list[Content]:
    tabs = client.get("/tabs").get("tabs", [])
    return text(as_json([{k: t.get(k) for k in ("id", "title", "url")} for t in tabs]))


@tool("pinchtab_switch_tab", "Make tabId your current tab.", route="POST /tab",
      required=("tabId",), tabId=p("string", "from list_tabs"))
def switch_tab(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.post("/tab", {"action": "focus", "tabId": args["tabId"]})))


@tool("pinchtab_close_tab", "Close a tab.", route="POST /close", tabId=TAB)
def close_tab(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.post("/close", {"tabId": args["tabId"]} if args.get("tabId") else {})))


@tool("pinchtab_health", "Whether the server and browser are up.", route="GET /health", read_only=True)
def health(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(client.request("GET", "/health").text.strip())


@tool("pinchtab_cookies", "The page's (or url's) cookies (needs security.allowCookies).",
      route="GET /cookies", read_only=True, tabId=TAB, url=p("string", "default: the page"),
      name=p("string", "only this cookie"))
def cookies(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.get("/cookies", {"url": args.get("url"), "name": args.get("name")}, tab=tab_of(args))))


@tool("pinchtab_connect_profile", "Whether a profile's browser instance runs, and where (server mode).",
      route="GET /profiles/{id}/instance", required=("profile",), read_only=True,
      profile=p("string", "name or id"))
def connect_profile(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.get(f"/profiles/{quote(args['profile'], safe='')}/instance")
    return text(as_json({"profile": args["profile"], **reply}))


# --------------------------------------------------------------------------
# Waiting


@tool("pinchtab_wait", "Pause (at most 30 s).", route="none", required=("ms",), read_only=True,
      ms=p("integer", "ms (max 30000)", minimum=0))
def wait(client: Client, args: dict[str, Any]) -> list[Content]:
    ms = min(args["ms"], MAX_WAIT_MS)  # runs on a worker thread: the event loop keeps serving
    time.sleep(ms / 1000)
    return text(as_json({"waited": ms}))


def _wait(client: Client, args: Mapping[str, Any], **condition: Any) -> list[Content]:
    timeout_ms = min(max(args["timeout"], 100), MAX_WAIT_MS)
    reply = client.post("/wait", {**condition, "timeout": timeout_ms}, tab=tab_of(args))
    if not reply.get("waited"):
        raise ToolError(reply.get("error") or "timed out")
    return text(as_json(reply))


@tool("pinchtab_wait_for_selector", "Wait for an element to appear (or go: hidden).",
      route="POST /wait", required=("selector",), read_only=True, selector=p("string", "CSS, xpath or text:..."),
      state=p("string", "appear or go", enum=["visible", "hidden"], default="visible"),
      timeout=TIMEOUT_MS, tabId=TAB)
def wait_for_selector(client: Client, args: dict[str, Any]) -> list[Content]:
    return _wait(client, args, selector=args["selector"], state=args["state"])


@tool("pinchtab_wait_for_text", "Wait for text on the page.", route="POST /wait", required=("text",),
      read_only=True, text=p("string", "substring"), timeout=TIMEOUT_MS, tabId=TAB)
def wait_for_text(client: Client, args: dict[str, Any]) -> list[Content]:
    return _wait(client, args, text=args["text"])


@tool("pinchtab_wait_for_url", "Wait for the URL to match a glob.", route="POST /wait",
      required=("url",), read_only=True, url=p("string", "glob, e.g. **/done*"), timeout=TIMEOUT_MS, tabId=TAB)
def wait_for_url(client: Client, args: dict[str, Any]) -> list[Content]:
    return _wait(client, args, url=args["url"])


@tool("pinchtab_wait_for_load", "Wait for a load state.",
      route="POST /wait", required=("load",), read_only=True, load=p("string", "ready-state, content-loaded or "
                                                                      "network-idle"),
      timeout=TIMEOUT_MS, tabId=TAB)
def wait_for_load(client: Client, args: dict[str, Any]) -> list[Content]:
    return _wait(client, args, load=args["load"])


@tool("pinchtab_wait_for_function", "Wait until JS is truthy (needs security.allowEvaluate).",
      route="POST /wait", required=("fn",), read_only=True, fn=p("string", "JS expression"),
      timeout=TIMEOUT_MS, tabId=TAB)
def wait_for_function(client: Client, args: dict[str, Any]) -> list[Content]:
    return _wait(client, args, fn=args["fn"])


# --------------------------------------------------------------------------
# Network


@tool("pinchtab_network", "The tab's network requests, newest last.", route="GET /network", read_only=True, tabId=TAB,
      filter=p("string", "URL substring"), method=p("string", "GET, POST..."),
      status=p(["integer", "string"], "404, 4xx or 400-499"),
      type=p("string", "resource type (xhr, fetch, script...)"),
      limit=p("integer", "last N", minimum=1), bufferSize=p("integer", "entries kept", minimum=1))
def network(client: Client, args: dict[str, Any]) -> list[Content]:
    params = {k: args.get(k) for k in ("filter", "method", "status", "type", "limit", "bufferSize")}
    reply = client.get("/network", params, tab=tab_of(args))
    reply.pop("items", None)  # the same list as entries, kept by the REST API for older clients
    return text(as_json(reply))


@tool("pinchtab_network_detail", "One request in full: headers, timing, body.",
      route="GET /network/{requestId}", required=("requestId",), read_only=True,
      requestId=p("string", "from network"), tabId=TAB, body=p("boolean", "with the body"))
def network_detail(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.get(f"/network/{quote(args['requestId'], safe='')}",
                                   {"body": args.get("body") or None}, tab=tab_of(args))))


@tool("pinchtab_network_clear", "Forget recorded requests (without tabId: every tab's).",
      route="POST /network/clear", tabId=TAB)
def network_clear(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.post("/network/clear", params={"tabId": tab_of(args)})))


ROUTE_FIELDS = ("pattern", "action", "body", "contentType", "status", "resourceType", "method")


@tool("pinchtab_network_route", "Intercept requests matching a URL glob: continue, abort or fulfill (needs "
      "security.allowNetworkIntercept).", route="POST /network/route",
      required=("pattern",), tabId=TAB, pattern=p("string", "URL glob, e.g. **/api/*"),
      action=p("string", "what to do", enum=["continue", "abort", "fulfill"], default="continue"),
      body=p("string", "fulfill body"), contentType=p("string", "fulfill type"),
      status=p("integer", "fulfill status", minimum=100, maximum=599),
      resourceType=p("string", "only this type"), method=p("string", "only this method"))
def network_route(client: Client, args: dict[str, Any]) -> list[Content]:
    body = {k: args[k] for k in ROUTE_FIELDS if k in args}
    return text(as_json(client.post("/network/route", body, tab=tab_of(args))))


@tool("pinchtab_network_unroute", "Stop intercepting.",
      route="DELETE /network/route", tabId=TAB, pattern=p("string", "glob (default: all)"))
def network_unroute(client: Client, args: dict[str, Any]) -> list[Content]:
    reply = client.request("DELETE", "/network/route", params={"pattern": args.get("pattern")}, tab=tab_of(args))
    return text(as_json(reply.json()))


# --------------------------------------------------------------------------
# Recording


@tool("pinchtab_record_start", "Record the tab to a video (needs security.allowScreencast).",
      route="POST /record/start", tabId=TAB, file=p("string", "file name"),
      format=p("string", "container", enum=["webm", "gif"]), fps=p("integer", "fps", minimum=1, maximum=30),
      quality=p("integer", "frame JPEG quality", minimum=1, maximum=100),
      scale=p("number", "frame scale", minimum=0.1, maximum=1))
def record_start(client: Client, args: dict[str, Any]) -> list[Content]:
    body = {k: args[k] for k in ("tabId", "file", "format", "fps", "quality", "scale") if k in args}
    return text(as_json(client.post("/record/start", body)))


@tool("pinchtab_record_stop", "Stop recording; returns the file's path, size, frames.",
      route="POST /record/stop", tabId=TAB, discard=p("boolean", "write no file"))
def record_stop(client: Client, args: dict[str, Any]) -> list[Content]:
    # One recording per server: tabId is accepted (the original's clients send it) and not needed.
    return text(as_json(client.post("/record/stop", {"discard": bool(args.get("discard"))})))


@tool("pinchtab_record_status", "The running recording's progress.", route="GET /record/status",
      read_only=True, tabId=TAB)
def record_status(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.get("/record/status")))


# --------------------------------------------------------------------------
# Dialogs, history, logs, scraping


@tool("pinchtab_dialog", "Answer the open alert, confirm or prompt.", route="POST /dialog",
      required=("action",), action=p("string", "answer", enum=["accept", "dismiss"]),
      text=p("string", "prompt text"), tabId=TAB)
def dialog(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.post("/dialog", {"action": args["action"], "text": args.get("text", "")},
                                    tab=tab_of(args))))


@tool("pinchtab_back", "Go back in history.", route="POST /back", tabId=TAB)
def back(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.post("/back", tab=tab_of(args))))


@tool("pinchtab_console", "The page's console messages, oldest first.", route="GET /console", read_only=True,
      limit=LIMIT, tabId=TAB)
def console(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.get("/console", {"limit": args["limit"]}, tab=tab_of(args)).get("console", [])))


@tool("pinchtab_errors", "The page's uncaught JS errors, oldest first.", route="GET /errors", read_only=True,
      limit=LIMIT, tabId=TAB)
def errors(client: Client, args: dict[str, Any]) -> list[Content]:
    return text(as_json(client.get("/errors", {"limit": args["limit"]}, tab=tab_of(args)).get("errors", [])))


def as_list(value: Any) -> list[str]:
    """A list argument given as a list, or as one comma-separated string."""
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return list(value)


PATTERNS = p(["array", "string"], "path globs (list or comma-separated)", items={"type": "string"})


@tool("pinchtab_scrape", "Crawl a site (same origin) from url; each page as Markdown with title and metadata.",
      route="POST /scrape", required=("url",), url=p("string", "start URL"),
      preview=p("boolean", "snippets, not Markdown"),
      only=p(["array", "string"], "just these URLs", items={"type": "string"}),
      maxPages=p("integer", "page cap", minimum=1), maxPerPattern=p("integer", "per URL pattern", minimum=0),
      include=PATTERNS, exclude=PATTERNS, concurrency=p("integer", "pages at once", minimum=1),
      enrichAll=p("boolean", "enrich every page"), noBrowser=p("boolean", "plain HTTP"),
      timeoutSeconds=p("integer", "overall seconds", minimum=1), browser=BROWSER)
def scrape(client: Client, args: dict[str, Any]) -> list[Content]:
    body = {k: as_list(v) if k in ("only", "include", "exclude") else v for k, v in args.items()}
    timeout_s = client.timeout_s + (args.get("timeoutSeconds") or 0) + SCRAPE_SLACK_S
    return text(client.request("POST", "/scrape", body=body, timeout_s=timeout_s).text)
