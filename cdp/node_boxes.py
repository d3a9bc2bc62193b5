"""Where the nodes of a snapshot are on screen: one script call per frame, never one per node.

Boxes are CSS px in the main frame's viewport (an iframe's offset added), as ``elements.element_box``
gives for one element; ``visible`` says CSS renders the element with a non-empty box.
"""
from __future__ import annotations

import json
from typing import Any

from .elements import frame_offset
from .errors import CDPError
from .page import evaluate
from .tab import Tab

# For each ref: [x, y, width, height, visible, css, xpath] of its element (a text node's parent),
# or null for a node that is gone or is the document itself. The CSS and XPath paths serve the
# annotation overlay, which hands them to people.
_BOXES = """(refs, paths) => refs.map((ref) => {
  let n = globalThis.__pinchtab.resolve(ref);
  if (n && n.nodeType === 3) n = n.parentElement;
  if (!n || n.nodeType !== 1) return null;
  const r = n.getBoundingClientRect(), s = n.ownerDocument.defaultView.getComputedStyle(n);
  const visible = r.width > 0 && r.height > 0 && s.display !== 'none' && s.visibility !== 'hidden' &&
    s.visibility !== 'collapse' && s.opacity !== '0';
  const out = [r.x, r.y, r.width, r.height, visible];
  if (paths) {
    const css = [], xp = [];
    for (let e = n; e && e.nodeType === 1; e = e.parentElement) {
      const tag = e.localName;
      if (e.id && /^[A-Za-z][\\w-]*$/.test(e.id)) { css.unshift('#' + e.id); xp.unshift(`//*[@id="${e.id}"]`); break; }
      const same = e.parentElement ? [...e.parentElement.children].filter((c) => c.localName === tag) : [e];
      const i = same.indexOf(e) + 1;
      css.unshift(same.length > 1 ? `${tag}:nth-of-type(${i})` : tag);
      xp.unshift(`${tag}[${i}]`);
    }
    out.push(css.join(' > '), xp[0] && xp[0].startsWith('//') ? xp.join('/') : '/' + xp.join('/'));
  }
  return out;
})"""


def boxes(tab: Tab, nodes: list[dict[str, Any]], *, paths: bool = False) -> dict[str, dict[str, Any]]:
    """``ref -> {"box": {x, y, width, height}, "visible": bool[, "css", "xpath"]}`` for the nodes
    that are elements in the page now (the document's own node and gone ones are left out)."""
    by_frame: dict[str, list[str]] = {}
    main = tab.main_frame_id or ""
    for node in nodes:
        by_frame.setdefault(node.get("frameId") or main, []).append(node["ref"])
    out: dict[str, dict[str, Any]] = {}
    for frame_id, refs in by_frame.items():
        frame = tab.frames.get(frame_id)
        if frame is None:
            continue
        try:
            rows = evaluate(tab, frame, f"({_BOXES})({json.dumps(refs)}, {json.dumps(paths)})")
            dx, dy = frame_offset(tab, frame_id) if frame_id != main else (0.0, 0.0)
        except CDPError:
            continue  # a frame that navigated away meanwhile: its nodes have no place on screen
        for ref, row in zip(refs, rows or [], strict=False):
            if row is None:
                continue
            entry: dict[str, Any] = {"box": {"x": round(row[0] + dx, 2), "y": round(row[1] + dy, 2),
                                             "width": round(row[2], 2), "height": round(row[3], 2)},
                                     "visible": bool(row[4])}
            if paths:
                entry["css"], entry["xpath"] = row[5], row[6]
            out[ref] = entry
    return out
