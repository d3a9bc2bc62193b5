"""The browser's cookies: reading them for a URL, setting them, saving and restoring them all.

Cookies are browser-wide (the tab's browser context); every function runs on the tab's worker.
One conversion, ``cookie_param``, turns a cookie as we hand it out (``GET /cookies``, a saved
state file) into what ``Network.setCookie`` takes, for both the cookies route and saved state.
Cookie values are secrets: they never reach a log or an error message.
"""
from __future__ import annotations

from typing import Any

from .errors import CDPError
from .tab import Tab

# The fields of a cookie Network.setCookie(s) takes back (the rest are computed by Chrome).
_COOKIE_PARAMS = ("name", "value", "url", "domain", "path", "secure", "httpOnly", "sameSite", "priority",
                  "sourceScheme", "sourcePort", "partitionKey")
SAME_SITE = {"strict": "Strict", "lax": "Lax", "none": "None"}


def cookie_param(cookie: dict[str, Any], url: str = "") -> dict[str, Any] | None:
    """A cookie as ``Network.setCookie`` takes it, set for ``url`` when given.

    Session cookies stay session cookies; ``sameSite`` is matched case-insensitively. None when
    Chrome could not take it: no name, or a ``sameSite`` Chrome does not know (never silently
    changed to another).
    """
    if not cookie.get("name"):
        return None
    out = {k: v for k in _COOKIE_PARAMS if (v := cookie.get(k)) not in (None, "") and v is not False}
    if url:
        out["url"] = url
    if "sameSite" in out:
        same_site = SAME_SITE.get(str(out["sameSite"]).lower())
        if same_site is None:
            return None
        out["sameSite"] = same_site
    if isinstance(out.get("partitionKey"), str):
        out.pop("partitionKey")  # the old string form is not accepted back
    if isinstance(out.get("sourcePort"), int) and not 0 < out["sourcePort"] < 65536:
        out.pop("sourcePort")
    expires = cookie.get("expires")
    if not cookie.get("session") and isinstance(expires, (int, float)) and expires > 0:
        out["expires"] = expires
    return out


def cookies_for(tab: Tab, url: str, name: str = "") -> list[dict[str, Any]]:
    """The cookies the browser would send to ``url`` (only those called ``name`` when given)."""
    if not url.startswith(("http://", "https://")):
        return []  # about:blank and the like have no cookies
    out = []
    for c in tab.call("Network.getCookies", {"urls": [url]}).get("cookies", []):
        if name and c.get("name") != name:
            continue
        item: dict[str, Any] = {"name": c.get("name", ""), "value": c.get("value", ""), "domain": c.get("domain", ""),
                                "path": c.get("path", ""), "secure": bool(c.get("secure")),
                                "httpOnly": bool(c.get("httpOnly")), "sameSite": c.get("sameSite", "")}
        if not c.get("session") and (c.get("expires") or 0) > 0:
            item["expires"] = c["expires"]
        out.append(item)
    return out


def set_cookies_for(tab: Tab, url: str, cookies: list[dict[str, Any]]) -> int:
    """Set each cookie for ``url``; returns how many were set (nameless or empty ones are skipped)."""
    ok = 0
    for c in cookies:
        param = cookie_param(c, url) if c.get("value") else None
        if param is None:
            continue  # counted as failed
        try:
            res = tab.call("Network.setCookie", param)
        except CDPError:
            continue  # Chrome refused it (a domain that does not match the url, ...): counted as failed
        if res.get("success", True):
            ok += 1
    return ok


def all_cookies(tab: Tab) -> list[dict[str, Any]]:
    """Every cookie of the tab's browser context, as Chrome reports them (what a saved state keeps)."""
    return list(tab.call("Storage.getCookies", {}).get("cookies", []))


def restore_cookies(tab: Tab, saved: list[dict[str, Any]]) -> int:
    """Restore cookies ``all_cookies`` returned; returns how many the browser took."""
    params = [p for p in (cookie_param(c) for c in saved) if p is not None]
    if not params:
        return 0
    try:
        tab.call("Network.setCookies", {"cookies": params})
        return len(params)
    except CDPError:
        pass  # one cookie Chrome rejects fails the whole batch: set them one by one instead
    restored = 0
    for param in params:
        try:
            if tab.call("Network.setCookie", param).get("success", True):
                restored += 1
        except CDPError:
            continue
    return restored
