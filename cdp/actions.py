"""Actions on a tab: click, type, fill, press, hover, focus, select, scroll, check, uncheck, drag, mouse-*.

Each runs on the tab's worker. Pointer actions scroll the element into view, check that it is
the top-most element at its centre and send real input events there; when something covers it
they refuse (409 naming what is on top) rather than reach something else, unless the click asks
for the DOM (``mode``); a click whose element the page moves away as it arrives is stopped before
the page sees it and aimed again (``cdp.input.press_element``). An element with no box (a
styled-away control) gets ``el.click()``.
"""
from __future__ import annotations

from typing import Any

from . import keys
from .errors import ActionError, CDPError, ElementOccluded
from .input import (
    DOM_CLICK,
    Target,
    centre,
    element_point,
    find,
    focus_el,
    key_events,
    mouse_click,
    mouse_event,
    pointer_point,
    press_element,
    send_keys,
    type_text,
    viewport_point,
)
from .page import call_on, evaluate
from .tab import Tab


def click(tab: Tab, target: Target, *, count: int = 1, button: str = "left", modifiers: int = 0,
          mode: str = "") -> dict[str, Any]:
    """Click the target ``count`` times with input events at its centre.

    A covered element is refused (ElementOccluded names what is on top): input there would reach
    that instead, and a ref must never act on something else. ``mode`` "dom" calls ``el.click()``,
    "dispatch" fires synthetic pointer and mouse events on the element: both reach it whatever
    covers it. An element with no box gets the DOM click, as there is no point to aim at.
    """
    if mode:
        if not target.has_element:
            raise ActionError(f"mode {mode!r} needs an element target: 'ref', 'selector' or 'nodeId'")
        script = DOM_CLICK if mode == "dom" else _DISPATCH_CLICK
        call_on(tab, find(tab, target), script, count, BUTTON_CODES.get(button, 0), modifiers)
        return {"clicked": True, "method": mode}
    if target.has_point and not target.has_element:
        x, y = viewport_point(tab, target)
        mouse_click(tab, x, y, button=button, count=count, modifiers=modifiers)
        return {"clicked": True, "x": x, "y": y}
    if not press_element(tab, target, lambda box: mouse_click(
            tab, *centre(box), button=button, count=count, modifiers=modifiers), count):
        return {"clicked": True, "method": "dom"}
    return {"clicked": True}


BUTTON_CODES = {"left": 0, "middle": 1, "right": 2}  # MouseEvent.button
# What a real click fires, in order, as untrusted events at the element's centre (frameworks that
# listen for pointerdown or mousedown see them; the click's default action still runs).
_DISPATCH_CLICK = """function(n, button, mods) {
  const r = this.getBoundingClientRect(), w = this.ownerDocument.defaultView;
  const bit = [1, 4, 2][button] || 1;
  const base = {bubbles: true, cancelable: true, composed: true, view: w, button: button,
                clientX: r.left + r.width / 2, clientY: r.top + r.height / 2,
                altKey: !!(mods & 1), ctrlKey: !!(mods & 2), metaKey: !!(mods & 4), shiftKey: !!(mods & 8)};
  const ptr = {pointerId: 1, pointerType: 'mouse', isPrimary: true};
  for (let i = 1; i <= n; i++) {
    this.dispatchEvent(new w.PointerEvent('pointerdown', {...base, ...ptr, buttons: bit}));
    this.dispatchEvent(new w.MouseEvent('mousedown', {...base, buttons: bit, detail: i}));
    if (i === 1 && this.focus) this.focus();
    this.dispatchEvent(new w.PointerEvent('pointerup', {...base, ...ptr, buttons: 0}));
    this.dispatchEvent(new w.MouseEvent('mouseup', {...base, buttons: 0, detail: i}));
    this.dispatchEvent(new w.MouseEvent(button === 2 ? 'contextmenu' : (button === 1 ? 'auxclick' : 'click'),
                                        {...base, buttons: 0, detail: i}));
  }
  if (n === 2 && button === 0) this.dispatchEvent(new w.MouseEvent('dblclick', {...base, buttons: 0, detail: 2}));
}"""


def hover(tab: Tab, target: Target) -> dict[str, Any]:
    """Move the pointer onto the target's centre (or its x/y)."""
    x, y = element_point(tab, target)
    tab.wait_result(mouse_event(tab, "mouseMoved", x, y), "Input.dispatchMouseEvent")
    return {"hovered": True}


def mouse_move(tab: Tab, target: Target) -> dict[str, Any]:
    """Move the pointer to the target, or leave it where it is (see ``pointer_point``)."""
    x, y = pointer_point(tab, target)
    tab.wait_result(mouse_event(tab, "mouseMoved", x, y), "Input.dispatchMouseEvent")
    return {"moved": True, "x": x, "y": y}


def mouse_button(tab: Tab, target: Target, down: bool, button: str = "left", modifiers: int = 0) -> dict[str, Any]:
    """Press (``down``) or release a mouse button at the target or where the pointer is."""
    x, y = pointer_point(tab, target)
    kind = "mousePressed" if down else "mouseReleased"
    tab.wait_result(mouse_event(tab, kind, x, y, button=button, clickCount=1, modifiers=modifiers),
                    "Input.dispatchMouseEvent")
    return {"down" if down else "up": True, "x": x, "y": y, "button": button}


def mouse_wheel(tab: Tab, target: Target, dx: float, dy: float) -> dict[str, Any]:
    """Turn the wheel by (dx, dy) at the target or where the pointer is (120 px down when both are 0)."""
    x, y = pointer_point(tab, target)
    if not dx and not dy:
        dy = 120
    wheel(tab, x, y, dx, dy)
    return {"wheel": True, "x": x, "y": y, "deltaX": dx, "deltaY": dy}


WHEEL_SETTLE_S = 0.5
# In our world of the page: a promise that the next wheel event has been handled and two frames
# drawn since. A wheel scrolls on the compositor, after dispatchMouseEvent has answered; by the
# second frame the page sees the new scroll offsets.
_WHEEL_ARM = ("(globalThis.__ptWheel = new Promise(done => addEventListener('wheel', () => requestAnimationFrame("
              "() => requestAnimationFrame(() => done(true))), {once: true, capture: true, passive: true})), true)")
_WHEEL_LANDED = ("Promise.race([globalThis.__ptWheel, "
                 f"new Promise(r => setTimeout(() => r(false), {WHEEL_SETTLE_S * 1000:.0f}))])")


def wheel(tab: Tab, x: float, y: float, dx: float, dy: float) -> None:
    """Turn the wheel at (x, y); return once the scroll it causes is applied, so the next step (or
    read) sees it. Over another site's frame the page cannot see the wheel: WHEEL_SETTLE_S bounds it."""
    main = tab.frames[tab.main_frame_id or ""]
    evaluate(tab, main, _WHEEL_ARM)
    tab.wait_result(mouse_event(tab, "mouseWheel", x, y, deltaX=dx, deltaY=dy), "Input.dispatchMouseEvent")
    evaluate(tab, main, _WHEEL_LANDED, await_promise=True, timeout_s=WHEEL_SETTLE_S + 5)


DRAG_START_S = 2.0  # how long a draggable element gets to start its HTML5 drag


def drag(tab: Tab, target: Target, dx: float, dy: float) -> dict[str, Any]:
    """Press at the element's centre, move in steps of about 20 px, release at the offset.

    Each event is awaited before the next, so the page sees a person's order of events. An HTML5
    drag (``draggable`` content) is intercepted (``Input.setInterceptDrags``): Chrome reports the
    drag it would start, and the drag events (enter, over along the way, drop) are sent with its
    data, so the page's dragstart/dragover/drop handlers run every time rather than when the
    browser's own drag happens to win the race with our events.
    """
    if not dx and not dy:
        raise ActionError("drag needs dragX or dragY")
    el = find(tab, target) if target.has_element else None
    x, y = element_point(tab, target)
    html5 = el is not None and bool(call_on(tab, el, _DRAGGABLE))
    steps = max(3, min(20, int(max(abs(dx), abs(dy)) / 20)))
    path = [(x + dx * i / steps, y + dy * i / steps) for i in range(1, steps + 1)]
    if html5 and _html5_drag(tab, x, y, path):
        return {"dragged": True, "dragX": dx, "dragY": dy, "html5": True}
    _await(tab, mouse_event(tab, "mouseMoved", x, y))
    _await(tab, mouse_event(tab, "mousePressed", x, y, button="left", clickCount=1))
    for px, py in path:
        _await(tab, mouse_event(tab, "mouseMoved", px, py, button="left"))
    _await(tab, mouse_event(tab, "mouseReleased", x + dx, y + dy, button="left", clickCount=1))
    return {"dragged": True, "dragX": dx, "dragY": dy}


# Whether pressing on the element and moving starts an HTML5 drag (draggable="true", links, images).
_DRAGGABLE = ("function(){ for (let n = this; n && n.nodeType === 1; n = n.parentElement) if (n.draggable) return true;"
              " return false; }")


def _await(tab: Tab, fut: Any) -> None:
    tab.wait_result(fut, "Input.dispatchMouseEvent")


def _html5_drag(tab: Tab, x: float, y: float, path: list[tuple[float, float]]) -> bool:
    """Drag along ``path`` as an intercepted HTML5 drag; False (nothing pressed) if none can start."""
    seen: dict[str, Any] = {}

    def intercepted(_session: str, p: dict[str, Any]) -> None:
        seen["data"] = p.get("data") or {}

    try:
        tab.call("Input.setInterceptDrags", {"enabled": True})
    except CDPError:  # a transport without it (an extension's relay may refuse): plain mouse events
        return False
    tab.on("Input.dragIntercepted", intercepted)
    try:
        _await(tab, mouse_event(tab, "mouseMoved", x, y))
        _await(tab, mouse_event(tab, "mousePressed", x, y, button="left", clickCount=1))
        # Moves until Chrome starts the drag (past its few-pixel threshold) and hands it to us.
        rest = list(path)
        while rest and "data" not in seen:
            px, py = rest.pop(0)
            _await(tab, mouse_event(tab, "mouseMoved", px, py, button="left"))
        if "data" not in seen:
            tab.wait_for(lambda: "data" in seen, DRAG_START_S)
        if "data" not in seen:  # the page cancelled its dragstart: end as a plain press and release
            end = path[-1]
            _await(tab, mouse_event(tab, "mouseReleased", end[0], end[1], button="left", clickCount=1))
            return True
        data = seen["data"]
        first = rest[0] if rest else path[-1]
        _drag_event(tab, "dragEnter", first, data)
        for point in rest or [path[-1]]:
            _drag_event(tab, "dragOver", point, data)
        _drag_event(tab, "drop", path[-1], data)
        end = path[-1]
        # The press ends where the drop was (no page sees it: the drag consumed the mouse).
        tab.state["pointer"] = end
        tab.state["buttons"] = 0
        return True
    finally:
        tab.off("Input.dragIntercepted", intercepted)
        try:
            tab.call("Input.setInterceptDrags", {"enabled": False})
        except CDPError:
            pass


def _drag_event(tab: Tab, kind: str, point: tuple[float, float], data: dict[str, Any]) -> None:
    tab.call("Input.dispatchDragEvent", {"type": kind, "x": point[0], "y": point[1], "data": data})


def scroll_into_view(tab: Tab, target: Target) -> dict[str, Any]:
    """Scroll the element to the viewport's centre; returns its box after scrolling."""
    el = find(tab, target)
    return call_on(tab, el, "function(){ this.scrollIntoView({block: 'center', inline: 'nearest', behavior: 'instant'});"
                            " const r = this.getBoundingClientRect();"
                            " return {x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width),"
                            " height: Math.round(r.height)}; }")


def type_into(tab: Tab, target: Target, text: str) -> dict[str, Any]:
    """Type ``text`` as key events into the target (focused first), or at the focus without one."""
    if target.has_element:
        focus_el(tab, find(tab, target))
    type_text(tab, text)
    return {"typed": True, "len": len(text)}


def press(tab: Tab, target: Target, key: str, modifiers: int = 0) -> dict[str, Any]:
    """Press a key or combination (``Control+a``) on the target, or at the focus without one."""
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
    """Set a text field's value at once (input and change events fired); ActionError for other elements."""
    el = find(tab, target)
    res = call_on(tab, el, _FILL, text)
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
    """Choose the option of a ``<select>`` by value, text or label; ActionError when none matches."""
    res = call_on(tab, find(tab, target), _SELECT, value)
    if res.get("error"):
        raise ActionError(res["error"])
    return {"selected": res["selected"], "text": res["text"]}


def focus(tab: Tab, target: Target) -> dict[str, Any]:
    """Focus the target element."""
    focus_el(tab, find(tab, target))
    return {"focused": True}


_CHECKED = "function(){ return ('checked' in this && (this.type === 'checkbox' || this.type === 'radio')) ? this.checked : " \
           "(this.getAttribute('aria-checked') === null ? null : this.getAttribute('aria-checked') === 'true'); }"


def set_checked(tab: Tab, target: Target, want: bool) -> dict[str, Any]:
    """Check or uncheck a checkbox, radio or switch by clicking it; ActionError if it will not change."""
    el = find(tab, target)
    state = call_on(tab, el, _CHECKED)
    if state is None:
        raise ActionError("element is not a checkbox, radio or switch")
    if state != want:
        try:
            press_element(tab, target, lambda box: mouse_click(tab, *centre(box)))
        except ElementOccluded:
            pass  # the DOM click below
        state = call_on(tab, el, _CHECKED)
        if state != want:  # covered or styled away: the DOM click toggles it
            call_on(tab, el, "function(){ this.click(); }")
            state = call_on(tab, el, _CHECKED)
    if state != want:
        raise ActionError(f"the element stayed {'checked' if state else 'unchecked'}")
    return {"checked": state}


def scroll(tab: Tab, target: Target, *, dx: float = 0, dy: float = 0) -> dict[str, Any]:
    """Scroll the element into view, or turn the wheel at the point (300 px down when dx and dy are 0)."""
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
    wheel(tab, x, y, dx, dy)
    pos = evaluate(tab, tab.frames[tab.main_frame_id or ""], "[scrollX, scrollY]")
    return {"scrolled": True, "x": pos[0], "y": pos[1], "deltaX": dx, "deltaY": dy}


# --- the keyboard alone, at the focus ------------------------------------------------------------
def keyboard_type(tab: Tab, text: str) -> dict[str, Any]:
    """Type ``text`` as key events at the focus."""
    type_text(tab, text)
    return {"typed": True, "len": len(text)}


def insert_text(tab: Tab, text: str) -> dict[str, Any]:
    """Insert ``text`` at the focus in one go (``Input.insertText``: no key events)."""
    tab.call("Input.insertText", {"text": text})
    return {"inserted": True, "len": len(text)}


def key_down(tab: Tab, key: str, modifiers: int = 0) -> dict[str, Any]:
    """Send only the key's down event (held until a ``key_up``)."""
    _key_half(tab, key, modifiers, down=True)
    return {"keydown": key}


def key_up(tab: Tab, key: str, modifiers: int = 0) -> dict[str, Any]:
    """Send only the key's up event."""
    _key_half(tab, key, modifiers, down=False)
    return {"keyup": key}


def _key_half(tab: Tab, key: str, modifiers: int, *, down: bool) -> None:
    try:
        k, bits = keys.parse_combo(key)
    except ValueError as exc:
        raise ActionError(str(exc)) from None
    down_event, up_event = key_events(k, bits | modifiers)
    send_keys(tab, [down_event if down else up_event])
