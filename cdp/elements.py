"""Reading one element without acting on it: HTML, computed styles, value, attributes, states, box.

Everything here runs on the tab's worker. Elements are named by a unified selector
(``cdp.selectors``); boxes are in the main frame's viewport, iframes' offsets included.
"""
from __future__ import annotations

from typing import Any

from . import frame_scope, selectors
from .errors import ActionError
from .page import Element, call_on, evaluate, world
from .tab import Tab

_STYLES = """function(prop) {
  const style = this.ownerDocument.defaultView.getComputedStyle(this);
  if (prop) {
    // A property the browser does not know is null (not ""), so a typo is not mistaken for "unset".
    const known = prop.startsWith('--') || prop in style;
    return {[prop]: known ? style.getPropertyValue(prop) : null};
  }
  const out = {};
  for (const name of style) out[name] = style.getPropertyValue(name);
  return out;
}"""

_VALUE = "function() { return this.value !== undefined && this.value !== null ? String(this.value) : null; }"

_ATTR = "function(name) { return this.getAttribute(name); }"

_RECT = """function() {
  const r = this.getBoundingClientRect();
  return {x: r.x, y: r.y, width: r.width, height: r.height};
}"""

# The content box's top-left of an <iframe> in its own frame's viewport: where the child frame's
# viewport starts.
_FRAME_ORIGIN = """function() {
  const r = this.getBoundingClientRect();
  const s = this.ownerDocument.defaultView.getComputedStyle(this);
  return [r.left + this.clientLeft + parseFloat(s.paddingLeft || '0'),
          r.top + this.clientTop + parseFloat(s.paddingTop || '0')];
}"""

_VISIBLE = """function() {
  const style = this.ownerDocument.defaultView.getComputedStyle(this);
  if (style.display === 'none' || style.visibility === 'hidden' || style.visibility === 'collapse' ||
      style.opacity === '0') return false;
  // Hidden by an ancestor (display: none, content-visibility, a closed <details>) as Chrome sees it.
  if (this.checkVisibility && !this.checkVisibility({opacityProperty: true, visibilityProperty: true})) return false;
  const r = this.getBoundingClientRect();
  return r.width > 0 && r.height > 0;
}"""

_ENABLED = """function() {
  if (this.matches(':disabled')) return false;
  // aria-disabled on the element or an ancestor disables custom widgets as assistive tech sees them.
  for (let n = this; n && n.nodeType === 1; n = n.parentElement || (n.getRootNode() && n.getRootNode().host)) {
    if (n.getAttribute('aria-disabled') === 'true') return false;
  }
  return true;
}"""

_CHECKED = """function() {
  if (this.tagName === 'INPUT' && (this.type === 'checkbox' || this.type === 'radio')) return this.checked;
  if (this.tagName === 'OPTION') return this.selected;
  const aria = this.getAttribute('aria-checked') ?? this.getAttribute('aria-pressed') ??
               this.getAttribute('aria-selected');
  return aria === 'true' || aria === 'mixed';
}"""

_SCROLL_IF_NEEDED = """function() {
  const r = this.getBoundingClientRect(), w = this.ownerDocument.defaultView;
  if (r.top < 0 || r.left < 0 || r.bottom > w.innerHeight || r.right > w.innerWidth) {
    this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  }
}"""


def element(tab: Tab, selector: str) -> Element:
    """The element a unified selector names (NoSuchElement, StaleRef, UnknownRef otherwise)."""
    return selectors.resolve(tab, selector)


def html(tab: Tab, selector: str = "") -> str:
    """The element's outerHTML, or the whole document's."""
    if selector:
        return call_on(tab, element(tab, selector), "function() { return this.outerHTML; }") or ""
    doc = frame_scope.document_frame(tab)  # the scoped frame's document (POST /frame), else the page's
    return evaluate(tab, doc, "document.documentElement ? document.documentElement.outerHTML : ''") or ""


def styles(tab: Tab, selector: str = "", prop: str = "") -> dict[str, Any]:
    """The computed style of the element (or of the document's root element), keys sorted;
    only ``{prop: value}`` when ``prop`` is given."""
    if selector:
        raw = call_on(tab, element(tab, selector), _STYLES, prop)
    else:
        doc = frame_scope.document_frame(tab)
        el = evaluate(tab, doc, "document.documentElement", by_value=False)
        raw = call_on(tab, Element(el["objectId"], doc.frame_id, doc.session_id, world(tab, doc)), _STYLES, prop)
    return {k: raw[k] for k in sorted(raw)}


def value(tab: Tab, selector: str) -> str | None:
    """The element's ``value`` as a string; None when it has none (not a form control)."""
    return call_on(tab, element(tab, selector), _VALUE)


def attr(tab: Tab, selector: str, name: str) -> str | None:
    """An attribute of the element; None when it is absent."""
    return call_on(tab, element(tab, selector), _ATTR, name)


def visible(tab: Tab, selector: str) -> bool:
    """Whether CSS renders the element with a non-empty box (it may still be scrolled away)."""
    return bool(call_on(tab, element(tab, selector), _VISIBLE))


def enabled(tab: Tab, selector: str) -> bool:
    """False for a disabled control (itself or by its fieldset) or an aria-disabled widget."""
    return bool(call_on(tab, element(tab, selector), _ENABLED))


def checked(tab: Tab, selector: str) -> bool:
    """A checkbox's or radio's state, an option's selection, or aria-checked/pressed/selected."""
    return bool(call_on(tab, element(tab, selector), _CHECKED))


def frame_offset(tab: Tab, frame_id: str) -> tuple[float, float]:
    """Where the viewport of ``frame_id`` starts in the main frame's viewport (CSS px)."""
    x = y = 0.0
    frame = tab.frames.get(frame_id)
    while frame is not None and frame.parent_id:
        parent = tab.frames.get(frame.parent_id)
        if parent is None:
            break
        owner = tab.call("DOM.getFrameOwner", {"frameId": frame.frame_id}, session_id=parent.session_id)
        obj = tab.call("DOM.resolveNode", {"backendNodeId": owner["backendNodeId"],
                                           "executionContextId": world(tab, parent)},
                       session_id=parent.session_id)["object"]
        owner_el = Element(obj["objectId"], parent.frame_id, parent.session_id, world(tab, parent))
        dx, dy = call_on(tab, owner_el, _FRAME_ORIGIN)
        x, y = x + dx, y + dy
        frame = parent
    return x, y


def element_box(tab: Tab, el: Element) -> dict[str, float]:
    """The element's border box in the main frame's viewport (CSS px), frames' offsets included."""
    r = call_on(tab, el, _RECT)
    dx, dy = frame_offset(tab, el.frame_id) if el.frame_id != tab.main_frame_id else (0.0, 0.0)
    x, y, w, h = r["x"] + dx, r["y"] + dy, r["width"], r["height"]
    return {"x": x, "y": y, "width": w, "height": h, "top": y, "right": x + w, "bottom": y + h, "left": x}


def box(tab: Tab, selector: str) -> dict[str, float]:
    """The bounding box of the element a selector names (see ``element_box``)."""
    return element_box(tab, element(tab, selector))


def element_clip(tab: Tab, selector: str) -> tuple[dict[str, float], bool]:
    """A screenshot clip of the element in document coordinates, scrolled into view first, and
    whether the capture must reach beyond the viewport (the element is taller or wider than it)."""
    el = element(tab, selector)
    call_on(tab, el, _SCROLL_IF_NEEDED)
    b = element_box(tab, el)
    if b["width"] < 1 or b["height"] < 1:
        raise ActionError("the element has no box to capture (hidden or zero-size)")
    metrics = tab.call("Page.getLayoutMetrics")
    vp = metrics.get("cssLayoutViewport") or metrics.get("layoutViewport") or {}
    beyond = (b["left"] < 0 or b["top"] < 0 or b["right"] > vp.get("clientWidth", 0)
              or b["bottom"] > vp.get("clientHeight", 0))
    clip = {"x": b["x"] + vp.get("pageX", 0), "y": b["y"] + vp.get("pageY", 0),
            "width": b["width"], "height": b["height"]}
    return clip, beyond
