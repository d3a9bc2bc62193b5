"""The current origin's web storage (local and session), read and written for saved state.

Every function runs on the tab's worker (``Tab.run``). Storage is read and written in the page,
for the origin the tab is on, from our isolated world (which shares the page's storage). The
browser's cookies, the other half of a saved state, are in ``cdp.cookies``.
"""
from __future__ import annotations

import json
from typing import Any

from .page import evaluate
from .tab import Tab

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
