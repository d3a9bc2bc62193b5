"""Captured network entries as HAR 1.2 (the HTTP Archive format browsers' devtools import), or as
NDJSON: the same entries, one JSON object a line (for ``jq``, log shippers and appending as they come)."""
from __future__ import annotations

import json
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from ..web.openapi import package_version

# Credentials a HAR must not carry unless the caller asks (``redact=false``): HARs get shared.
SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key",
                            "x-auth-token", "x-csrf-token"})
REDACTED = "[redacted]"
# The export formats, their content types and file extensions (the original's names).
FORMATS = {"har": ("application/json", ".har"), "ndjson": ("application/x-ndjson", ".ndjson")}


def _headers(raw: dict[str, str], redact: bool) -> list[dict[str, str]]:
    return [{"name": k, "value": REDACTED if redact and k.lower() in SECRET_HEADERS else v} for k, v in raw.items()]


def entry(e: dict[str, Any], *, redact: bool = True, body: tuple[str, bool] | None = None) -> dict[str, Any]:
    """One HAR entry from one of our network entries (``body``: its text and whether base64)."""
    query = [{"name": k, "value": v} for k, v in parse_qsl(urlsplit(e["url"]).query, keep_blank_values=True)]
    request: dict[str, Any] = {
        "method": e["method"], "url": e["url"], "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _headers(e["requestHeaders"], redact), "queryString": query,
        "headersSize": -1, "bodySize": len(e.get("postData", "").encode("utf-8")),
    }
    if e.get("postData"):
        ctype = next((v for k, v in e["requestHeaders"].items() if k.lower() == "content-type"), "")
        request["postData"] = {"mimeType": ctype, "text": e["postData"]}
    content: dict[str, Any] = {"size": e["size"], "mimeType": e["mimeType"] or "x-unknown"}
    if body is not None:
        content["text"] = body[0]
        if body[1]:
            content["encoding"] = "base64"
    response = {
        "status": e["status"], "statusText": e["statusText"], "httpVersion": "HTTP/1.1", "cookies": [],
        "headers": _headers(e["responseHeaders"], redact), "content": content,
        "redirectURL": e["responseHeaders"].get("location", e["responseHeaders"].get("Location", "")),
        "headersSize": -1, "bodySize": e["size"] if e["finished"] else -1,
    }
    wait = e["duration"] if e["duration"] is not None else -1
    out: dict[str, Any] = {
        "startedDateTime": e["startTime"], "time": max(wait, 0), "request": request, "response": response,
        "cache": {}, "timings": {"send": 0, "wait": wait, "receive": 0},
        "_requestId": e["requestId"], "_resourceType": e["resourceType"].lower(),
    }
    if e.get("remoteAddress"):
        out["serverIPAddress"] = e["remoteAddress"].rsplit(":", 1)[0]
    if e["failed"]:
        out["_error"] = e["error"]
    return out


def document(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The whole HAR: ``{"log": {...}}`` around ``entries`` (already HAR entries)."""
    return {"log": {"version": "1.2", "creator": {"name": "Pinchtab", "version": package_version()},
                    "pages": [], "entries": entries}}


def ndjson(entries: list[dict[str, Any]]) -> str:
    """``entries`` (already HAR entries) as NDJSON: one object a line, each line ending in a newline."""
    return "".join(ndjson_line(e) for e in entries)


def ndjson_line(e: dict[str, Any]) -> str:
    """One HAR entry as one NDJSON line."""
    return json.dumps(e, ensure_ascii=False, separators=(",", ":")) + "\n"
