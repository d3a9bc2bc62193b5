"""The debug protocol's commands, run on a tab's worker by our own action engine (``cdp.steps``).

Each command answers one ``command_result`` (requestId, requestType, success, result or error,
duration), except the four requests the protocol answers with their data message carrying the
requestId (ui_tree, dom_snapshot, state_update, screenshot); those answer a command_result only
when they fail. Targets resolve in the protocol's order: a stableId (our ref such as ``e5`` when it
looks like one, else data-testid, then element id), then the CSS selector, then text; role narrows
a text (``role:button Buy``) or names the element alone.
"""
from __future__ import annotations

import base64
import json
import logging
import struct
import time
from collections.abc import Callable
from typing import Any, Protocol

from cdp import content, elements, navigation, selectors, snapshot
from cdp.errors import (
    ActionError,
    BadSelector,
    CDPError,
    CDPTimeout,
    DialogBlocking,
    NavigationError,
    NoSuchElement,
    StaleRef,
    TargetClosed,
    UnknownRef,
)
from cdp.input import Target
from cdp.page import Element, call_on, evaluate
from cdp.steps import Step, perform

from ..web.errors import APIError
from . import protocol

log = logging.getLogger(__name__)


class DebugApp(Protocol):
    """What the commands need of the tab's debug app (``tab_app.TabApp``): where answers go, and
    ``check_url(url)``, the bridge's navigation policy for ``navigate`` (http(s) only): the URL to
    open, or the API's error (``APIError``) when the policy refuses it."""

    session_id: str
    allow_eval: bool
    check_url: Callable[[str], str]

    def emit(self, msg: dict[str, Any]) -> None: ...

    def send(self, type: str, **fields: Any) -> None: ...

NAVIGATE_TIMEOUT_S = 30.0
EVAL_TIMEOUT_S = 10.0
DOM_SNAPSHOT_CHARS = 2_000_000
STANDARD_SCOPES = ("location", "viewport", "navigator", "screen", "cookies", "localStorage", "sessionStorage")


class Refused(Exception):
    """A command that fails with one of the protocol's error codes."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


# Whether a person could act on the element: rendered with a box, and not disabled.
_STATE = """function() {
  const s = this.ownerDocument.defaultView.getComputedStyle(this);
  const r = this.getBoundingClientRect();
  const shown = s.display !== 'none' && s.visibility !== 'hidden' && s.visibility !== 'collapse' &&
                (!this.checkVisibility || this.checkVisibility()) && r.width > 0 && r.height > 0;
  let disabled = !!(this.matches && this.matches(':disabled'));
  for (let n = this; !disabled && n && n.nodeType === 1; n = n.parentElement)
    if (n.getAttribute('aria-disabled') === 'true') disabled = true;
  return {visible: shown, disabled};
}"""

# For the UI tree: what our snapshot does not carry, for each ref of one frame.
_EXTRAS = """(refs => refs.map(ref => {
  const el = globalThis.__pinchtab.resolve(ref);
  if (!el || el.nodeType !== 1) return null;
  const path = [];
  for (let n = el; n && n.nodeType === 1 && n !== document.documentElement; n = n.parentElement) {
    if (n.id) { path.unshift('#' + CSS.escape(n.id)); break; }
    let part = n.localName;
    const same = n.parentElement ? [...n.parentElement.children].filter(c => c.localName === n.localName) : [];
    if (same.length > 1) part += ':nth-of-type(' + (same.indexOf(n) + 1) + ')';
    path.unshift(part);
  }
  const s = getComputedStyle(el), r = el.getBoundingClientRect();
  return {selector: path.join(' > '), type: el.getAttribute('type') || undefined,
          name: el.getAttribute('name') || undefined,
          visible: s.display !== 'none' && s.visibility !== 'hidden' && r.width > 0 && r.height > 0};
}))"""

_BUILTIN_STATE = """(() => {
  const dump = (s) => {
    const o = {};
    try { for (let i = 0; i < s.length; i++) { const k = s.key(i); o[k] = s.getItem(k); } } catch (e) {}
    return o;
  };
  const cookies = {};
  try {
    for (const c of document.cookie.split(';')) {
      const i = c.indexOf('='), k = (i < 0 ? c : c.slice(0, i)).trim();
      if (k) cookies[k] = i < 0 ? '' : c.slice(i + 1);
    }
  } catch (e) {}
  return {
    location: {href: location.href, origin: location.origin, pathname: location.pathname, search: location.search,
               hash: location.hash, host: location.host},
    viewport: {innerWidth, innerHeight, scrollX: Math.round(scrollX), scrollY: Math.round(scrollY)},
    navigator: {userAgent: navigator.userAgent, language: navigator.language, languages: [...navigator.languages],
                online: navigator.onLine, cookieEnabled: navigator.cookieEnabled, platform: navigator.platform},
    screen: {width: screen.width, height: screen.height, availWidth: screen.availWidth,
             availHeight: screen.availHeight, colorDepth: screen.colorDepth, pixelRatio: devicePixelRatio},
    cookies, localStorage: dump(localStorage), sessionStorage: dump(sessionStorage),
  };
})()"""

# In the page's own world (that is where the app put it), only when asked for state.
_CUSTOM_STATE = """(async (scope) => {
  const p = globalThis.__pinchtab__;
  if (!p || typeof p.state !== 'function') return {defined: false};
  const value = await p.state(scope);
  return {defined: true, value: value === undefined ? null : JSON.parse(JSON.stringify(value))};
})(%s)"""


class Commands:
    """Runs the protocol's commands for one ``TabApp`` (every method on the tab's worker)."""

    def __init__(self, app: DebugApp) -> None:
        self.app = app
        self.tab = app.tab

    def run(self, msg: dict[str, Any]) -> None:
        """Run one command and emit its answer; never raises."""
        kind, rid = msg["type"], msg["requestId"]
        started = time.monotonic()
        handler = getattr(self, "do_" + kind, None)
        try:
            if handler is None:
                raise Refused("INVALID_COMMAND", f"unknown command {kind!r}")
            result = handler(msg)
        except Exception as exc:
            code, message = error_of(exc)
            self._answer(rid, kind, started, success=False, error_code=code, message=message)
            return
        if result is not _DATA_SENT:
            self._answer(rid, kind, started, success=True, result=result)

    def _answer(self, rid: str, kind: str, started: float, **fields: Any) -> None:
        self.app.emit(protocol.command_result(self.app.session_id, rid, kind,
                                              duration_ms=(time.monotonic() - started) * 1000, **fields))

    # --- targets -------------------------------------------------------------------------------------
    def resolve(self, target: dict[str, Any]) -> tuple[str, Element]:
        """The first candidate selector that names an element, and that element; NoSuchElement if none."""
        for candidate in candidates(target):
            try:
                return candidate, selectors.resolve(self.tab, candidate)
            except (NoSuchElement, StaleRef, UnknownRef):
                continue
        raise NoSuchElement(f"no element matches {json.dumps(target, ensure_ascii=False)}")

    def _actionable(self, target: dict[str, Any], *, visible: bool = True, enabled: bool = True) -> str:
        selector, el = self.resolve(target)
        state = call_on(self.tab, el, _STATE) or {}
        if enabled and state.get("disabled"):
            raise Refused("TARGET_DISABLED", f"the element {selector!r} is disabled")
        if visible and not state.get("visible", True):
            raise Refused("TARGET_NOT_VISIBLE", f"the element {selector!r} is not visible (hidden or zero-size)")
        return selector

    def _step(self, kind: str, selector: str = "", **fields: Any) -> dict[str, Any]:
        # guard off: a click that loads a new page is an ordinary thing for an app to do.
        return perform(self.tab, Step(kind, Target(selector=selector), **fields), guard=False)

    # --- commands answered with a command_result ------------------------------------------------------
    def do_click(self, msg: dict[str, Any]) -> Any:
        # Not for visibility: the engine clicks a covered or styled-away control through the DOM.
        return self._step("click", self._actionable(msg["target"], visible=False))

    def do_hover(self, msg: dict[str, Any]) -> Any:
        return self._step("hover", self._actionable(msg["target"], enabled=False))

    def do_focus(self, msg: dict[str, Any]) -> Any:
        return self._step("focus", self._actionable(msg["target"]))

    def do_type(self, msg: dict[str, Any]) -> Any:
        selector = self._actionable(msg["target"])
        opts, text = msg.get("options") or {}, msg["text"]
        if opts.get("clear"):
            self._step("fill", selector, text="")
        delay_s = float(opts.get("delay") or 0) / 1000
        if delay_s:
            self._step("focus", selector)
            for ch in text:  # a character at a time, as slowly as the app asked (the schema caps it)
                self._step("keyboard-type", text=ch)
                self.tab.wait_for(lambda: False, delay_s)
        else:
            self._step("type", selector, text=text)
        if opts.get("pressEnter"):
            self._step("press", key="Enter")
        return {"typed": True, "len": len(text)}

    def do_select(self, msg: dict[str, Any]) -> Any:
        selector = self._actionable(msg["target"])
        if msg.get("value") is not None:
            value = msg["value"]
        elif msg.get("label") is not None:
            value = msg["label"]
        elif msg.get("index") is not None:
            value = call_on(self.tab, selectors.resolve(self.tab, selector),
                            "function(i){ const o = this.options && this.options[i]; return o ? o.value : null; }",
                            msg["index"])
            if value is None:
                raise Refused("TARGET_NOT_FOUND", f"the element {selector!r} has no option {msg['index']}")
        else:
            raise Refused("INVALID_COMMAND", "select needs a value, label or index")
        return self._step("select", selector, value=value)

    def do_scroll(self, msg: dict[str, Any]) -> Any:
        if msg.get("target"):
            return self._step("scroll", self.resolve(msg["target"])[0])
        main = self._main()
        x, y = float(msg.get("x") or 0), float(msg.get("y") or 0)
        pos = evaluate(self.tab, main, f"(scrollTo({{left: {x}, top: {y}, behavior: 'instant'}}), [scrollX, scrollY])")
        return {"scrolled": True, "x": pos[0], "y": pos[1]}

    def do_navigate(self, msg: dict[str, Any]) -> Any:
        # The policy every navigation passes; a javascript: URL would run code even with evaluate off.
        try:
            url = self.app.check_url(msg["url"])
        except APIError as refused:
            raise Refused("INVALID_COMMAND", refused.message) from None
        return navigation.navigate(self.tab, url, timeout_s=NAVIGATE_TIMEOUT_S, wait_for="dom")

    def do_evaluate(self, msg: dict[str, Any]) -> Any:
        if not self.app.allow_eval:
            raise Refused("EVAL_DISABLED", "evaluate is disabled on this bridge (security.allowEvaluate)")
        # In the page's own world: the agent debugs the app, whose globals live there.
        res = self.tab.call("Runtime.evaluate", {"expression": msg["code"], "returnByValue": True,
                                                 "awaitPromise": True, "userGesture": True, "replMode": True,
                                                 "timeout": EVAL_TIMEOUT_S * 1000}, timeout_s=EVAL_TIMEOUT_S + 2)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            text = (d.get("exception") or {}).get("description") or d.get("text", "script error")
            raise Refused("EVAL_ERROR", str(text).split("\n")[0])
        value = res.get("result") or {}
        if "value" in value:
            return value["value"]
        return value.get("unserializableValue") or value.get("description")

    # --- requests answered with their data message -----------------------------------------------------
    def do_request_ui_tree(self, msg: dict[str, Any]) -> Any:
        self.app.send("ui_tree", requestId=msg["requestId"], items=self.ui_tree())
        return _DATA_SENT

    def do_request_dom_snapshot(self, msg: dict[str, Any]) -> Any:
        html = elements.html(self.tab)
        fields: dict[str, Any] = {"html": html[:DOM_SNAPSHOT_CHARS], "requestId": msg["requestId"]}
        if len(html) > DOM_SNAPSHOT_CHARS:
            fields["truncated"] = True
        self.app.send("dom_snapshot", **fields)
        return _DATA_SENT

    def do_request_screenshot(self, msg: dict[str, Any]) -> Any:
        png = content.screenshot(self.tab, fmt="png", full_page=bool(msg.get("fullPage")),
                                 selector=msg.get("selector") or "")
        width, height = png_size(png)
        self.app.send("screenshot", requestId=msg["requestId"], data=base64.b64encode(png).decode(),
                      width=width, height=height)
        return _DATA_SENT

    def do_request_state(self, msg: dict[str, Any]) -> Any:
        """The standard scopes (read in our world) and the app's own from ``window.__pinchtab__.state``."""
        scope, rid = msg.get("scope"), msg["requestId"]
        builtin: dict[str, Any] = evaluate(self.tab, self._main(), _BUILTIN_STATE) or {}
        custom = self._custom_state(scope)
        updates: list[tuple[str, Any]] = []
        if scope:
            if scope in builtin:
                updates.append((scope, builtin[scope]))
            if custom is not None:
                updates.append((scope, custom))
            if not updates:
                updates.append((scope, None))  # answered, so the agent is not left waiting
        else:
            updates += [(s, builtin[s]) for s in STANDARD_SCOPES if s in builtin]
            if isinstance(custom, dict):
                updates += list(custom.items())
            elif custom is not None:
                updates.append(("app", custom))
        for name, state in updates:
            self.app.send("state_update", scope=str(name), state=state, requestId=rid)
        return _DATA_SENT

    def _custom_state(self, scope: str | None) -> Any:
        res = self.tab.call("Runtime.evaluate", {"expression": _CUSTOM_STATE % json.dumps(scope),
                                                 "returnByValue": True, "awaitPromise": True,
                                                 "timeout": EVAL_TIMEOUT_S * 1000}, timeout_s=EVAL_TIMEOUT_S + 2)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            text = (d.get("exception") or {}).get("description") or d.get("text", "script error")
            raise Refused("UNKNOWN_ERROR", "window.__pinchtab__.state failed: " + str(text).split("\n")[0])
        out = (res.get("result") or {}).get("value") or {}
        return out.get("value") if out.get("defined") else None

    def ui_tree(self) -> list[dict[str, Any]]:
        """The interactive elements of our snapshot as UiTreeItems (stableId = our ref)."""
        nodes = snapshot.take(self.tab, filter="interactive", details=True)
        table = snapshot.refs_of(self.tab)
        by_frame: dict[str, list[str]] = {}
        for node in nodes:
            by_frame.setdefault(table.frame_of.get(node["ref"], self.tab.main_frame_id or ""), []).append(node["ref"])
        extras: dict[str, dict[str, Any]] = {}
        for frame_id, refs in by_frame.items():
            frame = self.tab.frames.get(frame_id)
            if frame is None:
                continue
            try:
                got = evaluate(self.tab, frame, f"{_EXTRAS}({json.dumps(refs)})") or []
            except CDPError:
                continue  # a frame that went away meanwhile: its items keep what the snapshot knows
            extras.update({ref: e for ref, e in zip(refs, got, strict=False) if e})
        return [ui_item(node, extras.get(node["ref"], {})) for node in nodes]

    def _main(self) -> Any:
        main = self.tab.frames.get(self.tab.main_frame_id or "")
        if main is None:
            raise Refused("UNKNOWN_ERROR", "the tab has no document yet")
        return main


_DATA_SENT = object()


def candidates(target: dict[str, Any]) -> list[str]:
    """Our unified selectors for a protocol target, in the protocol's resolution order."""
    out: list[str] = []
    stable, selector, text, role = (target.get(k) or "" for k in ("stableId", "selector", "text", "role"))
    if stable:
        if selectors.REF.match(stable):
            out.append(stable)
        out += [f"css:[data-testid={css_string(stable)}]", f"css:[id={css_string(stable)}]"]
    if selector:
        out.append(selector)
    if text:
        if role:
            out.append(f"role:{role} {text}")
        out.append(f"text:{text}")
    elif role and not (stable or selector):
        out.append(f"role:{role}")
    return out


def css_string(value: str) -> str:
    """``value`` as a quoted CSS string."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\a ").replace("\r", "\\d ")
    return f'"{escaped}"'


def ui_item(node: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    """One snapshot node (and what ``_EXTRAS`` read of it) as a protocol UiTreeItem."""
    meta: dict[str, Any] = {"tagName": node.get("tag") or ""}
    for key, value in (("type", extra.get("type")), ("name", extra.get("name")), ("href", node.get("href")),
                       ("placeholder", node.get("placeholder"))):
        if value:
            meta[key] = str(value)
    item: dict[str, Any] = {"stableId": node["ref"], "selector": extra.get("selector") or node["ref"],
                            "role": node.get("role") or "generic", "disabled": bool(node.get("disabled")),
                            "visible": bool(extra.get("visible", True)), "meta": meta}
    text = node.get("text") or node.get("name")
    if text:
        item["text"] = str(text)
    label = node.get("label") or node.get("name")
    if label:
        item["label"] = str(label)
    if "checked" in node and node["checked"] is not None:
        item["checked"] = node["checked"] is True or node["checked"] == "true"
    if node.get("value") is not None:
        item["value"] = str(node["value"])
    if node.get("testid"):
        meta["testId"] = node["testid"]
    return item


def png_size(png: bytes) -> tuple[int, int]:
    """A PNG's width and height, from its IHDR chunk."""
    if len(png) < 24 or png[:8] != b"\x89PNG\r\n\x1a\n":
        return 0, 0
    width, height = struct.unpack(">II", png[16:24])
    return width, height


def error_of(exc: BaseException) -> tuple[str, str]:
    """The protocol's error code and a message for what a command raised."""
    if isinstance(exc, Refused):
        return exc.code, str(exc)
    if isinstance(exc, (NoSuchElement, StaleRef, UnknownRef)):
        return "TARGET_NOT_FOUND", str(exc)
    if isinstance(exc, BadSelector):
        return "INVALID_COMMAND", str(exc)
    if isinstance(exc, CDPTimeout):
        return "TIMEOUT", str(exc) or "the command did not finish in time"
    if isinstance(exc, NavigationError):
        return "NAVIGATION_FAILED", str(exc)
    if isinstance(exc, ActionError):
        words = str(exc)
        if "no visible point" in words or "cannot take focus" in words:
            return "TARGET_NOT_VISIBLE", words
        return "UNKNOWN_ERROR", words
    if isinstance(exc, (DialogBlocking, TargetClosed, CDPError)):
        return "UNKNOWN_ERROR", str(exc)
    log.exception("debug: a command failed unexpectedly", exc_info=exc)
    return "UNKNOWN_ERROR", f"{type(exc).__name__}: {exc}"
