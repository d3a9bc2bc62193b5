"""Reading one element or the page without acting on it: HTML, computed styles, value, attributes,
box, visibility; PDFs; cookies; answering dialogs; and the tab's load state.

Everything here runs on the tab's worker, except ``page_state``, which reads only what the tab's
event handlers already recorded (no CDP call), so it answers while a dialog blocks the page or
the worker is busy.
"""
from __future__ import annotations

import base64
from typing import Any

from . import selectors
from .errors import ActionError, CDPError
from .snapshot import Element, call_on, evaluate, world
from .tab import Tab

# --- one element ---------------------------------------------------------------------------------
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
    main = tab.frames[tab.main_frame_id or ""]
    return evaluate(tab, main, "document.documentElement ? document.documentElement.outerHTML : ''") or ""


def styles(tab: Tab, selector: str = "", prop: str = "") -> dict[str, Any]:
    """The computed style of the element (or of the document's root element), keys sorted;
    only ``{prop: value}`` when ``prop`` is given."""
    if selector:
        raw = call_on(tab, element(tab, selector), _STYLES, prop)
    else:
        main = tab.frames[tab.main_frame_id or ""]
        el = evaluate(tab, main, "document.documentElement", by_value=False)
        raw = call_on(tab, Element(el["objectId"], main.frame_id, main.session_id, world(tab, main)), _STYLES, prop)
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


# --- the page ------------------------------------------------------------------------------------
class BadPrintOptions(ValueError):
    """Chrome rejected the PDF options (page ranges past the end, margins that leave no room)."""

    def __init__(self, message: str, field: str = "") -> None:
        super().__init__(message)
        self.field = field


def pdf(tab: Tab, options: dict[str, Any]) -> bytes:
    """``Page.printToPDF`` with the given options (backgrounds always printed)."""
    try:
        res = tab.call("Page.printToPDF", {**options, "printBackground": True})
    except CDPError as exc:
        msg = exc.cdp_message.lower()
        if "page range" in msg:
            raise BadPrintOptions(f"pageRanges: {exc.cdp_message}", "pageRanges") from None
        if "print parameters" in msg:
            raise BadPrintOptions(exc.cdp_message) from None
        raise
    return base64.b64decode(res["data"])


def page_state(tab: Tab) -> dict[str, Any]:
    """The tab's load state, dialog and actionability, from tracked state only (no CDP call).

    Safe to call from any thread: it reads what the worker's event handlers recorded.
    """
    main = tab.frames.get(tab.main_frame_id or "")
    life = main.lifecycle if main is not None else set()
    if "load" in life:
        ready = "complete"
    elif "DOMContentLoaded" in life:
        ready = "interactive"
    else:
        ready = "loading"
    # The latest milestone the main document reached, in the words waitFor uses.
    state = ("networkidle" if "networkIdle" in life and ready == "complete" else
             {"complete": "load", "interactive": "domcontentloaded", "loading": "loading"}[ready])
    navigating = ready == "loading"
    dialog = tab.dialog
    out: dict[str, Any] = {"tabId": tab.id, "url": tab.url, "title": tab.title, "dialogPresent": dialog is not None}
    if dialog is not None:
        out["dialog"] = dialog.to_dict()
    out["load"] = {"readyState": ready, "navigationInProgress": navigating, "state": state}
    out["actionability"] = "blocked" if dialog is not None else ("ready" if ready == "complete" else "caution")
    return out


# --- dialogs -------------------------------------------------------------------------------------
class NoDialog(Exception):
    """No dialog is open on the tab."""


def answer_dialog(tab: Tab, accept: bool, text: str = "") -> dict[str, Any]:
    """Accept or dismiss the tab's open dialog (``text`` answers a prompt); NoDialog when none."""
    dialog = tab.dialog
    if dialog is None:
        raise NoDialog(f"no dialog open on tab {tab.id}")
    params: dict[str, Any] = {"accept": accept}
    if text:
        params["promptText"] = text
    # The dialog belongs to the session whose page opened it: the tab's own, or an out-of-process
    # iframe's; the tab does not record which, so the others are tried after its own.
    sessions = [tab.session_id] + sorted({f.session_id for f in tab.frames.values()} - {tab.session_id})
    for i, session in enumerate(sessions):
        try:
            tab.call("Page.handleJavaScriptDialog", params, session_id=session)
            break
        except CDPError:
            if i == len(sessions) - 1:
                if tab.dialog is None:  # it closed meanwhile (the page navigated away)
                    raise NoDialog(f"no dialog open on tab {tab.id}") from None
                raise
    dialog.handled = "accepted" if accept else "dismissed"
    # The closing event clears tab.dialog; wait for it so the next request sees an unblocked page.
    tab.wait_for(lambda: tab.dialog is not dialog, 5.0)
    return {"type": dialog.type, "message": dialog.message, "handled": True}


# --- cookies -------------------------------------------------------------------------------------
SAME_SITE = {"strict": "Strict", "lax": "Lax", "none": "None"}


def get_cookies(tab: Tab, url: str, name: str = "") -> list[dict[str, Any]]:
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


def set_cookies(tab: Tab, url: str, cookies: list[dict[str, Any]]) -> int:
    """Set each cookie for ``url``; returns how many were set (nameless or empty ones are skipped)."""
    ok = 0
    for c in cookies:
        if not c.get("name") or not c.get("value"):
            continue
        params: dict[str, Any] = {"name": c["name"], "value": c["value"], "url": url}
        for key in ("domain", "path"):
            if c.get(key):
                params[key] = c[key]
        for key in ("secure", "httpOnly"):
            if c.get(key):
                params[key] = True
        if c.get("sameSite"):
            same_site = SAME_SITE.get(str(c["sameSite"]).lower())
            if same_site is None:
                continue  # not a value Chrome knows: counted as failed, never silently changed
            params["sameSite"] = same_site
        if (c.get("expires") or 0) > 0:
            params["expires"] = c["expires"]
        try:
            res = tab.call("Network.setCookie", params)
        except CDPError:
            continue  # Chrome refused it (a domain that does not match the url, ...): counted as failed
        if res.get("success", True):
            ok += 1
    return ok
