"""``POST /find``: which element of a snapshot a short description means. Pure and fast.

Lexical scoring over what a person would call an element: its name, role, label, placeholder,
test id and text. Each query word is matched against the element's words (exact, then prefix,
then edit-distance-one), weighted by where it matched; role words ("button", "link", "field")
match the role. Structured queries (``role:button Log in``, ``placeholder:Email``, ``first:...``)
bypass scoring. Everything is precomputed per node once, so 1,000 candidates score in a few ms.

Two kinds of hint narrow a description down:

* a negative part: after ``not``, ``except``, ``excluding`` or ``without``, what the element is
  not ("log in button not sign up", "button not log in"): elements it describes are left out;
* a place on the screen: ``top``, ``bottom``, ``left``, ``right`` (and ``upper``, ``lower``,
  ``topmost``, ...) when no element is called that: among the matches, those nearer that edge
  rank higher ("top button", "bottom link"). Positions come from the caller (``positions``: ref ->
  (x, y) in viewport px), which reads them only when :func:`position_hint` finds such a word.
"""
from __future__ import annotations

import heapq
import re
import time
from collections.abc import Iterable
from typing import Any

from .formats import CONTEXT_ROLES

WORD = re.compile(r"[0-9a-zA-Z\u00c0-\uffff]+")
FIELD_WEIGHTS = (("name", 1.0), ("label", 0.9), ("placeholder", 0.8), ("testid", 0.7), ("title", 0.6),
                 ("alt", 0.6), ("text", 0.5), ("context", 0.45))
ROLE_WORDS = {
    "button": {"button"}, "btn": {"button"}, "link": {"link"}, "field": {"textbox", "searchbox", "combobox"},
    "input": {"textbox", "searchbox", "spinbutton", "combobox"}, "box": {"textbox", "checkbox", "searchbox"},
    "textbox": {"textbox"}, "search": {"searchbox"}, "checkbox": {"checkbox"}, "check": {"checkbox"},
    "radio": {"radio"}, "dropdown": {"combobox", "listbox"}, "select": {"combobox", "listbox"},
    "menu": {"menu", "menuitem"}, "tab": {"tab"}, "heading": {"heading"}, "title": {"heading"},
    "image": {"image", "img"}, "picture": {"image"}, "slider": {"slider"}, "switch": {"switch"},
    "toggle": {"switch", "checkbox"}, "option": {"option"},
}
STOP = {"the", "a", "an", "to", "of", "on", "in", "for", "and", "with", "this", "that", "me", "my"}
NEGATION = re.compile(r"\b(?:but\s+)?(?:not|except|excluding|without)\b", re.I)
# A place on the screen: the axis it is read on, and which end (-1: the smallest coordinate).
POSITIONS = {"top": ("y", -1), "topmost": ("y", -1), "upper": ("y", -1), "uppermost": ("y", -1),
             "highest": ("y", -1), "bottom": ("y", 1), "bottommost": ("y", 1), "lower": ("y", 1),
             "lowest": ("y", 1), "left": ("x", -1), "leftmost": ("x", -1), "right": ("x", 1),
             "rightmost": ("x", 1)}
NEGATIVE_MATCH = 0.7  # a negative part that describes an element this well leaves it out
POSITION_WEIGHT = 0.2
KIND_ONLY = 0.6  # what an element scores for a description that names only its role (or a place)


def words(text: str) -> list[str]:
    return WORD.findall(text.lower())


def _close(a: str, b: str) -> bool:
    """Edit distance at most one (typos), for words of four letters or more."""
    if abs(len(a) - len(b)) > 1 or min(len(a), len(b)) < 4:
        return False
    if len(a) > len(b):
        a, b = b, a
    i = j = edits = 0
    while i < len(a) and j < len(b):
        if a[i] != b[j]:
            edits += 1
            if edits > 1:
                return False
            if len(a) == len(b):
                i += 1
            j += 1
        else:
            i += 1
            j += 1
    return edits + (len(b) - j) <= 1


def grades(query: list[str], vocabulary: Iterable[str]) -> list[dict[str, float]]:
    """For each query word, how well each page word matches it: exact 1, prefix 0.7, typo 0.6.

    Computed once over the page's vocabulary (small next to the nodes), so scoring is lookups.
    """
    out = []
    for q in query:
        g: dict[str, float] = {}
        for w in vocabulary:
            if w == q:
                g[w] = 1.0
            elif (len(q) >= 2 and w.startswith(q)) or (len(w) >= 3 and q.startswith(w)):
                g[w] = 0.7
            elif len(q) >= 4 and abs(len(w) - len(q)) <= 1 and _close(q, w):
                g[w] = 0.6
        out.append(g)
    return out


def index_words(nodes: list[dict[str, Any]]) -> dict[str, dict[int, float]]:
    """Word -> {node position: the weight of the best field it appears in}."""
    index: dict[str, dict[int, float]] = {}
    for i, node in enumerate(nodes):
        for key, weight in FIELD_WEIGHTS:
            v = node.get(key)
            if not v:
                continue
            for w in WORD.findall(str(v).lower()):
                posting = index.get(w)
                if posting is None:
                    index[w] = {i: weight}
                elif posting.get(i, 0.0) < weight:
                    posting[i] = weight
    return index


def lexical_scores(nodes: list[dict[str, Any]], query: list[str]) -> list[float]:
    """Each node's score in 0..1: the mean over query words of their best weighted match."""
    totals = [0.0] * len(nodes)
    if not query:
        return totals
    index = index_words(nodes)
    for g in grades(query, index.keys()):
        best: dict[int, float] = {}
        for w, grade in g.items():
            for i, weight in index[w].items():
                v = grade * weight
                if v > best.get(i, 0.0):
                    best[i] = v
        for i, v in best.items():
            totals[i] += v
    return [t / len(query) for t in totals]


def with_context(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Copies of ``nodes`` that also carry their ``context``: the cells of the table row they sit
    in and the heading before them, so "the details button for Grace Hopper" finds the button in
    Grace Hopper's row, not her cell."""
    out: list[dict[str, Any]] = []
    rows: list[tuple[int, str]] = []  # the rows around the current node: (depth, their cells' text)
    heading = ""
    for i, node in enumerate(nodes):
        depth = node.get("depth", 0)
        while rows and rows[-1][0] >= depth:
            rows.pop()
        role = node["role"]
        if role == "row":
            cells = []
            for later in nodes[i + 1:]:
                if later.get("depth", 0) <= depth:
                    break
                if later.get("depth", 0) == depth + 1 and later.get("name"):
                    cells.append(later["name"])
            rows.append((depth, " ".join(cells)))
        elif role == "heading":
            heading = node.get("name", "")
        context = " ".join([t for _, t in rows] + ([heading] if heading and role != "heading" else []))
        out.append({**node, "context": context} if context else node)
    return out


def split_query(query: str) -> tuple[str, str]:
    """The description and what follows its first negation word ("" when there is none)."""
    found = NEGATION.search(query)
    if found is None:
        return query, ""
    return query[:found.start()], query[found.end():]


def _node_words(nodes: list[dict[str, Any]]) -> set[str]:
    return {w for node in nodes for key, _ in FIELD_WEIGHTS if node.get(key) for w in words(str(node[key]))}


def position_hint(query: str, nodes: list[dict[str, Any]]) -> tuple[str, int] | None:
    """The screen place the description asks for (axis, end), or None. A position word that is part
    of the name of an element it could mean ("Back to top" for "back to top link") is a word to
    match, not a place."""
    positive = split_query(query)[0]
    wanted = [w for w in words(positive) if w in POSITIONS]
    if not wanted:
        return None
    roles = _terms(positive, set(POSITIONS))[1]
    known = _node_words([n for n in nodes if not roles or n["role"].lower() in roles])
    hint = next((w for w in wanted if w not in known), None)
    return POSITIONS[hint] if hint else None


def _terms(text: str, skip: set[str]) -> tuple[list[str], set[str]]:
    """A description's content words (not stop, role or skipped words) and the roles it names."""
    roles: set[str] = set()
    content = []
    for w in words(text):
        if w in ROLE_WORDS:
            roles |= ROLE_WORDS[w]
        elif w not in STOP and w not in skip:
            content.append(w)
    return content, roles


def _excluded(nodes: list[dict[str, Any]], negative: str) -> set[int]:
    """The positions of the nodes the negative part describes (its words, or a role it names alone)."""
    content, roles = _terms(negative, set())
    if content:
        scores = lexical_scores(nodes, content)
        out = {i for i, score in enumerate(scores) if score >= NEGATIVE_MATCH}
        return {i for i in out if not roles or nodes[i]["role"].lower() in roles}
    return {i for i, node in enumerate(nodes) if roles and node["role"].lower() in roles}


def _place_scores(candidates: list[int], nodes: list[dict[str, Any]], hint: tuple[str, int],
                  positions: dict[str, tuple[float, float]]) -> dict[int, float]:
    """1 for the candidate nearest the asked-for edge, 0 for the farthest, linear between (and
    0 for one without a known place)."""
    axis, end = hint
    coord = {i: positions[nodes[i]["ref"]][0 if axis == "x" else 1] for i in candidates if nodes[i]["ref"] in positions}
    if not coord:
        return {}
    low, high = min(coord.values()), max(coord.values())
    span = high - low
    return {i: (1.0 if span == 0 else ((high - c) if end < 0 else (c - low)) / span) for i, c in coord.items()}


def match(nodes: list[dict[str, Any]], query: str, *, top_k: int = 3, threshold: float = 0.3,
          explain: bool = False, positions: dict[str, tuple[float, float]] | None = None) -> dict[str, Any]:
    """Rank ``nodes`` for ``query``; the reference's response shape (without latency).

    ``positions`` (ref -> (x, y)) lets a place in the description ("top button") rank the matches.
    """
    started = time.perf_counter()
    positive, negative = split_query(query)
    hint = position_hint(query, nodes)
    place_words = {w for w in words(positive) if w in POSITIONS} if hint else set()
    content_words, role_hints = _terms(positive, place_words)
    excluded = _excluded(nodes, negative) if negative.strip() else set()
    # Role words also match names ("search" finds the Search button) when nothing else is asked for.
    lex_words = content_words or [w for w in words(positive) if w in ROLE_WORDS]
    lex_scores = lexical_scores(with_context(nodes), lex_words) if lex_words else [0.0] * len(nodes)
    scored = []
    for i, (node, lex) in enumerate(zip(nodes, lex_scores, strict=True)):
        if i in excluded:
            continue
        if node["role"] in CONTEXT_ROLES and node["role"] not in role_hints:
            continue  # rows, cells and headings give context; people find controls (unless they ask)
        rs = 1.0 if role_hints and node["role"].lower() in role_hints else 0.0
        base = 0.85 * lex + 0.15 * rs if role_hints else lex
        if not content_words and (rs or (place_words and not role_hints)):
            # Nothing but a role and/or a place ("button", "top link"): every element of that role fits.
            base = max(base, KIND_ONLY)
        if base > 0:
            scored.append((i, base, rs))
    if hint and positions:
        place = _place_scores([i for i, base, _ in scored if base >= threshold], nodes, hint, positions)
        scored = [(i, (1 - POSITION_WEIGHT) * base + POSITION_WEIGHT * place.get(i, 0.0), rs)
                  for i, base, rs in scored]
    composites = [(-composite, i, rs) for i, composite, rs in scored if composite >= threshold]
    accepted = []
    for neg, i, rs in heapq.nsmallest(top_k, composites):  # ties keep document order
        node = nodes[i]
        item: dict[str, Any] = {"ref": node["ref"], "score": round(-neg, 4), "role": node["role"],
                                "name": node.get("name", "")}
        if explain:
            item["explain"] = {"lexical_score": round(lex_scores[i], 4), "role_score": rs, "composite": round(-neg, 4)}
        accepted.append(item)
    best = accepted[0] if accepted else None
    conf = "high" if best and best["score"] >= 0.8 else "medium" if best and best["score"] >= 0.6 else "low"
    return {
        "best_ref": best["ref"] if best else "",
        "confidence": conf,
        "score": best["score"] if best else 0.0,
        "matches": accepted,
        "strategy": "lexical",
        "threshold": threshold,
        "latency_ms": round((time.perf_counter() - started) * 1000, 3),
        "element_count": len(nodes),
    }
