"""Actions on a tab: click, type, fill, press, hover, focus, select, scroll, check, uncheck.

Each runs on the tab's worker. Pointer actions scroll the element into view, check that it is
the top-most element at its centre and send real input events there; when something covers it
(or it has no box) they fall back to the DOM (``el.click()``), as the original does.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from . import keys
from .errors import ActionError, CDPError, NavigationChanged, NoSuchElement
from . import selectors
from .snapshot import Element, call_on, evaluate, world
from .tab import Tab

INSERT_TEXT_ABOVE = 64  # longer texts: first and last keys typed, the middle inserted at once


@dataclass
class Target:
    ref: str = ""
    selector: str = ""
    node_id: int | None = None
    x: float | None = None
    y: float | None = None
    frame_w: float | None = None  # x and y are in a picture of this size (a scaled screenshot)
    frame_h: float | None = None

    @property
    def has_element(self) -> bool:
        return bool(self.ref or self.selector or self.node_id is not None)

    @property
    def has_point(self) -> bool:
        return self.x is not None and self.y is not None


def find(tab: Tab, target: Target) -> Element:
    """The element a target names: a backend nodeId, a ref, or any unified selector."""
    if target.node_id is not None:
        main = tab.frames[tab.main_frame_id or ""]
        try:
            obj = tab.call("DOM.resolveNode", {"backendNodeId": target.node_id,
                                               "executionContextId": world(tab, main)})["object"]
        except CDPError:
            raise NoSuchElement(f"no node with nodeId {target.node_id}") from None
        return Element(obj["objectId"], main.frame_id, main.session_id, world(tab, main))
    return selectors.resolve(tab, target.ref or target.selector)


def viewport_point(tab: Tab, target: Target) -> tuple[float, float]:
    """The target's x/y in CSS viewport pixels (scaled when given in a frameW x frameH picture)."""
    x, y = float(target.x), float(target.y)  # type: ignore[arg-type]
    if target.frame_w or target.frame_h:
        size = evaluate(tab, tab.frames[tab.main_frame_id or ""], "[innerWidth, innerHeight]")
        if target.frame_w:
            x = x * size[0] / target.frame_w
        if target.frame_h:
            y = y * size[1] / target.frame_h
    return x, y


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


def box_of(tab: Tab, el: Element) -> tuple[float, float, float, float] | None:
    """The element's box (x, y, width, height) in the tab's viewport if a pointer at its centre
    would reach it (scrolled into view first), else None."""
    prep = call_on(tab, el, _PREPARE)
    if not prep.get("hit"):
        return None
    quads = tab.call("DOM.getContentQuads", {"objectId": el.object_id}, session_id=el.session_id).get("quads") or []
    for q in quads:
        xs, ys = q[0::2], q[1::2]
        if max(xs) - min(xs) >= 1 and max(ys) - min(ys) >= 1:
            ox, oy = session_offset(tab, el.session_id)
            return min(xs) + ox, min(ys) + oy, max(xs) - min(xs), max(ys) - min(ys)
    return None


def point_of(tab: Tab, el: Element) -> tuple[float, float] | None:
    """The element's centre in viewport coordinates if a pointer there would reach it, else None."""
    box = box_of(tab, el)
    return None if box is None else (box[0] + box[2] / 2, box[1] + box[3] / 2)


def session_offset(tab: Tab, session_id: str) -> tuple[float, float]:
    """Where a session's viewport sits in the tab's viewport (0, 0 for the tab's own session).

    An out-of-process iframe reports positions in its own viewport; input events go to the tab,
    in the tab's coordinates, so we add the content-box origin of each <iframe> on the way up.
    """
    ox = oy = 0.0
    while session_id != tab.session_id:
        root = next((f for f in tab.frames.values() if f.session_id == session_id and
                     (f.parent_id is None or tab.frames.get(f.parent_id) is None or
                      tab.frames[f.parent_id].session_id != session_id)), None)
        if root is None or root.parent_id is None or root.parent_id not in tab.frames:
            raise ActionError("cannot place an element of a frame that is gone")
        parent = tab.frames[root.parent_id]
        owner = tab.call("DOM.getFrameOwner", {"frameId": root.frame_id}, session_id=parent.session_id)
        box = tab.call("DOM.getBoxModel", {"backendNodeId": owner["backendNodeId"]},
                       session_id=parent.session_id)["model"]
        ox += box["content"][0]
        oy += box["content"][1]
        session_id = parent.session_id
    return ox, oy


def mouse_event(tab: Tab, kind: str, x: float, y: float, **extra: Any) -> Any:
    """Send one mouse event (not waited for) and remember where the pointer is."""
    tab.state["pointer"] = (x, y)
    return tab.send("Input.dispatchMouseEvent", {"type": kind, "x": x, "y": y, **extra})


def mouse_click(tab: Tab, x: float, y: float, *, button: str = "left", count: int = 1, modifiers: int = 0) -> None:
    """Move, press and release at (x, y), pipelined; a dialog opened by the click ends the wait."""
    mouse_event(tab, "mouseMoved", x, y, modifiers=modifiers)
    last = None
    for i in range(1, count + 1):
        mouse_event(tab, "mousePressed", x, y, button=button, clickCount=i, modifiers=modifiers)
        last = mouse_event(tab, "mouseReleased", x, y, button=button, clickCount=i, modifiers=modifiers)
    tab.wait_result(last, "Input.dispatchMouseEvent")


def element_point(tab: Tab, target: Target) -> tuple[float, float]:
    """Where a pointer action on the target goes: its element's centre, or its x/y."""
    if target.has_point and not target.has_element:
        return viewport_point(tab, target)
    el = find(tab, target)
    pt = point_of(tab, el)
    if pt is None:
        raise ActionError("the element has no visible point (covered, hidden or zero-size)")
    return pt


def pointer_point(tab: Tab, target: Target) -> tuple[float, float]:
    """For mouse-* kinds: the target, else where the pointer last was, else the viewport centre."""
    if target.has_element or target.has_point:
        return element_point(tab, target)
    if "pointer" in tab.state:
        return tab.state["pointer"]
    size = evaluate(tab, tab.frames[tab.main_frame_id or ""], "[innerWidth, innerHeight]")
    return size[0] / 2, size[1] / 2


def click(tab: Tab, target: Target, *, count: int = 1, button: str = "left", modifiers: int = 0) -> dict[str, Any]:
    if target.has_point and not target.has_element:
        x, y = viewport_point(tab, target)
        mouse_click(tab, x, y, button=button, count=count, modifiers=modifiers)
        return {"clicked": True, "x": x, "y": y}
    el = find(tab, target)
    pt = point_of(tab, el)
    if pt is None:
        # Covered or boxless (a styled checkbox, an element under an overlay): click through the DOM.
        call_on(tab, el, "function(n){ for (let i = 0; i < n; i++) this.click(); }", count)
        return {"clicked": True, "method": "dom"}
    mouse_click(tab, pt[0], pt[1], button=button, count=count, modifiers=modifiers)
    return {"clicked": True}


def hover(tab: Tab, target: Target) -> dict[str, Any]:
    x, y = element_point(tab, target)
    tab.wait_result(mouse_event(tab, "mouseMoved", x, y), "Input.dispatchMouseEvent")
    return {"hovered": True}


def mouse_move(tab: Tab, target: Target) -> dict[str, Any]:
    x, y = pointer_point(tab, target)
    tab.wait_result(mouse_event(tab, "mouseMoved", x, y), "Input.dispatchMouseEvent")
    return {"moved": True, "x": x, "y": y}


def mouse_button(tab: Tab, target: Target, down: bool, button: str = "left", modifiers: int = 0) -> dict[str, Any]:
    x, y = pointer_point(tab, target)
    kind = "mousePressed" if down else "mouseReleased"
    tab.wait_result(mouse_event(tab, kind, x, y, button=button, clickCount=1, modifiers=modifiers),
                    "Input.dispatchMouseEvent")
    return {"down" if down else "up": True, "x": x, "y": y, "button": button}


def mouse_wheel(tab: Tab, target: Target, dx: float, dy: float) -> dict[str, Any]:
    x, y = pointer_point(tab, target)
    if not dx and not dy:
        dy = 120
    tab.wait_result(mouse_event(tab, "mouseWheel", x, y, deltaX=dx, deltaY=dy), "Input.dispatchMouseEvent")
    return {"wheel": True, "x": x, "y": y, "deltaX": dx, "deltaY": dy}


def drag(tab: Tab, target: Target, dx: float, dy: float) -> dict[str, Any]:
    """Press at the element's centre, move in steps of about 20 px, release at the offset."""
    if not dx and not dy:
        raise ActionError("drag needs dragX or dragY")
    x, y = element_point(tab, target)
    mouse_event(tab, "mouseMoved", x, y)
    mouse_event(tab, "mousePressed", x, y, button="left", clickCount=1)
    steps = max(3, min(20, int(max(abs(dx), abs(dy)) / 20)))
    for i in range(1, steps + 1):
        mouse_event(tab, "mouseMoved", x + dx * i / steps, y + dy * i / steps, button="left", buttons=1)
    last = mouse_event(tab, "mouseReleased", x + dx, y + dy, button="left", clickCount=1)
    tab.wait_result(last, "Input.dispatchMouseEvent")
    return {"dragged": True, "dragX": dx, "dragY": dy}


def scroll_into_view(tab: Tab, target: Target) -> dict[str, Any]:
    el = find(tab, target)
    return call_on(tab, el, "function(){ this.scrollIntoView({block: 'center', inline: 'nearest', behavior: 'instant'});"
                            " const r = this.getBoundingClientRect();"
                            " return {x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width),"
                            " height: Math.round(r.height)}; }")


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
        tab.wait_result(last, "Input.dispatchKeyEvent")


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
    res = call_on(tab, find(tab, target), _SELECT, value)
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
            call_on(tab, el, "function(){ this.click(); }")
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



# --- one step: an action with its guards ---------------------------------------------------------
@dataclass
class Step:
    """One action as the API takes it (field names as in the original's request)."""

    kind: str
    target: Target
    text: str = ""
    value: str | None = None
    key: str = ""
    modifiers: int = 0
    button: str = "left"
    dx: float = 0.0
    dy: float = 0.0
    drag_x: float = 0.0
    drag_y: float = 0.0
    wait_nav: bool = False
    dialog_action: str = ""  # "accept" / "dismiss" for a dialog this step opens
    dialog_text: str = ""
    humanize: bool = False  # Bezier mouse paths and a person's typing rhythm (human/)
    fast: bool = False  # the quicker typing rhythm, with humanize


HUMANIZED = ("click", "dblclick", "hover", "type", "keyboard-type")


def run_kind(tab: Tab, step: Step) -> dict[str, Any]:
    """Dispatch a step to its action."""
    t, k = step.target, step.kind
    if step.humanize and k in HUMANIZED:
        return run_humanized(tab, step)
    if k == "click":
        return click(tab, t, button=step.button, modifiers=step.modifiers)
    if k == "dblclick":
        res = click(tab, t, count=2, button=step.button, modifiers=step.modifiers)
        return {"doubleclicked": True, **{key: v for key, v in res.items() if key != "clicked"}}
    if k == "type":
        return type_into(tab, t, step.text)
    if k == "fill":
        return fill(tab, t, step.text)
    if k == "press":
        return press(tab, t, step.key, step.modifiers)
    if k == "hover":
        return hover(tab, t)
    if k == "focus":
        return focus(tab, t)
    if k == "select":
        return select(tab, t, step.value if step.value is not None else step.text)
    if k in ("check", "uncheck"):
        return set_checked(tab, t, k == "check")
    if k == "scroll":
        return scroll(tab, t, dx=step.dx, dy=step.dy)
    if k == "scrollintoview":
        return scroll_into_view(tab, t)
    if k == "drag":
        return drag(tab, t, step.drag_x, step.drag_y)
    if k == "mouse-move":
        return mouse_move(tab, t)
    if k in ("mouse-down", "mouse-up"):
        return mouse_button(tab, t, k == "mouse-down", step.button, step.modifiers)
    if k == "mouse-wheel":
        return mouse_wheel(tab, t, step.dx, step.dy)
    if k == "keyboard-type":
        type_text(tab, step.text)
        return {"typed": True, "len": len(step.text)}
    if k == "keyboard-inserttext":
        tab.call("Input.insertText", {"text": step.text})
        return {"inserted": True, "len": len(step.text)}
    if k in ("keydown", "keyup"):
        try:
            key, bits = keys.parse_combo(step.key)
        except ValueError as exc:
            raise ActionError(str(exc)) from None
        down, up = key_events(key, bits | step.modifiers)
        send_keys(tab, [down if k == "keydown" else up])
        return {k: step.key}
    raise ActionError(f"unknown action kind: {k}")


def run_humanized(tab: Tab, step: Step) -> dict[str, Any]:
    """The kinds a person's hand can do, done the way a person would (cdp/humanize.py)."""
    from . import humanize

    rng = humanize.rng_for(tab)
    t, k = step.target, step.kind
    if k in ("click", "dblclick"):
        res = humanize.click(tab, t, rng, count=2 if k == "dblclick" else 1, button=step.button,
                             modifiers=step.modifiers)
        if k == "dblclick":
            res = {"doubleclicked": True, **{key: v for key, v in res.items() if key != "clicked"}}
        return res
    if k == "hover":
        return humanize.hover(tab, t, rng)
    if k == "type":
        return humanize.type_into(tab, t, step.text, rng, fast=step.fast)
    humanize.human_type(tab, step.text, rng, fast=step.fast)  # keyboard-type: at the focus
    return {"typed": True, "len": len(step.text), "human": True}


def perform(tab: Tab, step: Step, *, guard: bool = True, wait_nav_s: float = 1.0,
            navigate_timeout_s: float = 30.0) -> dict[str, Any]:
    """Run a step with its guards: dialog handling, waitNav, and the navigation guard.

    Without ``wait_nav`` a step that makes the main frame load a new document raises
    NavigationChanged (the page's refs are gone, and the agent should know); with it, the step
    waits (bounded) for the new page.
    """
    epoch, loads = tab.document_epoch, tab.loads_started
    if step.dialog_action:
        tab.dialog_plan = (step.dialog_action == "accept", step.dialog_text)
    try:
        result = run_kind(tab, step)
    finally:
        planned = tab.dialog_plan is None and step.dialog_action
        tab.dialog_plan = None
    if planned and tab.last_dialog is not None and tab.last_dialog.handled:
        result["dialog"] = {**tab.last_dialog.to_dict(), "handled": tab.last_dialog.handled}
    # A round trip to the page: by its answer, a navigation the step started has been reported.
    main = tab.frames.get(tab.main_frame_id or "")
    if main is not None:
        try:
            evaluate(tab, main, "0")
        except Exception:  # the old document went away under us: that is a navigation too
            pass
    navigated = tab.document_epoch != epoch or tab.loads_started != loads
    if step.wait_nav:
        from .navigation import wait_loaded

        if not navigated:
            tab.wait_for(lambda: tab.loads_started != loads or tab.document_epoch != epoch, wait_nav_s)
        if tab.loads_started != loads or tab.document_epoch != epoch:
            tab.wait_for(lambda: tab.document_epoch != epoch, navigate_timeout_s)
            main = tab.frames.get(tab.main_frame_id or "")
            wait_loaded(tab, tab.main_frame_id, main.loader_id if main else None, "dom", navigate_timeout_s)
            result["navigated"] = True
        return result
    if guard and navigated:
        raise NavigationChanged(tab.url, result)
    return result
