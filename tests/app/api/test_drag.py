"""Dragging list rows: HTML5 drag and drop, and pointer-event lists moved by hand (mouse-down, move, up).

Each list is dragged again and again: a drag whose events race Chrome's own drag start would
reorder some times and not others.
"""
from __future__ import annotations

from support.agent import nav

ROW_PX = 40  # a row and its margin, in h4_drag.html


def order(client) -> tuple[str, str]:
    html5, pointer = client.get("/text?mode=raw").json["text"].strip().splitlines()[-1].split()
    return html5, pointer


def test_html5_rows_reorder_on_every_drag(client, site):
    nav(client, site.url("h4_drag.html"))
    expected = "ABCD"
    for i in range(10):
        # the last row goes to the top, each time
        r = client.post("/action", json={"kind": "drag", "selector": "#html5 li:last-child", "dragY": -3 * ROW_PX})
        assert r.status_code == 200 and r.json["result"]["html5"] is True, r.json
        expected = expected[-1] + expected[:-1]
        assert order(client)[0] == expected, f"drag {i + 1}"


def test_pointer_rows_reorder_with_a_held_button_on_every_manual_drag(client, site):
    nav(client, site.url("h4_drag.html"))
    expected = "PQRS"
    for i in range(10):
        r = client.post("/actions", json={"stopOnError": True, "actions": [
            {"kind": "mouse-down", "selector": "#pointer li:first-child"},
            {"kind": "mouse-move", "selector": "#pointer li:nth-child(2)"},
            {"kind": "mouse-move", "selector": "#pointer li:nth-child(3)"},
            {"kind": "mouse-up"}]})
        assert r.json["failed"] == 0, r.json
        expected = expected[1] + expected[0] + expected[2:]  # before the row it was over last
        assert order(client)[1] == expected, f"drag {i + 1}"
    # a move without a held button drags nothing
    client.post("/action", json={"kind": "mouse-move", "selector": "#pointer li:first-child"})
    client.post("/action", json={"kind": "mouse-move", "selector": "#pointer li:last-child"})
    assert order(client)[1] == expected


def test_the_drag_action_moves_pointer_rows_too(client, site):
    nav(client, site.url("h4_drag.html"))
    expected = "PQRS"
    for i in range(5):
        r = client.post("/action", json={"kind": "drag", "selector": "#pointer li:first-child", "dragY": 3 * ROW_PX})
        assert r.status_code == 200 and "html5" not in r.json["result"]
        expected = expected[1:3] + expected[0] + expected[3]  # before the last row, where it was let go
        assert order(client)[1] == expected, f"drag {i + 1}"
