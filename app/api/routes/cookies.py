"""GET, POST and DELETE /cookies (off unless security.allowCookies).

Cookie values are secrets: they go to the caller and to Chrome, never to a log or an error message.
"""
from __future__ import annotations

from urllib.parse import urlparse

from flask import Blueprint, jsonify

from cdp import inspect

from ..browser_state import bridge
from ...errors import BadRequest, disabled
from ..parser import from_body, from_query
from ..schemas import CookiesQuerySchema, CookiesSetSchema, TabQuerySchema
from . import doc, tab_route
from .common import on_tab

bp = Blueprint("cookies", __name__)


def _enabled() -> None:
    if not bridge().config.security.allow_cookies:
        raise disabled("cookies", "security.allowCookies")


def _http_url(url: str, field: str = "url") -> str:
    parsed = urlparse(url)
    if parsed.scheme.lower() not in ("http", "https") or not parsed.hostname:
        raise BadRequest(f"{field}: cookies need an http or https URL with a host", code="bad_url",
                         details={"field": field})
    return url


@tab_route(bp, "/cookies", methods=["GET"])
@doc("The cookies the browser sends to url (default: the tab's URL); only name's with name",
     query=CookiesQuerySchema)
def get_cookies(tab_id: str | None):  # type: ignore[no-untyped-def]
    _enabled()
    req = from_query(CookiesQuerySchema, tab_id)
    url = _http_url(req["url"]) if req["url"] else ""
    tab = bridge().tab(req.get("tabId"))

    def read(t):  # type: ignore[no-untyped-def]
        used = url or t.url
        return used, inspect.get_cookies(t, used, req["name"])

    used, cookies = on_tab(tab, read)
    return jsonify({"url": used, "cookies": cookies, "count": len(cookies)})


@tab_route(bp, "/cookies", methods=["POST"])
@doc("Set cookies for url; nameless or empty ones are skipped (counted as failed)", body=CookiesSetSchema)
def set_cookies(tab_id: str | None):  # type: ignore[no-untyped-def]
    _enabled()
    req = from_body(CookiesSetSchema, tab_id)
    url = _http_url(req["url"])
    tab = bridge().tab(req.get("tabId"))
    ok = on_tab(tab, lambda t: inspect.set_cookies(t, url, req["cookies"]))
    total = len(req["cookies"])
    return jsonify({"set": ok, "failed": total - ok, "total": total})


@tab_route(bp, "/cookies", methods=["DELETE"])
@doc("Clear every cookie of the browser (/tabs/{id}/cookies checks that the tab exists first)",
     query=TabQuerySchema)
def clear_cookies(tab_id: str | None):  # type: ignore[no-untyped-def]
    _enabled()
    br = bridge()
    if tab_id is not None:
        br.tab(tab_id)
    # Browser-wide, on the browser's own connection: no tab's worker (or open dialog) is in the way.
    br.ensure().conn.call("Storage.clearCookies", {}, timeout_s=br.config.timeouts.action_sec)
    return jsonify({"status": "cleared"})
