"""The unified selector: one string that names an element (``css:``, ``xpath:``, ``text:``, ``role:``, ... or a ref).

``css:``, ``xpath:``, ``text:``, ``role:<role> [name]``, ``label:``, ``placeholder:``, ``alt:``,
``title:``, ``testid:``, ``ref:``, ``find:``/``semantic:`` (natural language, via the matcher),
wrapped by ``first:``, ``last:`` or ``nth:<n>:`` (1-based). Without a prefix: ``//...`` or
``(//...`` is XPath, ``e12`` is a ref, anything else is CSS.

Parsing is pure. Resolving runs on the tab's worker and searches every frame of the tab in
document order (the main frame, then its frames, same-process or not), so a selector reaches into
iframes as a person's eye would; with a frame scope (``POST /frame``, ``cdp.frame_scope``) only
that frame and the frames inside it. Refs name one node each and resolve wherever it is.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass

from . import frame_scope, snapshot
from .errors import BadSelector, CDPError, NoSuchElement, StaleRef, UnknownRef
from .find import match
from .page import Element, evaluate, frames_in_order
from .tab import Frame, Tab

KINDS = ("css", "xpath", "text", "role", "label", "placeholder", "alt", "title", "testid", "ref", "find",
         "semantic")
STRUCTURED = ("role", "label", "placeholder", "alt", "title", "testid")
REF = re.compile(r"^e\d+$")


@dataclass(frozen=True)
class Selector:
    kind: str
    value: str
    which: int | None = None  # None: the first match; 0-based index; -1: the last

    def describe(self) -> str:
        return f"{self.kind} selector {self.value!r}"


def parse(raw: str) -> Selector:
    """Parse a unified selector. Raises BadSelector for an empty or malformed one."""
    try:
        return _parse(raw)
    except ValueError as exc:
        raise BadSelector(str(exc)) from None


def _parse(raw: str) -> Selector:
    s = raw.strip()
    if not s:
        raise ValueError("empty selector")
    which: int | None = None
    if s.startswith("first:"):
        which, s = 0, s[6:]
    elif s.startswith("last:"):
        which, s = -1, s[5:]
    elif s.startswith("nth:"):
        m = re.match(r"nth:(\d+):(.+)$", s, re.S)
        if not m or int(m.group(1)) < 1:
            raise ValueError(f"nth selector must be nth:<n>:<selector> with n >= 1, got {raw!r}")
        which, s = int(m.group(1)) - 1, m.group(2)
    inner = parse_plain(s.strip())
    return Selector(inner.kind, inner.value, which)


def parse_plain(s: str) -> Selector:
    m = re.match(r"^([a-z]+):(.*)$", s, re.S)
    if m and m.group(1) in KINDS:
        kind, value = m.group(1), m.group(2).strip()
        if kind == "semantic":
            kind = "find"
        if not value:
            raise ValueError(f"{kind}: selector needs a value")
        if kind == "ref" and not REF.match(value):
            raise ValueError(f"ref: selector needs a ref like e12, got {value!r}")
        return Selector(kind, value)
    if s.startswith("//") or s.startswith("(//"):
        return Selector("xpath", s)
    if REF.match(s):
        return Selector("ref", s)
    return Selector("css", s)


def role_and_name(value: str) -> tuple[str, str]:
    """``role:button Log in`` -> ("button", "Log in")."""
    role, _, name = value.partition(" ")
    return role.strip().lower(), name.strip()


# --- resolving ---------------------------------------------------------------------------------
def refuse_invalid(sel: Selector, exc: CDPError) -> None:
    """Raise BadSelector when the page threw because ``sel`` is not a selector at all (CSS or XPath
    syntax): asking again will not help. Other errors (a frame gone mid-search) are the caller's."""
    if "SyntaxError" in exc.cdp_message or "not a valid" in exc.cdp_message:
        raise BadSelector(f"{sel.describe()} is not valid: {exc.cdp_message}") from None


def _dom_pick(tab: Tab, frame: Frame, sel: Selector, index: int) -> tuple[int, dict | None]:
    """Ask one frame for its ``index``-th match (negative: from the end) in one call.

    The answer is the element when there is one, else the number of matches (so the caller can
    go on counting in the next frame).
    """
    expr = (f"(r => r.el || r.count)(globalThis.__pinchtab.pick({json.dumps(sel.kind)}, "
            f"{json.dumps(sel.value)}, {index}))")
    try:
        obj = evaluate(tab, frame, expr, by_value=False)
    except CDPError as exc:
        refuse_invalid(sel, exc)
        return 0, None  # a frame that went away mid-search
    if obj.get("type") == "number":
        return int(obj.get("value", 0)), None
    return -1, obj  # found (the count does not matter then)


def snapshot_root(tab: Tab, selector: str = "") -> Element | None:
    """Where a snapshot starts: the element ``selector`` names, else the document of the frame the
    tab is scoped to (``POST /frame``), else None (the whole page)."""
    return resolve(tab, selector) if selector else frame_scope.scoped_root(tab)


def resolve(tab: Tab, raw: str | Selector, *, whole_page: bool = False) -> Element:
    """The element a selector names (the first match unless first:/last:/nth: says otherwise), in
    the tab's frame scope unless ``whole_page``."""
    sel = parse(raw) if isinstance(raw, str) else raw
    if sel.kind == "ref":
        return snapshot.resolve_ref(tab, sel.value)
    frames = frames_in_order(tab) if whole_page else frame_scope.search_frames(tab)
    if sel.kind in STRUCTURED or sel.kind == "find":
        refs = structured_matches(tab, sel, frames)
        if not refs:
            raise NoSuchElement(f"{sel.describe()} matches no element in the page")
        pick = sel.which if sel.which is not None else 0
        if not -len(refs) <= pick < len(refs):
            raise NoSuchElement(f"{sel.describe()} has {len(refs)} matches, not {pick + 1}")
        return snapshot.resolve_ref(tab, refs[pick])
    which = sel.which if sel.which is not None else 0
    if which == -1:
        # The last match overall: the last frame (in document order) that has any.
        for frame in reversed(frames):
            count, obj = _dom_pick(tab, frame, sel, -1)
            if obj:
                return Element(obj["objectId"], frame.frame_id, frame.session_id, frame.world_ctx or 0)
        raise NoSuchElement(f"{sel.describe()} matches no element in the page")
    seen = 0
    for frame in frames:
        count, obj = _dom_pick(tab, frame, sel, which - seen)
        if obj:
            return Element(obj["objectId"], frame.frame_id, frame.session_id, frame.world_ctx or 0)
        seen += count
    if seen:
        raise NoSuchElement(f"{sel.describe()} has {seen} matches, not {which + 1}")
    raise NoSuchElement(f"{sel.describe()} matches no element in the page")


def count(tab: Tab, raw: str) -> int:
    """How many elements a selector matches (0 for a missing ref, never an error)."""
    sel = parse(raw)
    if sel.kind == "ref":
        try:
            resolve(tab, sel)
            return 1
        except (StaleRef, UnknownRef, NoSuchElement):
            return 0
    frames = frame_scope.search_frames(tab)
    if sel.kind in STRUCTURED or sel.kind == "find":
        n = len(structured_matches(tab, sel, frames))
    else:
        n = sum(_count_in(tab, f, sel) for f in frames)
    if sel.which is not None:
        return 1 if (-n <= sel.which < n) else 0
    return n


def _count_in(tab: Tab, frame: Frame, sel: Selector) -> int:
    try:
        return int(evaluate(tab, frame, f"globalThis.__pinchtab.matches({json.dumps(sel.kind)}, "
                                        f"{json.dumps(sel.value)}).length"))
    except CDPError as exc:
        refuse_invalid(sel, exc)
        return 0


def structured_matches(tab: Tab, sel: Selector, frames: list[Frame] | None = None) -> list[str]:
    """Refs of the snapshot nodes a structured selector accepts, in document order (only nodes of
    ``frames`` when given)."""
    nodes = snapshot.take(tab, filter="interactive" if sel.kind == "find" else "all", details=True)
    if frames is not None:
        where, inside = snapshot.refs_of(tab).frame_of, {f.frame_id for f in frames}
        nodes = [n for n in nodes if where.get(n["ref"]) in inside]
    if sel.kind == "find":
        best = match(nodes, sel.value, top_k=1)
        return [best["matches"][0]["ref"]] if best["matches"] else []
    want = sel.value.strip()
    if sel.kind == "role":
        role, name = role_and_name(want)
        return [n["ref"] for n in nodes if n["role"].lower() == role and (not name or _name_match(n.get("name", ""), name))]
    key = {"label": "label", "placeholder": "placeholder", "alt": "alt", "title": "title", "testid": "testid"}[sel.kind]
    out = []
    for n in nodes:
        v = n.get(key) or ""
        if key == "label" and not v:
            v = n.get("name", "") if n["role"] in _LABELLED else ""
        if v and (v == want if key == "testid" else _name_match(v, want)):
            out.append(n["ref"])
    return out


_LABELLED = {"textbox", "searchbox", "combobox", "checkbox", "radio", "switch", "slider", "spinbutton", "listbox"}


def _name_match(actual: str, wanted: str) -> bool:
    """Exact match first, else case-insensitive whole-text or substring (as people write names)."""
    a, w = actual.strip().lower(), wanted.strip().lower()
    return a == w or w in a

