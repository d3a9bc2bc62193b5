"""Numbered boxes over a page's interactive elements: for one screenshot, or left on the page.

The boxes are labelled with each element's ref, so a picture and the refs an agent acts on
line up. The overlay lives in the page's DOM (it must be painted), drawn by a script in the
page's main world: the persistent overlay's labels are clickable for people, and what a click
copies must be readable by the page's own scripts (``window.__ptLastCopied``) and clipboard.
Everything here runs on the tab's worker.
"""
from __future__ import annotations

import json
from typing import Any

from . import selectors, snapshot
from .errors import CDPError
from .node_boxes import boxes
from .tab import Tab

SHOT_OVERLAY = "__pinchtab_annotations__"  # drawn for one screenshot, then removed
PAGE_OVERLAY = "__pinchtab_annotations_interactive__"  # GET /annotate: stays until cleared or navigated

# (id, items, clickable): items are [ref, role, name, css, xpath, x, y, w, h] in viewport px.
# Each label is a <div> whose text is its ref alone, as the original's: its clients find a label by
# that (``div`` elements whose text is the ref) and dispatch the click on it.
_DRAW = """(id, items, clickable) => {
  const old = document.getElementById(id);
  if (old) old.remove();
  if (clickable) window.__ptLastCopied = null;  // what an older overlay's label copied is stale now
  if (!items.length) return 0;
  const sx = window.scrollX, sy = window.scrollY;
  const root = document.createElement('div');
  root.id = id;
  root.setAttribute('aria-hidden', 'true');
  root.style.cssText = 'position:absolute;left:0;top:0;width:0;height:0;overflow:visible;' +
    'z-index:2147483647;pointer-events:none;margin:0;padding:0;border:0';
  for (const [ref, role, name, css, xpath, x, y, w, h] of items) {
    const box = document.createElement('div');
    box.style.cssText = `position:absolute;box-sizing:border-box;left:${x + sx}px;top:${y + sy}px;` +
      `width:${w}px;height:${h}px;border:2px solid #ff1f6b;background:rgba(255,31,107,0.08);pointer-events:none`;
    const label = document.createElement('div');
    label.textContent = ref;
    label.title = `${role} ${name}`.trim();
    label.style.cssText = 'position:absolute;left:-2px;top:-16px;font:bold 11px/14px monospace;color:#fff;' +
      'background:#ff1f6b;padding:0 3px;border-radius:2px;white-space:nowrap;' +
      (clickable ? 'pointer-events:auto;cursor:copy' : 'pointer-events:none');
    if (clickable) {
      label.addEventListener('click', (ev) => {
        ev.preventDefault();
        ev.stopPropagation();
        // The page as it is when the label is clicked (an app may have moved on since the overlay).
        const page = document.title ? `${document.title} (${location.href})` : location.href;
        const text = `Page: ${page}\\nElement: ${ref}\\nRole: ${role}\\nName: ${name}\\nCSS: ${css}\\nXPath: ${xpath}`;
        window.__ptLastCopied = text;
        try { navigator.clipboard.writeText(text).catch(() => {}); } catch (e) {}
      }, true);
    }
    box.appendChild(label);
    root.appendChild(box);
  }
  document.documentElement.appendChild(root);  // not the body: a positioned body would move the boxes
  return items.length;
}"""

_REMOVE = "(id) => { const el = document.getElementById(id); if (el) el.remove(); return !!el; }"


def annotations(tab: Tab, selector: str = "") -> list[dict[str, Any]]:
    """The page's visible interactive elements (those inside ``selector`` when given), in document
    order: ``{ref, role, name, tag, box: {x, y, w, h}, css, xpath}``, boxes in viewport CSS px.

    Takes an interactive snapshot, so the refs are issued (and kept) as ``/snapshot`` would.
    """
    root = selectors.resolve(tab, selector) if selector else None
    nodes = snapshot.take(tab, filter="interactive", root=root)
    places = boxes(tab, nodes, paths=True)
    out = []
    for node in nodes:
        place = places.get(node["ref"])
        if place is None or not place["visible"]:
            continue
        b = place["box"]
        out.append({"ref": node["ref"], "role": node["role"], "name": node.get("name", ""),
                    "tag": node.get("tag", ""), "box": {"x": b["x"], "y": b["y"], "w": b["width"], "h": b["height"]},
                    "css": place["css"], "xpath": place["xpath"]})
    return out


def draw(tab: Tab, items: list[dict[str, Any]], overlay_id: str, *, clickable: bool = False) -> int:
    """Draw ``items`` (from :func:`annotations`) as the overlay ``overlay_id``, replacing an older one;
    none removes it. Returns how many boxes were drawn."""
    rows = [[i["ref"], i["role"], i["name"], i["css"], i["xpath"], i["box"]["x"], i["box"]["y"],
             i["box"]["w"], i["box"]["h"]] for i in items]
    args = ", ".join(json.dumps(a) for a in (overlay_id, rows, clickable))
    res = tab.call("Runtime.evaluate", {"expression": f"({_DRAW})({args})", "returnByValue": True})
    if "exceptionDetails" in res:
        raise CDPError("Runtime.evaluate", "the annotation overlay could not be drawn")
    return int((res.get("result") or {}).get("value") or 0)


def remove(tab: Tab, overlay_id: str) -> bool:
    """Take the overlay off the page; whether there was one."""
    try:
        res = tab.call("Runtime.evaluate", {"expression": f"({_REMOVE})({json.dumps(overlay_id)})",
                                            "returnByValue": True})
    except CDPError:
        return False  # the document went away, and the overlay with it
    return bool((res.get("result") or {}).get("value"))


def public(items: list[dict[str, Any]], dx: float = 0.0, dy: float = 0.0) -> list[dict[str, Any]]:
    """The annotations as answered: ``{ref, role, name, tag, box}``, boxes moved by (-dx, -dy)
    (into a clip's or the document's coordinates)."""
    return [{"ref": i["ref"], "role": i["role"], "name": i["name"], "tag": i["tag"],
             "box": {"x": round(i["box"]["x"] - dx, 2), "y": round(i["box"]["y"] - dy, 2),
                     "w": i["box"]["w"], "h": i["box"]["h"]}} for i in items]
