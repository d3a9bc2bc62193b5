"""Steps: one action as the API takes it, the table of action kinds, and running a step with its guards.

``ACTION_KINDS`` is the one list of what ``POST /action`` accepts: the request schema takes its
names and requirements from it (``missing_field``), and ``run_kind`` dispatches through it, so a
kind cannot be accepted without being runnable, or the other way round.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from . import actions, humanize
from .errors import ActionError, CDPError, CDPTimeout, DialogBlocking, NavigationChanged, TargetClosed
from .input import Target
from .navigation import dismiss_banners, wait_loaded
from .page import evaluate
from .tab import Tab


@dataclass
class Step:
    """One action as the API takes it (``kind``, its target and options, in snake case)."""

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
    dismiss_banners: bool = False  # with wait_nav: click a consent banner's accept button on the landing page
    dialog_action: str = ""  # "accept" / "dismiss" for a dialog this step opens
    dialog_text: str = ""
    humanize: bool = False  # Bezier mouse paths and a person's typing rhythm (human/)
    fast: bool = False  # the quicker typing rhythm, with humanize
    mode: str = ""  # click delivery: "" input events, "dom" el.click(), "dispatch" synthetic events


CLICK_MODES = ("", "dom", "dispatch")


@dataclass(frozen=True)
class ActionKind:
    """What one action kind runs, what its request must carry, and whether a person's hand can do it."""

    handler: Callable[[Tab, Step], dict[str, Any]]  # the plain dispatch
    needs: tuple[str, ...] = ()  # names of _REQUIREMENTS
    humanizable: bool = False  # run by run_humanized when the step asks for it


def _as_dblclick(res: dict[str, Any]) -> dict[str, Any]:
    return {"doubleclicked": True, **{key: v for key, v in res.items() if key != "clicked"}}


def _click(tab: Tab, step: Step) -> dict[str, Any]:
    return actions.click(tab, step.target, button=step.button, modifiers=step.modifiers, mode=step.mode)


def _dblclick(tab: Tab, step: Step) -> dict[str, Any]:
    return _as_dblclick(actions.click(tab, step.target, count=2, button=step.button, modifiers=step.modifiers,
                                      mode=step.mode))


def _check(want: bool) -> Callable[[Tab, Step], dict[str, Any]]:
    return lambda tab, step: actions.set_checked(tab, step.target, want)


# Insertion order is the order the API lists the kinds in.
ACTION_KINDS: dict[str, ActionKind] = {
    "click": ActionKind(_click, ("target-or-point",), humanizable=True),
    "dblclick": ActionKind(_dblclick, ("target-or-point",), humanizable=True),
    "type": ActionKind(lambda tab, s: actions.type_into(tab, s.target, s.text), ("text",), humanizable=True),
    "fill": ActionKind(lambda tab, s: actions.fill(tab, s.target, s.text), ("text", "target")),
    "press": ActionKind(lambda tab, s: actions.press(tab, s.target, s.key, s.modifiers), ("key",)),
    "hover": ActionKind(lambda tab, s: actions.hover(tab, s.target), ("target-or-point",), humanizable=True),
    "focus": ActionKind(lambda tab, s: actions.focus(tab, s.target), ("target",)),
    "select": ActionKind(lambda tab, s: actions.select(tab, s.target, s.value if s.value is not None else s.text),
                         ("target", "value")),
    "scroll": ActionKind(lambda tab, s: actions.scroll(tab, s.target, dx=s.dx, dy=s.dy)),
    "scrollintoview": ActionKind(lambda tab, s: actions.scroll_into_view(tab, s.target), ("target",)),
    "drag": ActionKind(lambda tab, s: actions.drag(tab, s.target, s.drag_x, s.drag_y), ("target", "drag")),
    "check": ActionKind(_check(True), ("target",)),
    "uncheck": ActionKind(_check(False), ("target",)),
    "mouse-move": ActionKind(lambda tab, s: actions.mouse_move(tab, s.target)),
    "mouse-down": ActionKind(lambda tab, s: actions.mouse_button(tab, s.target, True, s.button, s.modifiers)),
    "mouse-up": ActionKind(lambda tab, s: actions.mouse_button(tab, s.target, False, s.button, s.modifiers)),
    "mouse-wheel": ActionKind(lambda tab, s: actions.mouse_wheel(tab, s.target, s.dx, s.dy)),
    "keyboard-type": ActionKind(lambda tab, s: actions.keyboard_type(tab, s.text), ("text",), humanizable=True),
    "keyboard-inserttext": ActionKind(lambda tab, s: actions.insert_text(tab, s.text), ("text",)),
    "keydown": ActionKind(lambda tab, s: actions.key_down(tab, s.key, s.modifiers), ("key",)),
    "keyup": ActionKind(lambda tab, s: actions.key_up(tab, s.key, s.modifiers), ("key",)),
}

# The kinds a person's hand can do differently from a script (cdp/humanize.py).
HUMANIZED = tuple(name for name, kind in ACTION_KINDS.items() if kind.humanizable)


# --- what a request of each kind must carry ------------------------------------------------------
def _has_target(given: Mapping[str, Any]) -> bool:
    return any(k in given for k in ("ref", "selector", "nodeId"))


# name -> (field to blame, whether ``given`` meets it, message). Checked in this order whatever the
# order of a kind's ``needs``: a request that lacks several things is told about the first of them.
_REQUIREMENTS: dict[str, tuple[str, Callable[[Mapping[str, Any]], bool], str]] = {
    "text": ("text", lambda g: "text" in g or "value" in g, "{kind} needs 'text'"),
    "target": ("ref", _has_target, "{kind} needs a target: 'ref', 'selector' or 'nodeId'"),
    "target-or-point": ("ref", lambda g: _has_target(g) or ("x" in g and "y" in g),
                        "{kind} needs a target: 'ref', 'selector', 'nodeId' or 'x' and 'y'"),
    "key": ("key", lambda g: bool(g.get("key")), "{kind} needs 'key'"),
    "value": ("value", lambda g: "value" in g or "text" in g, "{kind} needs 'value'"),
    "drag": ("dragX", lambda g: bool(g.get("dragX")) or bool(g.get("dragY")), "{kind} needs dragX or dragY"),
}


def missing_field(kind: str, given: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, message) of the first requirement of ``kind`` that ``given`` does not meet.

    ``given`` holds the validated request fields, camelCase as in the API (ref, selector, nodeId,
    x, y, text, value, key, dragX, dragY). None when every requirement is met, or for a kind
    that is not in ``ACTION_KINDS`` (the schema rejects that on its own).
    """
    spec = ACTION_KINDS.get(kind)
    if spec is None:
        return None
    for name, (field, met, message) in _REQUIREMENTS.items():
        if name in spec.needs and not met(given):
            return field, message.format(kind=kind)
    return None


# --- running a step ------------------------------------------------------------------------------
def run_kind(tab: Tab, step: Step) -> dict[str, Any]:
    """Dispatch a step to its action (the humanized one when asked for and there is one)."""
    spec = ACTION_KINDS.get(step.kind)
    if spec is None:
        raise ActionError(f"unknown action kind: {step.kind}")
    if step.humanize and step.kind in HUMANIZED and not step.mode:
        return run_humanized(tab, step)
    return spec.handler(tab, step)


def run_humanized(tab: Tab, step: Step) -> dict[str, Any]:
    """The kinds a person's hand can do, done the way a person would (cdp/humanize.py)."""
    rng = humanize.rng_for(tab)
    t, k = step.target, step.kind
    if k in ("click", "dblclick"):
        res = humanize.click(tab, t, rng, count=2 if k == "dblclick" else 1, button=step.button,
                             modifiers=step.modifiers)
        return _as_dblclick(res) if k == "dblclick" else res
    if k == "hover":
        return humanize.hover(tab, t, rng)
    if k == "type":
        return humanize.type_into(tab, t, step.text, rng, fast=step.fast)
    humanize.human_type(tab, step.text, rng, fast=step.fast)  # keyboard-type: at the focus
    return {"typed": True, "len": len(step.text), "human": True}


WINDOW_OPENED = "windowOpened"  # in a step's result: the page opened a window (a tab) meanwhile


def _window_opens(tab: Tab) -> int:
    """How many windows the tab's pages have opened (window.open, target=_blank, ...) since we watch."""
    if "window_opens" not in tab.state:
        tab.state["window_opens"] = 0

        def opened(_session: str, _p: dict[str, Any]) -> None:
            tab.state["window_opens"] += 1

        tab.on("Page.windowOpen", opened)
    return tab.state["window_opens"]


def perform(tab: Tab, step: Step, *, guard: bool = True, wait_nav_s: float = 1.0,
            navigate_timeout_s: float = 30.0) -> dict[str, Any]:
    """Run a step with its guards: dialog handling, waitNav, and the navigation guard.

    Without ``wait_nav`` a step that makes the main frame load a new document raises
    NavigationChanged (the page's refs are gone, and the agent should know); with it, the step
    waits (bounded) for the new page, and with ``dismiss_banners`` clears its consent banner.
    """
    epoch, loads = tab.document_epoch, tab.loads_started
    opens = _window_opens(tab)
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
        except (CDPError, CDPTimeout, TargetClosed):
            pass  # the old document went away under us (a navigation, seen below) or did not answer
        except DialogBlocking:
            pass  # a dialog the step opened late stays open, and blocks the next call, until POST /dialog
    if _window_opens(tab) != opens:
        result[WINDOW_OPENED] = True  # the caller learns which tab from the browser (it may come later)
    navigated = tab.document_epoch != epoch or tab.loads_started != loads
    if step.wait_nav:
        if not navigated:
            tab.wait_for(lambda: tab.loads_started != loads or tab.document_epoch != epoch, wait_nav_s)
        if tab.loads_started != loads or tab.document_epoch != epoch:
            tab.wait_for(lambda: tab.document_epoch != epoch, navigate_timeout_s)
            main = tab.frames.get(tab.main_frame_id or "")
            wait_loaded(tab, tab.main_frame_id, main.loader_id if main else None, "dom", navigate_timeout_s)
            result["navigated"] = True
        if step.dismiss_banners:
            dismiss_banners(tab)  # best effort, bounded: a page without a banner is left as it is
        return result
    if guard and navigated:
        raise NavigationChanged(tab.url, result)
    return result
