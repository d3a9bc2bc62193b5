"""A tab's saved-state side: the browser's cookies and the current origin's web storage.

Every function runs on the tab's worker (``Tab.run``). Cookies are browser-wide (the tab's
browser context); local and session storage are read and written in the page, for the origin
the tab is on, from our isolated world (which shares the page's storage).
"""
from __future__ import annotations

import json
from typing import Any

from .errors import CDPError
from .snapshot import evaluate
from .tab import Tab

# The fields of a cookie Network.setCookies takes back (the rest are computed by Chrome).
_COOKIE_PARAMS = ("name", "value", "url", "domain", "path", "secure", "httpOnly", "sameSite", "priority",
                  "sourceScheme", "sourcePort", "partitionKey")

_READ = """(() => {
  const origin = location.origin;
  if (!origin || origin === 'null') return null;
  const dump = (s) => {
    const o = {};
    for (let i = 0; i < s.length; i++) { const k = s.key(i); o[k] = s.getItem(k); }
    return o;
  };
  let local = {}, session = {};
  try { local = dump(localStorage); } catch (e) {}
  try { session = dump(sessionStorage); } catch (e) {}
  return {origin, local, session};
})()"""


def cookies(tab: Tab) -> list[dict[str, Any]]:
    """Every cookie of the tab's browser context, as Chrome reports them."""
    return list(tab.call("Storage.getCookies", {}).get("cookies", []))


def cookie_param(cookie: dict[str, Any]) -> dict[str, Any]:
    """A saved cookie as ``Network.setCookies`` takes it: session cookies stay session cookies."""
    out = {k: cookie[k] for k in _COOKIE_PARAMS if cookie.get(k) not in (None, "")}
    if isinstance(out.get("partitionKey"), str):
        out.pop("partitionKey")  # the old string form is not accepted back
    if isinstance(out.get("sourcePort"), int) and not 0 < out["sourcePort"] < 65536:
        out.pop("sourcePort")
    expires = cookie.get("expires")
    if not cookie.get("session") and isinstance(expires, (int, float)) and expires > 0:
        out["expires"] = expires
    return out


def set_cookies(tab: Tab, saved: list[dict[str, Any]]) -> int:
    """Restore saved cookies; returns how many the browser took."""
    params = [cookie_param(c) for c in saved if c.get("name")]
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


def read_storage(tab: Tab) -> dict[str, Any] | None:
    """``{"origin", "local", "session"}`` of the tab's current document; None for an opaque origin."""
    frame = tab.frames.get(tab.main_frame_id or "")
    if frame is None:
        return None
    return evaluate(tab, frame, _READ)


def current_origin(tab: Tab) -> str | None:
    """The origin of the tab's main document (None for about:blank, data: and other opaque ones)."""
    frame = tab.frames.get(tab.main_frame_id or "")
    if frame is None:
        return None
    origin = evaluate(tab, frame, "location.origin")
    return origin if origin and origin != "null" else None


def write_storage(tab: Tab, local: dict[str, str], session: dict[str, str]) -> int:
    """Write items into the current origin's local and session storage; returns how many were written."""
    frame = tab.frames.get(tab.main_frame_id or "")
    if frame is None:
        return 0
    expr = f"""(() => {{
  const data = {json.dumps({"local": local, "session": session})};
  let n = 0;
  for (const [store, items] of [[localStorage, data.local], [sessionStorage, data.session]])
    for (const [k, v] of Object.entries(items || {{}})) {{ store.setItem(k, String(v)); n++; }}
  return n;
}})()"""
    return int(evaluate(tab, frame, expr) or 0)
