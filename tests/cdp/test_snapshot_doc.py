"""Unit tests for cdp.snapshot_doc.render: a snapshot document as the body of GET /snapshot."""
from __future__ import annotations

import json

from cdp.snapshot_doc import SnapshotDoc, render


def node(ref: str, role: str, name: str, depth: int = 0) -> dict[str, object]:
    return {"ref": ref, "role": role, "name": name, "depth": depth}


def test_json_body_carries_the_document_and_not_its_format_or_filter() -> None:
    doc = {"url": "http://example.test/", "title": "Home", "nodes": [node("e1", "button", "Go")], "count": 1}
    body, fmt = render(SnapshotDoc(doc, "json", "interactive"))
    assert fmt == "json"
    assert json.loads(body) == doc


def test_compact_body_of_a_cut_snapshot_names_the_next_cursor() -> None:
    doc = {"url": "u", "title": "T", "nodes": [node("e1", "link", "A")], "count": 1, "total": 3,
           "truncated": True, "maxTokens": 10, "next": "after=e1"}
    body, fmt = render(SnapshotDoc(doc, "compact", "all"))
    assert fmt == "compact"
    assert body.splitlines()[-1] == "# next: after=e1"


def test_a_diff_renders_as_changes_in_the_compact_formats() -> None:
    doc = {"url": "u", "title": "T", "diff": True, "added": [node("e3", "button", "New")], "changed": [],
           "removed": [], "count": 2, "counts": {"added": 1, "changed": 0, "removed": 0, "total": 2}}
    body, fmt = render(SnapshotDoc(doc, "text", "all"))
    assert fmt == "text"
    assert body.splitlines()[0] == "# T | u | 2 nodes | +1 ~0 -0"
