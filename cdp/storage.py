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


# --- one origin's storage, item by item (GET|POST|DELETE /storage) -------------------------------
# Each script answers null on an opaque origin (about:blank, data:): such a page has no storage
# of its own to show or change; {denied, origin} when the page may not use its storage.
_ITEMS = """((kinds, key) => {
  const origin = location.origin;
  if (!origin || origin === 'null') return null;
  const out = {local: [], session: [], origin};
  const stores = {local: () => localStorage, session: () => sessionStorage};
  for (const kind of kinds) {
    const s = stores[kind]();
    if (key !== null) {
      const v = s.getItem(key);
      if (v !== null) out[kind].push({key, value: v});
      continue;
    }
    for (let i = 0; i < s.length; i++) { const k = s.key(i); out[kind].push({key: k, value: s.getItem(k)}); }
  }
  return out;
})"""

_SET = """((kind, key, value) => {
  const origin = location.origin;
  if (!origin || origin === 'null') return null;
  (kind === 'local' ? localStorage : sessionStorage).setItem(key, value);
  return {success: true, origin};
})"""

_REMOVE = """((kind, key) => {
  const origin = location.origin;
  if (!origin || origin === 'null') return null;
  const stores = kind === 'all' ? [localStorage, sessionStorage] : [kind === 'local' ? localStorage : sessionStorage];
  if (key !== null) {
    stores[0].removeItem(key);
    return {success: true, action: 'removeItem', key, origin};
  }
  for (const s of stores) s.clear();
  const done = {success: true, action: 'clear', origin};
  return kind === 'all' ? {...done, type: 'all'} : done;
})"""


def _call(tab: Tab, script: str, *args: Any) -> dict[str, Any] | None:
    frame = tab.frames.get(tab.main_frame_id or "")
    if frame is None:
        return None
    # A page may be denied its storage (a sandboxed document, storage turned off): say so, not fail.
    expr = (f"(() => {{ try {{ return {script}(...{json.dumps(list(args))}); }} "
            f"catch (e) {{ return {{denied: String(e && e.message || e), origin: location.origin}}; }} }})()")
    return evaluate(tab, frame, expr)


def storage_items(tab: Tab, kind: str = "", key: str = "") -> dict[str, Any] | None:
    """``{"local": [{key, value}], "session": [...], "origin"}`` of the current origin: both kinds
    unless ``kind`` is "local" or "session", only ``key`` when given. None on an opaque origin."""
    kinds = [kind] if kind else ["local", "session"]
    return _call(tab, _ITEMS, kinds, key or None)


def set_item(tab: Tab, kind: str, key: str, value: str) -> dict[str, Any] | None:
    """Set one item of the current origin's ``kind`` storage: ``{"success", "origin"}`` (None: opaque origin)."""
    return _call(tab, _SET, kind, key, value)


def remove_items(tab: Tab, kind: str, key: str = "") -> dict[str, Any] | None:
    """Remove ``key`` from the ``kind`` storage, or clear it ("all": both kinds); what was done, or
    None on an opaque origin."""
    return _call(tab, _REMOVE, kind, key or None)
