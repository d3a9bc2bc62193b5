"""The snapshot a caller is answered with: filtered, paged and budgeted, or a diff against what the
same caller saw last; its rendering; and the snapshot that follows an action (``"snap"``).

Runs on the tab's worker, except ``render``, which is pure. Each caller's last view of the
current document is kept per tab, by caller and filter, so two agents on one tab each get the
changes since *they* looked.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from . import formats, selectors, snapshot
from .errors import BadCursor
from .navigation import page_info
from .tab import Tab
from .waits import settle


@dataclass
class SnapshotDoc:
    """A snapshot as answered: the JSON-able document, the format to render it in, the filter used."""

    doc: dict[str, Any]
    format: str
    filter: str


def build(tab: Tab, *, filter: str = "all", format: str = "json", selector: str = "", depth: int = -1,
          max_tokens: int = 0, after: str = "", diff: bool = False, caller: str = "") -> SnapshotDoc:
    """The tab's snapshot document for ``caller``.

    ``selector`` roots it at one element (and leaves the caller's view alone); ``diff`` answers
    what changed since the caller's previous whole-page snapshot with this filter, when there is
    one; otherwise the nodes after the ref ``after``, cut to ``max_tokens`` (0: no cut) with a
    cursor to the next page. Raises BadCursor when ``after`` is not a ref of the snapshot.
    """
    root = selectors.snapshot_root(tab, selector)
    page: dict[str, str] = {}
    nodes = snapshot.take(tab, filter=filter, details=(format in ("json", "yaml")), max_depth=depth, root=root,
                          page=page)
    info = page or page_info(tab)  # (a whole-page walk read them)
    previous = remember(tab, caller, filter, nodes) if root is None else None
    doc: dict[str, Any] = {"url": info["url"], "title": info["title"]}
    if diff and previous is not None:
        changes = formats.diff(previous, nodes)
        doc.update(diff=True, **changes, count=len(nodes),
                   counts={**{k: len(v) for k, v in changes.items()}, "total": len(nodes)})
        return SnapshotDoc(doc, format, filter)
    count = len(nodes)
    try:
        nodes = formats.page_after(nodes, after)
    except KeyError:
        raise BadCursor(after) from None
    nodes, truncated = formats.budget(nodes, max_tokens, format)
    doc.update(nodes=nodes, count=len(nodes))
    if after or truncated:
        doc["total"] = count
    if truncated:
        doc["truncated"] = True
        doc["maxTokens"] = max_tokens
        if nodes:
            doc["next"] = f"after={nodes[-1]['ref']}"
    return SnapshotDoc(doc, format, filter)


def render(snap: SnapshotDoc) -> tuple[str, str]:
    """(body, format) of a snapshot document: compact or text lines, YAML or JSON."""
    doc, fmt = snap.doc, snap.format
    if doc.get("diff"):
        if fmt in ("compact", "text"):
            return formats.render_diff_compact(doc, title=doc["title"], url=doc["url"], count=doc["count"]), fmt
        return (formats.render_yaml(doc) if fmt == "yaml" else json.dumps(doc, ensure_ascii=False)), fmt
    cut = doc.get("maxTokens") if doc.get("truncated") else None
    cursor = doc.get("next", "").removeprefix("after=") or None
    if fmt == "compact":
        return formats.render_compact(doc["nodes"], title=doc["title"], url=doc["url"], count=doc["count"],
                                      truncated_at=cut, next_cursor=cursor,
                                      interactive=snap.filter == "interactive"), fmt
    if fmt == "text":
        return formats.render_text(doc["nodes"], title=doc["title"], url=doc["url"], count=doc["count"],
                                   truncated_at=cut, next_cursor=cursor), fmt
    if fmt == "yaml":
        return formats.render_yaml(doc), fmt
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")), fmt


def after_action(tab: Tab, mode: str, caller: str) -> dict[str, Any]:
    """Once the page settles, its compact interactive snapshot (``mode`` "compact"), or what changed
    since the caller's view (``mode`` "diff"; the compact snapshot when the caller has no view)."""
    settle(tab)
    info: dict[str, str] = {}  # the page's URL and title, as the walk read them
    if mode == "diff":
        # Whole trees: what the action changed includes text, not only controls.
        nodes = snapshot.take(tab, filter="all", page=info)
        previous = remember(tab, caller, "all", nodes)
        if previous is not None:
            text = formats.render_diff_compact(formats.diff(previous, nodes), title=info["title"], url=info["url"],
                                               count=len(nodes))
            return {"snapshot": text, "snapshotFormat": "diff"}
    nodes = snapshot.take(tab, filter="interactive", page=info)
    remember(tab, caller, "interactive", nodes)
    text = formats.render_compact(nodes, title=info["title"], url=info["url"], count=len(nodes), interactive=True)
    return {"snapshot": text, "snapshotFormat": "compact"}


# --- what each caller last saw, for diffs ----------------------------------------------------------
def remember(tab: Tab, caller: str, filter: str, nodes: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """Store this caller's view of the page; return its previous view of the same document, if any."""
    views: dict[tuple[str, str], tuple[int, list[dict[str, Any]]]] = tab.state.setdefault("views", {})
    key = (caller, filter)
    previous = views.get(key)
    views[key] = (tab.document_epoch, nodes)
    if previous is None or previous[0] != tab.document_epoch:
        return None
    return previous[1]


def ensure_view(tab: Tab, caller: str) -> None:
    """Make sure the caller has a whole-tree view of the current document to diff against: the
    page as it is now, if the caller only ever looked at interactive snapshots."""
    views = tab.state.get("views", {})
    seen = views.get((caller, "all"))
    if seen is None or seen[0] != tab.document_epoch:
        remember(tab, caller, "all", snapshot.take(tab, filter="all"))
