"""Human-like input on a tab: plays back the plans of ``human.mouse`` and ``human.keyboard``.

Built on the primitives of ``cdp.input``, and run on the tab's worker thread like ``cdp.actions``.
Delays are real waits, but a waiting job keeps handling the tab's events (``tab.wait_for``), so a
dialog or a navigation during a slow, human-paced action is noticed. Delays follow an absolute
schedule: the time a command takes to answer is absorbed by the next wait instead of stretching
the whole action.

The pointer's last position is kept per tab in ``tab.state["pointer"]`` so that consecutive
humanized actions continue from where the previous one ended.
"""
from __future__ import annotations

import random
import time
import unicodedata
from collections.abc import Iterable
from typing import Any

from human.keyboard import CharStep, typing_plan
from human.mouse import Box, Point, Step, click_plan, move_path, nearby_start
from human.rng import RandomSource, spread

from . import keys
from .errors import ActionError
from .input import (
    Target,
    find,
    focus_el,
    key_events,
    mouse_event,
    point_of,
    press_element,
    send_keys,
    viewport_point,
)
from .tab import Tab

POINTER_KEY = "pointer"
RNG_KEY = "human_rng"
_BUTTON_BITS = {"left": 1, "right": 2, "middle": 4, "back": 8, "forward": 16}


def rng_for(tab: Tab) -> random.Random:
    """The tab's own unseeded random generator (made on first use)."""
    rng = tab.state.get(RNG_KEY)
    if rng is None:
        rng = tab.state[RNG_KEY] = random.Random()
    return rng


def pointer(tab: Tab) -> Point | None:
    """Where the last humanized action left the pointer, if any."""
    return tab.state.get(POINTER_KEY)


class _Pacer:
    """Waits on an absolute schedule, handling the tab's events meanwhile."""

    def __init__(self, tab: Tab) -> None:
        self.tab = tab
        self.at = time.monotonic()

    def wait(self, delay_ms: float) -> None:
        self.at += delay_ms / 1000.0
        left = self.at - time.monotonic()
        if left > 0:
            # Not time.sleep: the worker must keep dispatching events (dialogs, navigations).
            self.tab.wait_for(_never, left)


def _never() -> bool:
    return False


def _mouse(tab: Tab, kind: str, x: float, y: float, **extra: Any) -> None:
    # Through cdp.input.mouse_event, which also records the pointer position; waited for, so
    # a failure or an opened dialog (DialogBlocking) surfaces at the event that caused it.
    tab.wait_result(mouse_event(tab, kind, x, y, **extra), "Input.dispatchMouseEvent")


def _move(tab: Tab, pacer: _Pacer, steps: Iterable[Step], modifiers: int) -> None:
    for step in steps:
        pacer.wait(step.delay_ms)
        _mouse(tab, "mouseMoved", step.x, step.y, modifiers=modifiers)


def human_move(tab: Tab, frm: Point | None, to: Point, rng: RandomSource, *, modifiers: int = 0) -> Point:
    """Move the pointer along a Bezier path from ``frm`` (None: where it last was) to ``to``."""
    start = frm if frm is not None else (pointer(tab) or nearby_start(to, rng))
    _move(tab, _Pacer(tab), move_path(start, to, rng), modifiers)
    return to


def human_click(tab: Tab, box: Box | tuple[float, float, float, float], rng: RandomSource, *,
                count: int = 1, start: Point | None = None, button: str = "left", modifiers: int = 0) -> Point:
    """Move to a point near the box's centre, pause, then press and release ``count`` times.

    ``start``: where the pointer is (None: where the last humanized action left it, else a
    plausible nearby point). Returns the point clicked. A dialog opened by the click raises
    DialogBlocking, as ``cdp.input.mouse_click`` does.
    """
    plan = click_plan(box, rng, start=start if start is not None else pointer(tab), count=count)
    pacer = _Pacer(tab)
    _move(tab, pacer, plan.moves, modifiers)
    bit = _BUTTON_BITS.get(button, 0)
    for ev in plan.buttons:
        pacer.wait(ev.delay_ms)
        pressed = ev.type == "press"
        # ``buttons`` too: a press reporting no button held is a tell of synthetic input.
        _mouse(tab, "mousePressed" if pressed else "mouseReleased", ev.x, ev.y, button=button,
               buttons=bit if pressed else 0, clickCount=ev.click_count, modifiers=modifiers)
    return plan.target


# Shifted symbols of a US keyboard: the key that types each (cdp.keys knows the unshifted ones).
_SHIFTED = {
    "!": ("Digit1", 49), "@": ("Digit2", 50), "#": ("Digit3", 51), "$": ("Digit4", 52), "%": ("Digit5", 53),
    "^": ("Digit6", 54), "&": ("Digit7", 55), "*": ("Digit8", 56), "(": ("Digit9", 57), ")": ("Digit0", 48),
    "_": ("Minus", 189), "+": ("Equal", 187), "{": ("BracketLeft", 219), "}": ("BracketRight", 221),
    "|": ("Backslash", 220), ":": ("Semicolon", 186), '"': ("Quote", 222), "<": ("Comma", 188),
    ">": ("Period", 190), "?": ("Slash", 191), "~": ("Backquote", 192),
}
SHIFT_BIT = keys.MODIFIER_BITS["Shift"]


def key_for(ch: str) -> tuple[keys.Key | None, bool]:
    """The key that types ``ch`` and whether Shift is held for it; None: insert it as text.

    Accented Latin letters are keys of European layouts (é, ö, ß) and a typed letter without a
    keydown is a tell, so they are keyed too. Emoji, CJK and symbols come from pickers and input
    methods, which insert text.
    """
    if ch in _SHIFTED:
        code, key_code = _SHIFTED[ch]
        return keys.Key(ch, code, key_code, ch), True
    key = keys.char_key(ch)
    latin_letter = len(ch) == 1 and ch.isalpha() and unicodedata.name(ch, "").startswith("LATIN")
    if key.key_code == 0 and not latin_letter:
        return None, False
    return key, latin_letter and ch.isupper()


def human_type(tab: Tab, text: str, rng: RandomSource, *, fast: bool = False) -> None:
    """Type ``text`` at the focus with a human rhythm, typos and corrections included.

    Keys are held a little before their release and Shift is pressed around capitals and shifted
    symbols, as a hand does; characters without a key go through ``Input.insertText``.
    """
    plan = typing_plan(text, rng, fast=fast)
    base = 40.0 if fast else 80.0
    backspace, shift = keys.lookup("Backspace"), keys.lookup("Shift")
    pacer = _Pacer(tab)
    for i, step in enumerate(plan):
        text = step.text if isinstance(step, CharStep) else ""
        key, shifted = key_for(text) if text else (backspace, False)
        if key is None:
            pacer.wait(step.delay_ms)
            tab.call("Input.insertText", {"text": text})
            continue
        lead = min(spread(rng, 0.2, 0.5) * base, 0.5 * step.delay_ms) if shifted else 0.0
        pacer.wait(step.delay_ms - lead)
        if shifted:  # Shift goes down shortly before the key
            send_keys(tab, [key_events(shift, SHIFT_BIT)[0]])
            pacer.wait(lead)
        down, up = key_events(key, SHIFT_BIT if shifted else 0)
        send_keys(tab, [down])
        # Hold the key briefly (a zero hold time is a tell), always releasing before the next key.
        following = plan[i + 1].delay_ms if i + 1 < len(plan) else 60.0
        hold = min(spread(rng, 0.25, 0.75) * base, 0.45 * following)
        pacer.wait(hold)
        send_keys(tab, [up] + ([key_events(shift)[1]] if shifted else []))
        pacer.at -= hold / 1000.0  # the hold is part of the gap to the next key, not extra


# --- on elements, mirroring cdp.actions ------------------------------------------------------------
def click(tab: Tab, target: Target, rng: RandomSource, *, count: int = 1, button: str = "left",
          modifiers: int = 0) -> dict[str, Any]:
    """``cdp.actions.click`` with a human pointer; a covered element is refused, a boxless one gets a DOM click."""
    if target.has_point and not target.has_element:
        x, y = viewport_point(tab, target)
        # A zero-size box: raw coordinates are hit exactly.
        human_click(tab, Box(x, y, 0.0, 0.0), rng, count=count, button=button, modifiers=modifiers)
        return {"clicked": True, "x": x, "y": y, "human": True}
    if not press_element(tab, target, lambda box: human_click(tab, box, rng, count=count, button=button,
                                                              modifiers=modifiers), count):
        return {"clicked": True, "method": "dom"}
    return {"clicked": True, "human": True}


def hover(tab: Tab, target: Target, rng: RandomSource) -> dict[str, Any]:
    """``cdp.actions.hover`` along a human path."""
    if target.has_point and not target.has_element:
        to: Point = viewport_point(tab, target)
    else:
        point = point_of(tab, find(tab, target), strict=True)
        if point is None:
            raise ActionError("element has no visible point to hover (hidden or zero-size)")
        to = point
    human_move(tab, None, to, rng)
    return {"hovered": True, "human": True}


def type_into(tab: Tab, target: Target, text: str, rng: RandomSource, *, fast: bool = False) -> dict[str, Any]:
    """``cdp.actions.type_into`` at a human pace (the element, if any, is focused first)."""
    if target.has_element:
        focus_el(tab, find(tab, target))
    human_type(tab, text, rng, fast=fast)
    return {"typed": True, "len": len(text), "human": True}
