"""Frame scope (GET|POST /frame) and the /text options (selector, ref, frameId, maxChars) on a real Chromium,
with a same-origin iframe and one from another site (out of process)."""
from __future__ import annotations

from typing import Any

import pytest
from support.agent import compact, nav, ref_of
from support.waits import wait_until

from app.api.routes.content_contract import TextResponse
from app.api.routes.frame_contract import FrameResponse


def open_frames(client: Any, site: Any, site2: Any) -> str:
    """The two-frame page, loaded with both frames ready; its tab id."""
    tab = nav(client, site.url("h2_frames.html") + f"?x=http://localhost:{site2.port}", waitFor="load")["tabId"]
    wait_until(lambda: compact(client).count(" button Go") == 3, 10)
    return tab


def scope(client: Any, target: str, **extra: Any) -> dict[str, Any]:
    r = client.post("/frame", json={"target": target, **extra})
    assert r.status_code == 200, r.json
    return FrameResponse().load(r.json)


def text_of(client: Any, **params: Any) -> str:
    r = client.get("/text", query_string=params)
    assert r.status_code == 200, r.json
    return TextResponse().load(r.json)["text"]


def test_a_cross_site_frame_scopes_actions_reads_text_html_and_snapshots(client, site, site2):
    tab = open_frames(client, site, site2)
    out = scope(client, "#cross")
    assert out["scoped"] is True and out["tabId"] == tab
    assert out["target"] == out["frame"]["frameId"] == out["current"]["frameId"]
    assert out["frame"]["frameUrl"].startswith(f"http://localhost:{site2.port}/h2_inner.html")

    # "#go" is in all three documents: scoped, it is the other site's button.
    assert client.post("/action", json={"kind": "click", "selector": "#go"}).status_code == 200
    assert text_of(client, selector="#where") == "cross clicked"
    text = text_of(client)
    assert "Inner page cross" in text and "Outer page" not in text and "Inner page same" not in text
    html = client.get("/html").json["html"]
    assert "h2_inner.html" not in html and "who = new URLSearchParams" in html
    snap = compact(client)
    assert snap.count(" button Go") == 1 and "Same origin" not in snap
    assert client.get("/count?selector=button").json["count"] == 1
    # /find, /wait and /capture look in the scope too.
    go = ref_of(snap, "button", "Go")
    found = client.post("/find", json={"query": "Go button"}).json
    assert found["best_ref"] == go and [m["ref"] for m in found["matches"] if m["name"] == "Go"] == [go]
    assert client.post("/find", json={"query": "role:button Go"}).json["best_ref"] == go
    waited = client.post("/wait", json={"text": "cross clicked", "timeout": 2000}).json
    assert waited["waited"] is True
    for outside in ({"text": "Outer page"}, {"selector": "#same"}):
        assert client.post("/wait", json={**outside, "timeout": 200}).json["waited"] is False, outside
    captured = client.get("/capture", query_string={"wait": "none"}).json["snapshot"]["nodes"]
    assert [n["ref"] for n in captured if n.get("name") == "Go"] == [go]

    assert scope(client, "main")["scoped"] is False
    assert text_of(client, selector="#where") == "outer untouched"  # the first #where again: the page's own
    assert client.get("/count?selector=button").json["count"] == 3


def test_a_frame_is_named_by_ref_name_or_url_and_the_answer_says_which(client, site, site2):
    open_frames(client, site, site2)
    snap = compact(client, filter="all")
    owner = ref_of(snap, "Iframe", "Same origin")
    by_ref = scope(client, owner)
    assert by_ref["frame"]["ownerRef"] == owner and by_ref["frame"]["frameName"] == "inner-frame"
    assert client.get("/frame").json == by_ref  # GET reads the scope back
    by_name = scope(client, "inner-frame")
    assert by_name["target"] == by_ref["target"] and by_name["frame"]["ownerRef"] == owner
    by_url = scope(client, "h2_inner.html?who=cross")
    assert by_url["frame"]["frameUrl"].startswith(f"http://localhost:{site2.port}")
    # A ref of an element inside a frame scopes to that frame.
    inner_button = [line.split()[0] for line in compact(client).splitlines() if " button Go" in line]
    assert scope(client, inner_button[0])["target"] == by_url["target"]


def test_navigating_the_tab_drops_its_scope(client, site, site2):
    tab = open_frames(client, site, site2)
    assert scope(client, "#same", tabId=tab)["scoped"] is True
    nav(client, site.url("h2_inner.html?who=top"), tabId=tab)
    assert client.get(f"/tabs/{tab}/frame").json == {"tabId": tab, "scoped": False, "target": "main",
                                                     "current": "main"}
    assert text_of(client, tabId=tab, selector="#where") == "top untouched"


def test_evaluate_ignores_the_scope_and_a_removed_frame_ends_it_with_a_clear_error(site, site2, app_factory):
    app = app_factory(**{"security.allowEvaluate": True})
    c = app.test_client()
    open_frames(c, site, site2)
    scope(c, "#same")
    assert c.post("/evaluate", json={"expression": "document.title"}).json["result"] == "Frames to scope"  # not scoped
    c.post("/evaluate", json={"expression": "document.getElementById('same').remove()"})
    r = c.get("/text", query_string={"selector": "#where"})
    assert r.status_code == 409 and r.json["code"] == "frame_gone"
    assert c.get("/frame").json["scoped"] is False
    assert text_of(c, selector="#where") == "outer untouched"


@pytest.mark.parametrize("target", ["#nothing-here", "h1", "no-such-frame.html"])
def test_targets_that_name_no_frame_are_refused(client, site, site2, target):
    open_frames(client, site, site2)
    r = client.post("/frame", json={"target": target})
    assert r.status_code == 400 and r.json["code"] == "bad_frame_target", r.json
    assert client.get("/frame").json["scoped"] is False


def test_frame_needs_a_target(client, site, site2):
    open_frames(client, site, site2)
    for body in ({}, {"target": ""}):
        r = client.post("/frame", json=body)
        assert r.status_code == 400 and "target" in r.json["error"]


def test_text_of_one_element_one_frame_and_cut_at_max_chars(client, site, site2):
    open_frames(client, site, site2)
    frames = {n.get("name"): n["childFrameId"] for n in client.get("/snapshot").json["nodes"]
              if n.get("childFrameId")}
    cross = text_of(client, frameId=frames["Other site"])
    assert "Inner page cross" in cross and "Outer page" not in cross and "same" not in cross
    whole = text_of(client, mode="raw")
    assert "Outer page" in whole and "Inner page same" in whole and "Inner page cross" in whole
    ref = ref_of(compact(client), "button", "Go")
    assert text_of(client, ref=ref) == "Go"
    r = client.get("/text", query_string={"maxChars": 5, "selector": "h1"})
    assert r.json["text"] == "Outer" and r.json["truncated"] is True
    assert client.get("/text", query_string={"selector": "#missing"}).status_code == 404
    r = client.get("/text", query_string={"frameId": "NOSUCHFRAME"})
    assert r.status_code == 404 and r.json["code"] == "element_not_found"
