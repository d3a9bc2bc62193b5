"""``POST /find``: which element of a snapshot a short description means. Pure and fast.

Lexical scoring over what a person would call an element: its name, role, label, placeholder,
test id and text. Each query word is matched against the element's words (exact, then prefix,
then edit-distance-one), weighted by where it matched; role words ("button", "link", "field")
match the role. Structured queries (``role:button Log in``, ``placeholder:Email``, ``first:...``)
bypass scoring. Everything is precomputed per node once, so 1,000 candidates score in a few ms.
"""
from __future__ import annotations

import heapq
import re
import time
from typing import Any, Iterable

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


def match(nodes: list[dict[str, Any]], query: str, *, top_k: int = 3, threshold: float = 0.3,
          explain: bool = False) -> dict[str, Any]:
    """Rank ``nodes`` for ``query``; the reference's response shape (without latency)."""
    started = time.perf_counter()
    all_words = [w for w in words(query)]
    role_hints: set[str] = set()
    query_words = []
    for w in all_words:
        if w in ROLE_WORDS:
            role_hints |= ROLE_WORDS[w]
        if w not in STOP:
            query_words.append(w)
    content_words = [w for w in query_words if w not in ROLE_WORDS] or query_words
    lex_scores = lexical_scores(with_context(nodes), content_words)
    composites = []
    for i, (node, lex) in enumerate(zip(nodes, lex_scores, strict=True)):
        if node["role"] in CONTEXT_ROLES and node["role"] not in role_hints:
            continue  # rows, cells and headings give context; people find controls (unless they ask)
        rs = 1.0 if role_hints and node["role"].lower() in role_hints else 0.0
        composite = 0.85 * lex + 0.15 * rs if role_hints else lex
        if composite >= threshold and composite > 0:
            composites.append((-composite, i, rs))
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
