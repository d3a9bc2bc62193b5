"""The action verbs of ``pinchtab``: ``click``, ``dblclick``, ``hover``, ``focus``, ``type``, ``fill``,
``press``, ``select``, ``check``, ``uncheck``, ``scroll``, ``scrollintoview``, ``drag``, ``mouse``,
``keyboard``, ``keydown``, ``keyup`` and ``dialog``. Each is one ``POST /action`` (``drag`` between two
points a short ``/actions`` list, ``dialog`` a ``/dialog``), printing OK, then what ``--snap`` and
``--text`` ask for.
"""
from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import Any

from .cli_verbs import Ctx, UsageError, Verb, Verbs, print_after, target
from .rest import ClientError

__all__ = ["register"]


# --------------------------------------------------------------------------
# Actions


def _pointer(ctx: Ctx, sel: str | None, kind: str) -> dict[str, Any]:
    """The target of a pointer action: ``--css``, ``--x/--y``, or the selector argument."""
    fields: dict[str, Any] = {}
    if ctx.opt("x") is not None or ctx.opt("y") is not None:
        fields.update(x=ctx.opt("x") or 0, y=ctx.opt("y") or 0)
    elif ctx.opt("css"):
        fields["selector"] = ctx.opt("css")
    elif sel:
        fields.update(target(sel))
    else:
        raise UsageError(f"pinchtab {kind} <selector>  or  pinchtab {kind} --css <selector>  or  "
                         f"pinchtab {kind} --x <num> --y <num>")
    return fields


def act(ctx: Ctx, body: dict[str, Any]) -> dict[str, Any]:
    """POST /action; print OK (or the JSON), then what the post-action flags ask for."""
    if ctx.opt("snap"):
        body["snap"] = ctx.opt("snap")  # the snapshot comes back in the same answer
    if ctx.opt("humanize"):
        body["humanize"] = True
    reply = ctx.post("/action", body)
    ctx.out.answer(reply, "OK")
    print_after(ctx, ctx.tab(), reply)
    return reply


def action(kind: str, fields: Callable[[Ctx], dict[str, Any]]) -> Verb:
    def run(ctx: Ctx) -> None:
        act(ctx, {"kind": kind, **fields(ctx)})

    return run


def click_fields(kind: str) -> Callable[[Ctx], dict[str, Any]]:
    def fields(ctx: Ctx) -> dict[str, Any]:
        body = _pointer(ctx, ctx.opt("selector"), kind)
        if ctx.opt("wait_nav"):
            body["waitNav"] = True
            if ctx.opt("dismiss_banners"):
                body["dismissBanners"] = True
        for flag, key in (("dialog_action", "dialogAction"), ("dialog_text", "dialogText"), ("mode", "mode"),
                          ("button", "button")):
            if ctx.opt(flag):
                body[key] = ctx.opt(flag)
        return body

    return fields


def press_fields(ctx: Ctx) -> dict[str, Any]:
    """``press <key>``; ``press <selector> <key>`` focuses the element first."""
    if ctx.args.second:
        return {**target(ctx.args.first), "key": ctx.args.second}
    return {"key": ctx.args.first}


_SCROLL_PX = 800


def scroll_fields(ctx: Ctx) -> dict[str, Any]:
    """``scroll down|up|left|right|<pixels>|<selector>`` (pixels and directions scroll the page)."""
    arg = ctx.args.where
    if ctx.opt("css"):
        return {"selector": ctx.opt("css")}
    if arg is None or re.fullmatch(r"-?\d+", arg):
        return {"scrollY": int(arg) if arg is not None else _SCROLL_PX}
    way = {"down": ("scrollY", _SCROLL_PX), "up": ("scrollY", -_SCROLL_PX),
           "right": ("scrollX", _SCROLL_PX), "left": ("scrollX", -_SCROLL_PX)}.get(arg.lower())
    if way:
        return {way[0]: way[1]}
    return target(arg)


def drag(ctx: Ctx) -> None:
    """``drag <sel> --drag-x N --drag-y N`` (one drag), or ``drag <from> <to>`` (each a selector or x,y)."""
    a = ctx.args
    if a.drag_x or a.drag_y:
        if a.to:
            raise UsageError("pinchtab drag <selector> --drag-x <n> --drag-y <n>")
        act(ctx, {"kind": "drag", **target(a.source), "dragX": a.drag_x or 0, "dragY": a.drag_y or 0})
        return
    if not a.to:
        raise UsageError("pinchtab drag <from> <to>  or  pinchtab drag <selector> --drag-x <n> --drag-y <n>")

    def point(raw: str) -> dict[str, Any]:
        m = re.fullmatch(r"\s*(-?[\d.]+)\s*,\s*(-?[\d.]+)\s*", raw)
        return {"x": float(m.group(1)), "y": float(m.group(2))} if m else target(raw)

    button = {"button": a.button} if a.button else {}
    steps = [{"kind": "mouse-move", **point(a.source)}, {"kind": "mouse-down", **button},
             {"kind": "mouse-move", **point(a.to)}, {"kind": "mouse-up", **button}]
    reply = ctx.post("/actions", {"actions": steps, "stopOnError": True})
    failed = [r for r in reply.get("results", []) if not r.get("success")]
    if failed:
        raise ClientError(f"drag step {failed[0].get('index')}: {failed[0].get('error')}", status=400,
                          code="action_failed")
    ctx.out.answer(reply, "OK")


def mouse(ctx: Ctx) -> None:
    """``mouse move <x> <y>|<sel>``, ``mouse down|up [sel]``, ``mouse wheel [dy|sel] --dx --dy``."""
    a = ctx.args
    what, rest = a.what, list(a.rest)
    body: dict[str, Any] = {"kind": f"mouse-{what}"}
    if a.button and what in ("down", "up"):
        body["button"] = a.button
    if what == "move":
        if len(rest) == 2:
            try:
                body.update(x=float(rest[0]), y=float(rest[1]))
            except ValueError:
                raise UsageError("pinchtab mouse move <x> <y>") from None
        elif len(rest) == 1:
            body.update(target(rest[0]))
        else:
            body.update(_pointer(ctx, None, "mouse move"))
    elif what in ("down", "up"):
        if len(rest) > 1:
            raise UsageError(f"pinchtab mouse {what} [selector]")
        if rest or ctx.opt("css") or ctx.opt("x") is not None or ctx.opt("y") is not None:
            body.update(_pointer(ctx, rest[0] if rest else None, f"mouse {what}"))
    else:  # wheel
        if len(rest) > 1:
            raise UsageError("pinchtab mouse wheel <dy> [--dx <n>]  or  pinchtab mouse wheel [selector]")
        if rest and re.fullmatch(r"-?\d+", rest[0]):
            body["deltaY"] = int(rest[0])
        elif rest:
            body.update(target(rest[0]))
        if a.dx is not None:
            body["deltaX"] = a.dx
        if a.dy is not None:
            body["deltaY"] = a.dy
    act(ctx, body)


def keyboard(ctx: Ctx) -> None:
    """``keyboard type <text>`` (key events) or ``keyboard inserttext <text>`` (one insert)."""
    kind = "keyboard-type" if ctx.args.how == "type" else "keyboard-inserttext"
    act(ctx, {"kind": kind, "text": " ".join(ctx.args.text)})


def dialog(ctx: Ctx) -> None:
    """POST /dialog accept|dismiss [text]."""
    body: dict[str, Any] = {"action": ctx.args.how}
    if ctx.args.text:
        body["text"] = " ".join(ctx.args.text)
    ctx.out.answer(ctx.post("/dialog", body), "OK")


# --------------------------------------------------------------------------
# The parsers


def _selector_arg(p: argparse.ArgumentParser, *, optional: bool = False) -> None:
    p.add_argument("selector", nargs="?" if optional else None,
                   help="a ref from snap (e5) or a selector (CSS, xpath:, text:, role:...)")


def _pointer_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--css", metavar="SEL", help="a CSS selector instead of a ref")
    p.add_argument("--x", type=float, help="x coordinate (CSS pixels)")
    p.add_argument("--y", type=float, help="y coordinate (CSS pixels)")
    p.add_argument("--humanize", action="store_true", help="a human-like mouse path")


def register(sub: Any) -> None:
    """Add the action verbs to the ``pinchtab`` subparsers (:class:`app.clients.cli.Subcommands`)."""
    v = Verbs(sub)

    for name, help_ in (("click", "click an element"), ("dblclick", "double-click an element"),
                        ("hover", "move the mouse over an element")):
        p = v.add(name, help_, action(name, click_fields(name)), post=True, post_text=name == "click")
        _selector_arg(p, optional=True)
        _pointer_flags(p)
        if name == "click":
            p.add_argument("--wait-nav", action="store_true", help="the click loads a new page: wait for it")
            p.add_argument("--dismiss-banners", action="store_true", help="with --wait-nav: dismiss banners after")
            p.add_argument("--dialog-action", choices=("accept", "dismiss"), help="answer a dialog the click opens")
            p.add_argument("--dialog-text", metavar="TEXT", help="the prompt() answer, with --dialog-action accept")
            p.add_argument("--mode", choices=("dom", "dispatch"), help="deliver the click through the DOM")
    p = v.add("focus", "focus an element", action("focus", click_fields("focus")))
    _selector_arg(p, optional=True)
    p.add_argument("--css", metavar="SEL", help="a CSS selector instead of a ref")
    p = v.add("type", "type text into an element, key by key",
              action("type", lambda c: {**target(c.args.selector), "text": " ".join(c.args.text)}))
    _selector_arg(p)
    p.add_argument("text", nargs="+")
    p.add_argument("--humanize", action="store_true", help="human typing rhythm")
    p = v.add("fill", "set an input's value at once",
              action("fill", lambda c: {**target(c.args.selector), "text": " ".join(c.args.text)}), post_text=True)
    _selector_arg(p)
    p.add_argument("text", nargs="+")
    p = v.add("press", "press a key (Enter, Tab, Control+a)", action("press", press_fields), post_text=True,
              description="Press a key: `press <key>`, or `press <selector> <key>` to focus an element first.")
    p.add_argument("first", metavar="key")
    p.add_argument("second", nargs="?", metavar="key2", help=argparse.SUPPRESS)
    p = v.add("select", "choose an option of a <select>",
              action("select", lambda c: {**target(c.args.selector), "value": c.args.value}), post_text=True)
    _selector_arg(p)
    p.add_argument("value", help="the option's value or visible text")
    for name, help_ in (("check", "check a checkbox or radio"), ("uncheck", "uncheck a checkbox")):
        p = v.add(name, help_, action(name, lambda c: target(c.args.selector)))
        _selector_arg(p)
    p = v.add("scroll", "scroll the page (down, up, left, right, pixels) or an element into view",
              action("scroll", scroll_fields), post=True)
    p.add_argument("where", nargs="?", help="down|up|left|right|<pixels>|<selector> (default: down)")
    p.add_argument("--css", metavar="SEL", help="scroll this CSS selector into view")
    p = v.add("scrollintoview", "scroll an element into view", action("scrollintoview", click_fields("scrollintoview")))
    _selector_arg(p, optional=True)
    p.add_argument("--css", metavar="SEL", help="a CSS selector instead of a ref")
    p = v.add("drag", "drag an element by an offset, or from one point to another", drag)
    p.add_argument("source", metavar="from")
    p.add_argument("to", nargs="?")
    p.add_argument("--drag-x", type=int, help="horizontal offset in pixels")
    p.add_argument("--drag-y", type=int, help="vertical offset in pixels")
    p.add_argument("--button", choices=("left", "right", "middle"))
    p = v.add("mouse", "low-level mouse: move, down, up, wheel", mouse)
    p.add_argument("what", choices=("move", "down", "up", "wheel"))
    p.add_argument("rest", nargs="*", metavar="ARG", help="x y | selector | wheel delta")
    _pointer_flags(p)
    p.add_argument("--button", choices=("left", "right", "middle"))
    p.add_argument("--dx", type=int, help="wheel delta x")
    p.add_argument("--dy", type=int, help="wheel delta y")
    p = v.add("keyboard", "type at the focused element: keyboard type|inserttext <text>", keyboard)
    p.add_argument("how", choices=("type", "inserttext"))
    p.add_argument("text", nargs="+")
    for name in ("keydown", "keyup"):
        p = v.add(name, f"send one {name} event", action(name, lambda c: {"key": c.args.key}))
        p.add_argument("key")
    p = v.add("dialog", "accept or dismiss the open JavaScript dialog", dialog)
    p.add_argument("how", choices=("accept", "dismiss"))
    p.add_argument("text", nargs="*", help="the prompt() answer")
