"""What a snapshot costs in round trips: a page without closed shadow root candidates is walked in
one call, whose answer also carries the page's URL and title as they are now."""
from __future__ import annotations

from typing import Any

import pytest

from cdp import snapshot_doc
from cdp.navigation import navigate

pytestmark = pytest.mark.timeout(60)


def test_a_whole_page_snapshot_is_one_call_and_reads_the_current_title(tab: Any, site: Any,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    tab.run(lambda: navigate(tab, site.url("form.html"), timeout_s=15), 20)
    tab.run(lambda: snapshot_doc.build(tab, filter="interactive", format="compact"), 20)  # hosts asked once
    tab.run(lambda: tab.call("Runtime.evaluate", {"expression": "document.title = 'Renamed'"}), 10)
    real_call = tab.call
    methods: list[str] = []
    monkeypatch.setattr(tab, "call", lambda method, *a, **kw: methods.append(method) or real_call(method, *a, **kw))
    doc = tab.run(lambda: snapshot_doc.build(tab, filter="interactive", format="compact"), 20)
    monkeypatch.undo()
    assert methods == ["Runtime.evaluate"]
    assert doc.doc["title"] == "Renamed" and doc.doc["url"] == site.url("form.html")
    assert any(n["role"] == "textbox" for n in doc.doc["nodes"])


def test_closed_shadow_roots_are_in_the_first_snapshot_of_a_page(tab: Any, site: Any) -> None:
    # The walk finds the candidate hosts, they are handed their closed roots, and the page is walked
    # again: nested closed roots and an open root inside a closed one included.
    tab.run(lambda: navigate(tab, site.url("closed_shadow.html"), timeout_s=15), 20)
    doc = tab.run(lambda: snapshot_doc.build(tab, filter="interactive", format="json"), 20)
    names = {(n["role"], n.get("name", "")) for n in doc.doc["nodes"]}
    assert {("button", "Deep closed button"), ("link", "Open inside closed")} <= names, names
    assert doc.doc["title"] == "Closed shadow"
