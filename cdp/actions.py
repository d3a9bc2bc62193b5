"""Actions on a tab: click, type, fill, press, hover, focus, select, scroll, check, uncheck.

Each runs on the tab's worker. Pointer actions scroll the element into view, check that it is
the top-most element at its centre and send real input events there; when something covers it
(or it has no box) they fall back to the DOM (``el.click()``), as the original does.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from . import keys
from .errors import ActionError, CDPError, NoSuchElement
from .snapshot import REF_RE, Element, call_on, evaluate, resolve_ref, world
from .tab import Tab

INSERT_TEXT_ABOVE = 64  # longer texts: first and last keys typed, the middle inserted at once


@dataclass
class Target:
    ref: str = ""
    selector: str = ""
    node_id: int | None = None
    x: float | None = None
    y: float | None = None

    @property
    def has_element(self) -> bool:
        return bool(self.ref or self.selector or self.node_id is not None)

    @property
    def has_point(self) -> bool:
        return self.x is not None and self.y is not None


def find(tab: Tab, target: Target) -> Element:
    """The element a target names. Raises UnknownRef, StaleRef or NoSuchElement."""
    if target.ref or (target.selector and REF_RE.match(target.selector)):
        return resolve_ref(tab, target.ref or target.selector)
    main = tab.frames[tab.main_frame_id or ""]
    if target.node_id is not None:
        try:
            obj = tab.call("DOM.resolveNode", {"backendNodeId": target.node_id,
                                               "executionContextId": world(tab, main)})["object"]
        except CDPError:
            raise NoSuchElement(f"no node with nodeId {target.node_id}") from None
        return Element(obj["objectId"], main.frame_id, main.session_id, world(tab, main))
    sel = target.selector
    if sel.startswith("css:"):
        sel = sel[4:]
    try:
        obj = evaluate(tab, main, f"globalThis.__pinchtab.query({json.dumps(sel)})", by_value=False)
    except CDPError as exc:
        raise NoSuchElement(f"css selector {sel!r}: {exc.cdp_message}") from None
    if obj.get("subtype") == "null" or "objectId" not in obj:
        raise NoSuchElement(f"css selector {sel!r} matches no element in the page")
    return Element(obj["objectId"], main.frame_id, main.session_id, world(tab, main))


# --- pointer ---------------------------------------------------------------------------------
_PREPARE = """function() {
  // Scroll into view only when needed, then say whether the centre point hits this element.
  const r0 = this.getBoundingClientRect();
  const vw = this.ownerDocument.defaultView.innerWidth, vh = this.ownerDocument.defaultView.innerHeight;
  if (r0.top < 0 || r0.left < 0 || r0.bottom > vh || r0.right > vw) {
    this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  }
  const r = this.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return {hit: false, reason: 'no box'};
  const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
  let hit = this.ownerDocument.elementFromPoint(cx, cy);
  while (hit && hit.shadowRoot) {  // follow into open shadow roots
    const inner = hit.shadowRoot.elementFromPoint(cx, cy);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  const inside = (n) => { for (; n; n = n.parentNode || n.host) if (n === this) return true; return false; };
  let ok = !!hit && (inside(hit) || (hit.control === this) || (this.labels && [...this.labels].some(l => l === hit || l.contains(hit))));
  return {hit: ok, reason: ok ? '' : 'covered by ' + (hit ? hit.tagName.toLowerCase() : 'nothing')};
}"""


def point_of(tab: Tab, el: Element) -> tuple[float, float] | None:
    """The element's centre in viewport coordinates if a pointer there would reach it, else None."""
    prep = call_on(tab, el, _PREPARE)
    if not prep.get("hit"):
        return None
    quads = tab.call("DOM.getContentQuads", {"objectId": el.object_id}, session_id=el.session_id).get("quads") or []
    for q in quads:
        xs, ys = q[0::2], q[1::2]
        if max(xs) - min(xs) >= 1 and max(ys) - min(ys) >= 1:
            return sum(xs) / 4, sum(ys) / 4
    return None


def mouse_click(tab: Tab, x: float, y: float, *, button: str = "left", count: int = 1, modifiers: int = 0) -> None:
    """Move, press and release at (x, y), pipelined; a dialog opened by the click ends the wait."""
    base = {"x": x, "y": y, "modifiers": modifiers}
    tab.send("Input.dispatchMouseEvent", {"type": "mouseMoved", **base})
    last = None
    for i in range(1, count + 1):
        tab.send("Input.dispatchMouseEvent", {"type": "mousePressed", "button": button, "clickCount": i, **base})
        last = tab.send("Input.dispatchMouseEvent", {"type": "mouseReleased", "button": button, "clickCount": i, **base})
    tab.wait_result(last, "Input.dispatchMouseEvent", watch_dialog=True)  # type: ignore[arg-type]


def click(tab: Tab, target: Target, *, count: int = 1, button: str = "left", modifiers: int = 0) -> dict[str, Any]:
    if target.has_point and not target.has_element:
        mouse_click(tab, float(target.x), float(target.y), button=button, count=count, modifiers=modifiers)  # type: ignore[arg-type]
        return {"clicked": True, "x": target.x, "y": target.y}
    el = find(tab, target)
    pt = point_of(tab, el)
    if pt is None:
        # Covered or boxless (a styled checkbox, an element under an overlay): click through the DOM.
        call_on(tab, el, "function(n){ for (let i = 0; i < n; i++) this.click(); }", count, watch_dialog=True)
        return {"clicked": True, "method": "dom"}
    mouse_click(tab, pt[0], pt[1], button=button, count=count, modifiers=modifiers)
    return {"clicked": True}


def hover(tab: Tab, target: Target) -> dict[str, Any]:
    if target.has_point and not target.has_element:
        x, y = float(target.x), float(target.y)  # type: ignore[arg-type]
    else:
        el = find(tab, target)
        pt = point_of(tab, el)
        if pt is None:
            raise ActionError("element has no visible point to hover (covered, hidden or zero-size)")
        x, y = pt
    tab.call("Input.dispatchMouseEvent", {"type": "mouseMoved", "x": x, "y": y})
    return {"hovered": True}


# --- keyboard --------------------------------------------------------------------------------
def focus_el(tab: Tab, el: Element) -> None:
    ok = call_on(tab, el, "function(){ this.focus(); const a = (r) => { let e = r.activeElement; "
                          "while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement; return e; };"
                          " return a(this.ownerDocument) === this || this.contains(a(this.ownerDocument)); }")
    if not ok:
        raise ActionError("element cannot take focus")


def key_events(key: keys.Key, modifiers: int = 0, *, with_text: bool = True) -> list[dict[str, Any]]:
    down: dict[str, Any] = {"type": "keyDown" if (key.text and with_text and not modifiers & 6) else "rawKeyDown",
                            "key": key.key, "code": key.code, "windowsVirtualKeyCode": key.key_code,
                            "modifiers": modifiers}
    if down["type"] == "keyDown":
        down["text"] = down["unmodifiedText"] = key.text
    if modifiers & 6 and key.key.lower() in keys.EDIT_COMMANDS:
        down["commands"] = [keys.EDIT_COMMANDS[key.key.lower()]]
    up = {"type": "keyUp", "key": key.key, "code": key.code, "windowsVirtualKeyCode": key.key_code,
          "modifiers": modifiers}
    return [down, up]


def send_keys(tab: Tab, events: list[dict[str, Any]]) -> None:
    """Send key events pipelined and wait for the last (a dialog opened by a key ends the wait)."""
    last = None
    for ev in events:
        last = tab.send("Input.dispatchKeyEvent", ev)
    if last is not None:
        tab.wait_result(last, "Input.dispatchKeyEvent", watch_dialog=True)


def type_text(tab: Tab, text: str) -> None:
    """Type ``text`` at the focus as key events (long texts: the middle is inserted at once)."""
    chars = list(text)
    if len(chars) > INSERT_TEXT_ABOVE:
        head, middle, tail = chars[:5], "".join(chars[5:-5]), chars[-5:]
        send_keys(tab, [e for ch in head for e in key_events(keys.char_key(ch))])
        tab.call("Input.insertText", {"text": middle})
        send_keys(tab, [e for ch in tail for e in key_events(keys.char_key(ch))])
    else:
        send_keys(tab, [e for ch in chars for e in key_events(keys.char_key(ch))])


def type_into(tab: Tab, target: Target, text: str) -> dict[str, Any]:
    if target.has_element:
        focus_el(tab, find(tab, target))
    type_text(tab, text)
    return {"typed": True, "len": len(text)}


def press(tab: Tab, target: Target, key: str, modifiers: int = 0) -> dict[str, Any]:
    try:
        k, bits = keys.parse_combo(key)
    except ValueError as exc:
        raise ActionError(str(exc)) from None
    if target.has_element:
        focus_el(tab, find(tab, target))
    send_keys(tab, key_events(k, bits | modifiers))
    return {"pressed": key}


_FILL = """function(v) {
  // The prototype's own setter, so frameworks that track value on the instance (React) see a change.
  const textual = (this instanceof HTMLInputElement && !/^(checkbox|radio|file|submit|reset|button|image|range|color)$/.test(this.type))
                  || this instanceof HTMLTextAreaElement;
  if (!textual && !this.isContentEditable) return {error: 'element is not a text field (' + this.tagName.toLowerCase() + ')'};
  this.focus();
  if (this.isContentEditable && !textual) { this.textContent = v; }
  else { Object.getOwnPropertyDescriptor(Object.getPrototypeOf(this), 'value').set.call(this, v); }
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {value: textual ? this.value : this.textContent};
}"""


def fill(tab: Tab, target: Target, text: str) -> dict[str, Any]:
    el = find(tab, target)
    res = call_on(tab, el, _FILL, text, watch_dialog=True)
    if res.get("error"):
        raise ActionError(res["error"])
    out: dict[str, Any] = {"filled": True, "len": len(text)}
    if res.get("value") != text:
        out["warning"] = "the field's value differs from the text filled (the page changed it)"
    return out


_SELECT = """function(v) {
  if (!(this instanceof HTMLSelectElement)) return {error: 'element is not a <select>'};
  const opts = [...this.options];
  const o = opts.find(o => o.value === v) || opts.find(o => o.text.trim() === v.trim()) ||
            opts.find(o => o.label.trim().toLowerCase() === v.trim().toLowerCase());
  if (!o) return {error: 'no option with value or text ' + JSON.stringify(v) + '; options: ' +
                          JSON.stringify(opts.slice(0, 20).map(o => o.text.trim()))};
  this.focus();
  o.selected = true;
  this.dispatchEvent(new Event('input', {bubbles: true, composed: true}));
  this.dispatchEvent(new Event('change', {bubbles: true}));
  return {selected: o.value, text: o.text.trim()};
}"""


def select(tab: Tab, target: Target, value: str) -> dict[str, Any]:
    res = call_on(tab, find(tab, target), _SELECT, value, watch_dialog=True)
    if res.get("error"):
        raise ActionError(res["error"])
    return {"selected": res["selected"], "text": res["text"]}


def focus(tab: Tab, target: Target) -> dict[str, Any]:
    focus_el(tab, find(tab, target))
    return {"focused": True}


_CHECKED = "function(){ return ('checked' in this && (this.type === 'checkbox' || this.type === 'radio')) ? this.checked : " \
           "(this.getAttribute('aria-checked') === null ? null : this.getAttribute('aria-checked') === 'true'); }"


def set_checked(tab: Tab, target: Target, want: bool) -> dict[str, Any]:
    el = find(tab, target)
    state = call_on(tab, el, _CHECKED)
    if state is None:
        raise ActionError("element is not a checkbox, radio or switch")
    if state != want:
        pt = point_of(tab, el)
        if pt is not None:
            mouse_click(tab, pt[0], pt[1])
        state = call_on(tab, el, _CHECKED)
        if state != want:  # covered or styled away: the DOM click toggles it
            call_on(tab, el, "function(){ this.click(); }", watch_dialog=True)
            state = call_on(tab, el, _CHECKED)
    if state != want:
        raise ActionError(f"the element stayed {'checked' if state else 'unchecked'}")
    return {"checked": state}


def scroll(tab: Tab, target: Target, *, dx: float = 0, dy: float = 0) -> dict[str, Any]:
    if target.has_element:
        el = find(tab, target)
        call_on(tab, el, "function(){ this.scrollIntoView({block: 'center', inline: 'nearest', behavior: 'instant'}); }")
        pos = evaluate(tab, tab.frames[el.frame_id], "[scrollX, scrollY]")
        return {"scrolled": True, "x": pos[0], "y": pos[1]}
    if target.has_point:
        x, y = float(target.x), float(target.y)  # type: ignore[arg-type]
    else:
        size = evaluate(tab, tab.frames[tab.main_frame_id or ""], "[innerWidth, innerHeight]")
        x, y = size[0] / 2, size[1] / 2
    if not dx and not dy:
        dy = 300
    main = tab.frames[tab.main_frame_id or ""]
    before = evaluate(tab, main, "[scrollX, scrollY]")
    tab.call("Input.dispatchMouseEvent", {"type": "mouseWheel", "x": x, "y": y, "deltaX": dx, "deltaY": dy})
    # The wheel scrolls asynchronously: wait (briefly, bounded) until the page reports the move;
    # at the end of the page nothing moves and the short deadline passes.
    pos = before

    def moved() -> bool:
        nonlocal pos
        pos = evaluate(tab, main, "[scrollX, scrollY]")
        return pos != before

    tab.wait_for(moved, 0.3)
    return {"scrolled": True, "x": pos[0], "y": pos[1], "deltaX": dx, "deltaY": dy}

