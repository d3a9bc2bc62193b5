"""GET, POST and DELETE /cookies (off unless security.allowCookies).

Cookie values are secrets: they go to the caller and to Chrome, never to a log or an error message.
"""
from __future__ import annotations

from typing import Any

from cdp.cookies import cookies_for, set_cookies_for
from cdp.tab import Tab

from ...policy import urls
from ...web.errors import BadRequest, disabled
from ...web.openapi import Blueprint, ErrorSchema, tab_route
from ...web.schemas import StatusResponse
from .common import before_reading, caller, on_tab, state, tab
from .cookies_contract import CookiesQuerySchema, CookiesResponse, CookiesSetResponse, CookiesSetSchema

bp = Blueprint("cookies", __name__)
DISABLED = "cookies are off unless security.allowCookies is set"


def _enabled() -> None:
    if not state().config.security.allow_cookies:
        raise disabled("cookies", "security.allowCookies")


def _http_url(url: str, field: str = "url") -> str:
    try:
        parsed = urls.parse(url, guess_scheme=False)
    except urls.BadURL as exc:
        if not exc.scheme_error:
            raise BadRequest(f"{field}: {exc.message}", code="bad_url", details={"field": field}) from None
        parsed = None
    if parsed is None or parsed.scheme not in urls.WEB_SCHEMES:
        raise BadRequest(f"{field}: cookies need an http or https URL with a host", code="bad_url",
                         details={"field": field})
    return parsed.text


@tab_route(bp, "/cookies", methods=["GET"])
@before_reading(_enabled)
@bp.arguments(CookiesQuerySchema, location="query")
@bp.response(200, CookiesResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def get_cookies(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The cookies the browser sends to url (default: the tab's URL); only name's with name."""
    url = _http_url(req["url"]) if req["url"] else ""
    target = tab(req.get("tabId"))

    def read(t: Tab) -> tuple[str, list[dict[str, Any]]]:
        used = url or t.url
        return used, cookies_for(t, used, req["name"])

    used, cookies = on_tab(target, read)
    return {"url": used, "cookies": cookies, "count": len(cookies)}


@tab_route(bp, "/cookies", methods=["POST"])
@before_reading(_enabled)
@bp.arguments(CookiesSetSchema)
@bp.response(200, CookiesSetResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def set_cookies(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Set cookies for url; nameless or empty ones are skipped (counted as failed)."""
    url = _http_url(req["url"])
    target = tab(req.get("tabId"))
    ok = on_tab(target, lambda t: set_cookies_for(t, url, req["cookies"]))
    total = len(req["cookies"])
    return {"set": ok, "failed": total - ok, "total": total}


@tab_route(bp, "/cookies", methods=["DELETE"])
@before_reading(_enabled)
@bp.response(200, StatusResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def clear_cookies(tab_id: str | None) -> dict[str, Any]:
    """Clear every cookie of the browser (/tabs/{tabId}/cookies checks that the tab exists first)."""
    st = state()
    if tab_id is not None:
        tab(tab_id)
    # Browser-wide, on the browser's own connection: no tab's worker (or open dialog) is in the way.
    st.ensure(caller()).conn.call("Storage.clearCookies", {}, timeout_s=st.config.timeouts.action_sec)
    return {"status": "cleared"}
