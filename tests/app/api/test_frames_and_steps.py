"""Frames of every origin, one round trip per step, batches, selectors, find and wait."""
from __future__ import annotations

import re
import time

from support.agent import compact, nav, ref_of, text
from support.waits import wait_until


def cross_site(site2) -> str:
    """The second server by another host name: another site, so Chromium runs it out of process."""
    return f"http://localhost:{site2.port}"


# --- frames ------------------------------------------------------------------------------------
def test_checkout_through_a_cross_origin_card_form_by_refs_alone(client, site, site2):
    nav(client, site.url("xorigin.html") + "?card=" + cross_site(site2), waitFor="load")
    wait_until(lambda: " button Pay\n" in compact(client), 10)
    snap = compact(client)
    lines = snap.splitlines()
    owner = next(i for i, l in enumerate(lines) if " Iframe Card payment" in l)
    assert [l for l in lines[owner:] if " textbox " in l]  # the card fields sit under their iframe
    client.post("/action", json={"kind": "type", "ref": ref_of(snap, "textbox", "Card number"),
                                 "text": "4242 4242 4242 4242"})
    client.post("/action", json={"kind": "fill", "ref": ref_of(snap, "textbox", "Expiry"), "text": "12/30"})
    assert client.post("/action", json={"kind": "check", "ref": ref_of(snap, "checkbox", "Save card")}).json[
        "result"] == {"checked": True}
    r = client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Pay"), "snap": "diff"})
    assert r.status_code == 200
    wait_until(lambda: "paid with card ending 4242" in text(client, mode="raw"), 10)


def test_nested_frames_of_both_kinds_are_inlined_in_order(client, site, site2):
    nav(client, site.url("nested.html") + f"?mid=http://127.0.0.1:{site2.port}&inner=" + cross_site(site2),
        waitFor="load")
    wait_until(lambda: " button Go\n" in compact(client), 10)
    doc = client.get("/snapshot?filter=interactive").json
    names = [(n["role"], n["name"]) for n in doc["nodes"]]
    assert names.index(("Iframe", "Middle")) < names.index(("button", "Middle button")) < \
        names.index(("Iframe", "Innermost")) < names.index(("button", "Go"))
    depth = {n["name"]: n["depth"] for n in doc["nodes"]}
    assert depth["Go"] > depth["Middle button"] > depth["Outer"] if "Outer" in depth else True
    snap = compact(client)
    client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Middle button")})
    client.post("/action", json={"kind": "type", "ref": ref_of(snap, "textbox", "Search"), "text": "deep"})
    client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Go")})
    raw = text(client, mode="raw")
    assert "middle clicked" in raw
    wait_until(lambda: "searched deep" in text(client, mode="raw"), 5)


def test_selectors_reach_into_frames(client, site, site2):
    nav(client, site.url("xorigin.html") + "?card=" + cross_site(site2), waitFor="load")
    wait_until(lambda: client.get("/count?selector=%23num").status_code in (200, 404), 10) if False else None
    wait_until(lambda: " button Pay\n" in compact(client), 10)
    r = client.post("/action", json={"kind": "fill", "selector": "#num", "text": "4111111111111111"})
    assert r.status_code == 200
    r = client.post("/action", json={"kind": "fill", "selector": "label:Expiry", "text": "01/29"})
    assert r.status_code == 200
    nodes = client.get("/snapshot?filter=interactive").json["nodes"]
    values = {n["name"]: n.get("value") for n in nodes}
    assert values["Card number"] == "4111111111111111" and values["Expiry"] == "01/29"


# --- one round trip per step ----------------------------------------------------------------------
def test_snap_compact_returns_the_page_after_the_action(client, site):
    nav(client, site.url("counter.html"))
    snap = compact(client)
    r = client.post("/action", json={"kind": "hover", "ref": ref_of(snap, "button", "Hover me"), "snap": "compact"})
    assert r.json["snapshotFormat"] == "compact"
    assert " button Hovered\n" in r.json["snapshot"]


def test_snap_diff_shows_only_what_changed_since_the_caller_looked(client, site):
    nav(client, site.url("counter.html"))
    inc = ref_of(compact(client), "button", "Increment")
    client.get("/snapshot")  # the caller's latest view: the whole tree, so the diff is of whole trees
    r = client.post("/action", json={"kind": "click", "ref": inc, "snap": "diff"})
    assert r.json["snapshotFormat"] == "diff"
    diff = r.json["snapshot"].splitlines()
    assert re.search(r"\| \+\d+ ~\d+ -\d+$", diff[0])
    body = "\n".join(diff[1:])
    assert "StaticText 1" in body and "StaticText 0" in body  # the new count, and the old one gone
    assert "Hover me" not in body and "heading Counter" not in body  # unchanged lines are not repeated
    assert len(diff) <= 5  # header, new count, old count, and focus moving from the page to the button
    # the next diff compares with this view: one more click, one more change
    r = client.post("/action", json={"kind": "click", "ref": inc, "snap": "diff"})
    assert "StaticText 2" in r.json["snapshot"] and "StaticText 0" not in r.json["snapshot"]
    # a caller that only ever looked at an interactive snapshot still gets a diff of the action
    nav(client, site.url("counter.html"))
    inc = ref_of(compact(client), "button", "Increment")
    r = client.post("/action", json={"kind": "click", "ref": inc, "snap": "diff"})
    assert r.json["snapshotFormat"] == "diff" and "StaticText 1" in r.json["snapshot"]


def test_snapshot_diff_query_against_the_last_view(client, site):
    nav(client, site.url("counter.html"))
    client.get("/snapshot?filter=interactive")
    client.post("/action", json={"kind": "hover", "selector": "#hover"})
    d = client.get("/snapshot?filter=interactive&diff=true").json
    assert d["diff"] is True and d["counts"]["changed"] == 1
    assert d["changed"][0]["name"] == "Hovered" and d["added"] == [] and d["removed"] == []
    again = client.get("/snapshot?filter=interactive&diff=true").json
    assert again["counts"] == {"added": 0, "changed": 0, "removed": 0, "total": again["count"]}


def test_actions_batch_reports_each_step_and_can_stop_on_error(client, site):
    nav(client, site.url("form.html"))
    snap = compact(client)
    r = client.post("/actions", json={"actions": [
        {"kind": "fill", "ref": ref_of(snap, "textbox", "Username:"), "text": "ada"},
        {"kind": "click", "selector": "#nope"},
        {"kind": "check", "ref": ref_of(snap, "checkbox", "I agree to the terms")},
    ], "snap": "compact"})
    out = r.json
    assert out["total"] == 3 and out["successful"] == 2 and out["failed"] == 1
    assert [s["success"] for s in out["results"]] == [True, False, True]
    assert out["results"][1]["code"] == "element_not_found"
    assert 'val="ada"' in out["snapshot"] and "[checked]" in out["snapshot"]
    r = client.post("/actions", json={"actions": [{"kind": "zap"}, {"kind": "focus", "selector": "#email"}],
                                      "stopOnError": True})
    assert len(r.json["results"]) == 1 and r.json["results"][0]["code"] == "bad_request"
    assert r.json["failed"] == 2
    assert client.post("/actions", json={"actions": []}).status_code == 400


# --- the other action kinds ----------------------------------------------------------------------
def test_keyboard_kinds_and_modifiers(client, site):
    nav(client, site.url("steps.html"))
    client.post("/action", json={"kind": "focus", "selector": "#field"})
    client.post("/action", json={"kind": "keyboard-type", "text": "ab"})
    client.post("/action", json={"kind": "keyboard-inserttext", "text": "Ωz"})
    client.post("/action", json={"kind": "press", "key": "Control+a"})
    client.post("/action", json={"kind": "keydown", "key": "Shift"})
    client.post("/action", json={"kind": "keyup", "key": "Shift"})
    keys = text(client, mode="raw")
    assert "[a][b]" in keys and "[C-a]" in keys and "[Shift]" in keys
    value = next(n for n in client.get("/snapshot?filter=interactive").json["nodes"] if n["name"] == "Field")["value"]
    assert value == "abΩz"


def test_mouse_kinds_drag_and_scaled_coordinates(client, site):
    nav(client, site.url("steps.html"))
    r = client.post("/action", json={"kind": "mouse-move", "selector": "#pad"})
    assert r.json["result"]["moved"] is True
    client.post("/action", json={"kind": "mouse-down", "button": "right"})
    client.post("/action", json={"kind": "mouse-up", "button": "right"})
    client.post("/action", json={"kind": "mouse-wheel", "deltaY": 40})
    assert "down:2 up:2 wheel:40" in text(client, mode="raw")
    r = client.post("/action", json={"kind": "drag", "selector": "#box", "dragX": 100, "dragY": 30})
    assert r.json["result"] == {"dragged": True, "dragX": 100, "dragY": 30}
    assert "dropped at 120,230" in text(client, mode="raw")
    rect = client.post("/action", json={"kind": "scrollintoview", "selector": "text:Three"}).json["result"]
    assert set(rect) == {"x", "y", "width", "height"}
    # (x, y) in a half-size screenshot land on the same spot as full-size coordinates
    import struct

    png = client.get("/screenshot?format=png&raw=true").data
    width, height = struct.unpack(">II", png[16:24])
    box = client.post("/action", json={"kind": "scrollintoview", "selector": "#box"}).json["result"]
    cx, cy = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
    r = client.post("/action", json={"kind": "click", "x": cx / 2, "y": cy / 2, "frameW": width / 2,
                                     "frameH": height / 2})
    assert abs(r.json["result"]["x"] - cx) < 2 and abs(r.json["result"]["y"] - cy) < 2


def test_unified_selectors(client, site):
    nav(client, site.url("steps.html"))
    cases = {
        "text:Two": "picked Two",
        "role:button Three": "picked Three",
        "xpath://button[@class='item'][1]": "picked One",
        "//li[2]/button": "picked Two",
        "nth:3:.item": "picked Three",
        "last:css:.item": "picked Three",
        "first:.item": "picked One",
    }
    for selector, expected in cases.items():
        r = client.post("/action", json={"kind": "click", "selector": selector})
        assert r.status_code == 200, (selector, r.json)
        assert expected in text(client, mode="raw"), selector
    r = client.post("/action", json={"kind": "fill", "selector": "label:Field", "text": "x"})
    assert r.status_code == 200
    assert client.post("/action", json={"kind": "click", "selector": "nth:9:.item"}).json["code"] == "element_not_found"
    assert client.post("/action", json={"kind": "click", "selector": "div[["}).json["code"] == "bad_selector"
    assert client.post("/action", json={"kind": "click", "selector": "nth:0:.item"}).json["code"] == "bad_selector"
    assert client.post("/action", json={"kind": "click", "selector": "testid:status-line"}).status_code == 200


def test_find_ranks_elements_for_a_description(client, site):
    nav(client, site.url("form.html"))
    r = client.post("/find", json={"query": "submit button", "explain": True}).json
    assert r["best_ref"] and r["confidence"] == "high" and r["matches"][0]["name"] == "Submit"
    assert "explain" in r["matches"][0] and r["element_count"] >= 9
    r = client.post("/find", json={"query": "email field"}).json
    assert r["matches"][0]["name"] == "Email:"
    r = client.post("/find", json={"query": "role:button Reset"}).json
    assert r["strategy"] == "structured" and r["matches"][0]["name"] == "Reset"
    r = client.post("/find", json={"query": "zebra crossing"}).json
    assert r["best_ref"] == "" and r["matches"] == []
    assert client.post("/find", json={"query": ""}).status_code == 400
    assert client.post("/action", json={"kind": "click", "selector": "find:reset button"}).status_code == 200
    # the row a control sits in counts: the Details button in Grace Hopper's row, not her cell
    nav(client, site.url("table.html"))
    best = client.post("/find", json={"query": "details button for Grace Hopper"}).json["best_ref"]
    client.post("/action", json={"kind": "click", "ref": best})
    assert "Order 1003 shipped" in text(client)


def test_wait_modes_succeed_and_time_out_without_errors(client, site, app_factory):
    nav(client, site.url("steps.html"))
    client.post("/action", json={"kind": "click", "selector": "#later-btn"})
    r = client.post("/wait", json={"selector": "text:Appeared", "timeout": 5000}).json
    assert r["waited"] is True and r["elapsed"] < 5000
    client.post("/action", json={"kind": "click", "selector": "#gone"})
    assert client.post("/wait", json={"selector": "#gone", "state": "hidden", "timeout": 5000}).json["waited"]
    assert client.post("/wait", json={"text": "ready"}).json["waited"] is True
    assert client.post("/wait", json={"notText": "no such words"}).json["waited"] is True
    assert client.post("/wait", json={"url": "**/steps.html"}).json["waited"] is True
    assert client.post("/wait", json={"load": "content-loaded"}).json["waited"] is True
    started = time.monotonic()
    r = client.post("/wait", json={"selector": "#never", "timeout": 300}).json
    assert r["waited"] is False and "timeout after 300ms" in r["error"] and time.monotonic() - started < 3
    assert client.post("/wait", json={"ms": 10}).json["waited"] is True
    assert client.post("/wait", json={}).status_code == 400
    assert client.post("/wait", json={"load": "sideways"}).status_code == 400
    r = client.post("/wait", json={"fn": "true"})
    assert r.status_code == 403 and r.json["code"] == "evaluate_disabled"
    c2 = app_factory(**{"security.allowEvaluate": True}).test_client()
    nav(c2, site.url("steps.html"))
    assert c2.post("/wait", json={"fn": "document.title === 'Steps'"}).json["waited"] is True
