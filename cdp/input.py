"""Pointer and keyboard primitives on a tab: what a target names, where it is, and the raw input events.

Everything runs on the tab's worker. A target is an element (a ref, a unified selector or a backend
nodeId) or a point in the viewport; pointer events go to the tab's session in the tab's viewport
coordinates (``Input.dispatchMouseEvent``), so an element of an out-of-process iframe is placed by
adding its frames' offsets. The plain actions (``cdp.actions``) and the humanized ones
(``cdp.humanize``) are both built from these.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from . import keys, selectors
from .errors import ActionError, CDPError, ElementOccluded, NoSuchElement, NotAnElement
from .page import Element, call_on, evaluate, world
from .snapshot import ELEMENT_OF
from .tab import Frame, Tab

INSERT_TEXT_ABOVE = 64  # longer texts: first and last keys typed, the middle inserted at once


@dataclass
class Target:
    """What an action is aimed at: an element (ref, selector or backend nodeId) or a point."""

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
        if obj.get("description") == "#document":
            raise NotAnElement(f"nodeId {target.node_id} is the document itself, not an element in it")
        el = Element(obj["objectId"], main.frame_id, main.session_id, world(tab, main))
        if obj.get("className") == "Text":  # text acts on its element, as a ref on text does
            parent = call_on(tab, el, f"function() {{ return {ELEMENT_OF}(this); }}", by_value=False)
            el = Element(parent["objectId"], main.frame_id, main.session_id, el.ctx)
        return el
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
_PREPARE = """function(guardKey) {
  // Scroll into view only when needed, then say whether the centre point hits this element.
  const r0 = this.getBoundingClientRect();
  const vw = this.ownerDocument.defaultView.innerWidth, vh = this.ownerDocument.defaultView.innerHeight;
  if (r0.top < 0 || r0.left < 0 || r0.bottom > vh || r0.right > vw) {
    this.scrollIntoView({block: 'center', inline: 'center', behavior: 'instant'});
  }
  const r = this.getBoundingClientRect();
  if (r.width < 1 || r.height < 1) return {hit: false, reason: 'no box'};
  const cx = r.left + r.width / 2, cy = r.top + r.height / 2;
  // Hit-test from the element's own tree scope: a closed shadow root's host hides what is inside
  // it from the document, but the element holds its root.
  const scope = this.getRootNode();
  let hit = (scope.elementFromPoint ? scope : this.ownerDocument).elementFromPoint(cx, cy);
  while (hit && hit.shadowRoot) {  // follow into open shadow roots
    const inner = hit.shadowRoot.elementFromPoint(cx, cy);
    if (!inner || inner === hit) break;
    hit = inner;
  }
  const inside = (n) => { for (; n; n = n.parentNode || n.host) if (n === this) return true; return false; };
  const reaches = (n) => !!n && (inside(n) || n.control === this ||
                                 (!!this.labels && [...this.labels].some(l => l === n || l.contains(n))));
  // Name an element as a person would point at it: tag#id.class "its text".
  const named = (n) => {
    let what = (n.tagName || n.nodeName).toLowerCase() + (n.id ? '#' + n.id : '');
    const cls = typeof n.className === 'string' ? n.className.trim().split(/\\s+/).filter(Boolean).slice(0, 2) : [];
    if (cls.length) what += '.' + cls.join('.');
    const text = (n.innerText || n.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
    return text ? what + ' "' + text + '"' : what;
  };
  if (reaches(hit)) {
    if (guardKey) guard(this, guardKey);
    return {hit: true};
  }
  if (!hit) return {hit: false, reason: 'nothing at its centre'};
  // An ancestor on top (the element lets pointer events through): nothing else covers it.
  for (let n = this; n; n = n.parentNode || n.host) {
    if (n === hit) return {hit: false, reason: 'pointer events pass through'};
  }
  const what = named(hit);
  return {hit: false, coveredBy: what, reason: 'covered by ' + what};

  // The page may move the element between this check and the click (a list that loads above it, a
  // banner): the press would then reach whatever took its place. Until the guard is ended, the
  // first button event decides: one that reaches something else is stopped, with the rest of its
  // click, before the page sees it, and the guard's end names what it reached, so the click is
  // aimed again. The guard lives in our world (the page cannot see it) and ends on its own.
  function guard(el, key) {
    const GUARDED = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'auxclick', 'dblclick', 'contextmenu'];
    const win = el.ownerDocument.defaultView;
    // Inside a closed shadow root, the window sees an event as its host's.
    const hosts = new Set();
    for (let root = el.getRootNode(); root.host; root = root.host.getRootNode()) hosts.add(root.host);
    let verdict = null;  // null: no button event yet; '': it reached the element; else what it reached
    const onEvent = (e) => {
      if (verdict === null) {
        const t = e.composedPath()[0];
        verdict = reaches(t) || hosts.has(t) ? '' : named(t);
      }
      if (verdict) { e.preventDefault(); e.stopImmediatePropagation(); }
    };
    const end = () => {
      clearTimeout(timer);
      for (const type of GUARDED) win.removeEventListener(type, onEvent, true);
      if (el[key] === end) delete el[key];
      return verdict || '';
    };
    const timer = setTimeout(end, 2000);  // a click that never came
    for (const type of GUARDED) win.addEventListener(type, onEvent, true);
    if (el[key]) el[key]();  // an earlier guard left by a click that failed midway
    el[key] = end;
  }
}"""
_END_GUARD = "function(key) { return this[key] ? this[key]() : ''; }"
CLICK_GUARD = "__pinchtabClickGuard"  # an expando of our world's wrapper of the element
DOM_CLICK = "function(n){ for (let i = 0; i < n; i++) this.click(); }"  # el.click(): the click event alone
CLICK_ATTEMPTS = 3
Box4 = tuple[float, float, float, float]


def box_of(tab: Tab, el: Element, *, strict: bool = False, guard: bool = False) -> Box4 | None:
    """The element's box (x, y, width, height) in the tab's viewport if a pointer at its centre
    would reach it (scrolled into view first), else None; ``strict``: ElementOccluded, naming what is
    on top, when something covers it (None stays for an element with no box). ``guard``: see
    ``press_element``."""
    prep = call_on(tab, el, _PREPARE, CLICK_GUARD if guard else "")
    if not prep.get("hit"):
        if strict and prep.get("coveredBy"):
            raise ElementOccluded(prep["coveredBy"])
        return None
    quads = tab.call("DOM.getContentQuads", {"objectId": el.object_id}, session_id=el.session_id).get("quads") or []
    for q in quads:
        xs, ys = q[0::2], q[1::2]
        if max(xs) - min(xs) >= 1 and max(ys) - min(ys) >= 1:
            ox, oy = session_offset(tab, el.session_id)
            return min(xs) + ox, min(ys) + oy, max(xs) - min(xs), max(ys) - min(ys)
    return None


def press_element(tab: Tab, target: Target, press: Callable[[Box4], Any], count: int = 1) -> bool:
    """Click the target element with ``press`` (input events somewhere in the box it is given), such
    that the click reaches the element or nothing: True once it has; False when the element has no
    box, and was clicked through the DOM instead (``count`` times); ElementOccluded when it is
    covered, or still moved away under the pointer after CLICK_ATTEMPTS tries.

    Between measuring the element and the press's arrival the page may move it; a guard in the page
    (``_PREPARE``) then stops the click before the page sees it, and it is aimed again.
    """
    reached = ""
    for _ in range(CLICK_ATTEMPTS):
        el = find(tab, target)
        box = box_of(tab, el, strict=True, guard=True)
        if box is None:
            _end_guard(tab, el)
            call_on(tab, el, DOM_CLICK, count)
            return False
        press(box)
        reached = _end_guard(tab, el)
        if not reached:
            return True
    raise ElementOccluded(reached, moved=True)


def _end_guard(tab: Tab, el: Element) -> str:
    """End the element's click guard: what a stopped click reached, '' when none was stopped."""
    try:
        return call_on(tab, el, _END_GUARD, CLICK_GUARD) or ""
    except CDPError:  # the click replaced the document (its guard with it): it reached its element
        return ""


def point_of(tab: Tab, el: Element, *, strict: bool = False) -> tuple[float, float] | None:
    """The element's centre in viewport coordinates if a pointer there would reach it, else None
    (``strict``: as in ``box_of``)."""
    box = box_of(tab, el, strict=strict)
    return None if box is None else centre(box)


def centre(box: Box4) -> tuple[float, float]:
    return box[0] + box[2] / 2, box[1] + box[3] / 2


def session_offset(tab: Tab, session_id: str) -> tuple[float, float]:
    """Where a session's viewport sits in the tab's viewport (0, 0 for the tab's own session).

    An out-of-process iframe reports positions in its own viewport; input events go to the tab,
    in the tab's coordinates, so we add the content-box origin of each <iframe> on the way up.

    The browser routes those events to the frame by where its parent's renderer last drew the
    <iframe>. When the frame moved since we last aimed into it (a click above it added a line),
    or we never did, an event sent at once can land where the frame was, on whatever is there:
    so the parents draw a frame with the layout just measured first (FRAME_DRAWN_JS).
    """
    ox = oy = 0.0
    parents: list[Frame] = []
    aimed_at = session_id
    root = _session_root(tab, session_id)
    while session_id != tab.session_id:
        if root is None or root.parent_id is None or root.parent_id not in tab.frames:
            raise ActionError("cannot place an element of a frame that is gone")
        parent = tab.frames[root.parent_id]
        owner = tab.call("DOM.getFrameOwner", {"frameId": root.frame_id}, session_id=parent.session_id)
        box = tab.call("DOM.getBoxModel", {"backendNodeId": owner["backendNodeId"]},
                       session_id=parent.session_id)["model"]
        ox += box["content"][0]
        oy += box["content"][1]
        session_id = parent.session_id
        root = _session_root(tab, session_id)
        parents.append(root or parent)
    aimed: dict[str, tuple[float, float]] = tab.state.setdefault("frame_origins", {})
    if parents and aimed.get(aimed_at) != (ox, oy):
        for frame in parents:
            evaluate(tab, frame, FRAME_DRAWN_JS, await_promise=True)
        if len(aimed) >= AIMED_FRAMES_KEPT:  # sessions of frames long gone
            aimed.clear()
        aimed[aimed_at] = (ox, oy)
    return ox, oy


def _session_root(tab: Tab, session_id: str) -> Frame | None:
    """The top frame of a session: its main frame, or the out-of-process iframe it runs."""
    return next((f for f in tab.frames.values() if f.session_id == session_id and
                 (f.parent_id is None or tab.frames.get(f.parent_id) is None or
                  tab.frames[f.parent_id].session_id != session_id)), None)


# Resolves once the renderer has drawn two frames (the layout of now is on screen), at most after
# FRAME_DRAWN_MAX_MS (a page that draws no frames, hidden, answers at once).
FRAME_DRAWN_MAX_MS = 100
AIMED_FRAMES_KEPT = 64
FRAME_DRAWN_JS = ("new Promise(done => { if (document.visibilityState === 'hidden') return done(); "
                  f"const cap = setTimeout(done, {FRAME_DRAWN_MAX_MS}); "
                  "requestAnimationFrame(() => requestAnimationFrame(() => { clearTimeout(cap); done(); })); })")


BUTTON_BITS = {"left": 1, "right": 2, "middle": 4}  # the DOM's MouseEvent.buttons


def mouse_event(tab: Tab, kind: str, x: float, y: float, **extra: Any) -> Any:
    """Send one mouse event (not waited for) and remember where the pointer is and which buttons
    are held: a move while a button is down carries it, as a person's drag does (pointer-event
    and mouse-event drag code reads ``buttons``)."""
    tab.state["pointer"] = (x, y)
    held = tab.state.get("buttons", 0)
    button = extra.get("button", "none")
    if kind == "mousePressed":
        held |= BUTTON_BITS.get(button, 0)
    elif kind == "mouseReleased":
        held &= ~BUTTON_BITS.get(button, 0)
    elif kind == "mouseMoved" and held and "buttons" not in extra:
        extra = {**extra, "buttons": held,
                 "button": extra.get("button") or next(b for b, bit in BUTTON_BITS.items() if held & bit)}
    if kind in ("mousePressed", "mouseReleased"):
        extra.setdefault("buttons", held)
    tab.state["buttons"] = held
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
    pt = point_of(tab, el, strict=True)
    if pt is None:
        raise ActionError("the element has no visible point (hidden or zero-size)")
    return pt


def pointer_point(tab: Tab, target: Target) -> tuple[float, float]:
    """For mouse-* kinds: the target, else where the pointer last was, else the viewport centre."""
    if target.has_element or target.has_point:
        return element_point(tab, target)
    if "pointer" in tab.state:
        return tab.state["pointer"]
    size = evaluate(tab, tab.frames[tab.main_frame_id or ""], "[innerWidth, innerHeight]")
    return size[0] / 2, size[1] / 2


# --- keyboard --------------------------------------------------------------------------------
def focus_el(tab: Tab, el: Element) -> None:
    """Focus the element; ActionError when the focus lands neither on it nor inside it."""
    ok = call_on(tab, el, "function(){ this.focus(); const a = (r) => { let e = r.activeElement; "
                          "while (e && e.shadowRoot && e.shadowRoot.activeElement) e = e.shadowRoot.activeElement; return e; };"
                          " return a(this.ownerDocument) === this || this.contains(a(this.ownerDocument)); }")
    if not ok:
        raise ActionError("element cannot take focus")


def key_events(key: keys.Key, modifiers: int = 0, *, with_text: bool = True) -> list[dict[str, Any]]:
    """The ``Input.dispatchKeyEvent`` params of pressing and releasing ``key`` (down, up).

    With Ctrl or Meta held, or without text, the key goes down as ``rawKeyDown`` (no character is
    typed); edit shortcuts (Ctrl/Meta + a, c, v, x, y, z) carry their editing command so Chrome
    performs it.
    """
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
