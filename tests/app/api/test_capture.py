"""Pictures with more than pixels, against a real headless Chromium: GET /capture (a screenshot and a
snapshot of one document), GET /annotate, GET /screenshot?annotate=true and noAnimations."""
from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path

import pytest

from app.api.routes.capture_contract import AnnotateResponse, CaptureResponse
from app.api.routes.content_contract import ScreenshotResponse


def nav(client, url: str) -> str:
    r = client.post("/navigate", json={"url": url})
    assert r.status_code == 200, r.json
    return r.json["tabId"]


def check(schema, data: dict) -> dict:
    """``data`` as its documented schema reads it (an undocumented field fails)."""
    return schema().load(data)


def first_pixel(png: bytes) -> tuple[int, int, int]:
    """The top-left pixel of an 8-bit RGB(A) PNG (Chrome's screenshots): every PNG filter leaves the
    first pixel of the first row as it is (there is nothing before or above it)."""
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        if kind == b"IDAT":
            idat += png[pos + 8:pos + 8 + length]
        pos += 12 + length
    raw = zlib.decompress(idat)
    return raw[1], raw[2], raw[3]


@pytest.fixture
def page(client, site):
    return nav(client, site.url("capture_page.html"))


# --- GET /capture ----------------------------------------------------------------------------------
def test_capture_pairs_a_screenshot_with_an_interactive_snapshot_of_the_same_document(client, page, tmp_path):
    r = client.get("/capture")
    assert r.status_code == 200, r.json
    cap = check(CaptureResponse, r.json)
    assert cap["status"] == "ok" and cap["tabId"] == page and cap["title"] == "Capture"
    assert cap["pairing"]["navigated"] is False and cap["epoch"]["domEpoch"].startswith("ep_")
    assert cap["epoch"]["frameId"] and cap["epoch"]["loaderId"]
    image = cap["image"]
    assert image["coordinateSpace"] == "viewport" and image["format"] == "jpeg"
    path = Path(image["path"])  # output=file is the default, under the state dir
    assert path.is_relative_to((tmp_path / ".pinchtab").resolve() / "outputs" / "captures")
    assert path.read_bytes()[:3] == b"\xff\xd8\xff" and image["bytes"] == path.stat().st_size
    nodes = {n["name"]: n for n in cap["snapshot"]["nodes"]}
    assert cap["snapshot"]["filter"] == "interactive" and cap["snapshot"]["nodeCount"] == len(cap["snapshot"]["nodes"])
    go = nodes["Go"]
    assert go["boundingBox"] == {"x": 20, "y": 80, "width": 120, "height": 40} and go["visible"] is True
    assert nodes["Far"]["boundingBox"]["y"] == pytest.approx(1800, abs=2)  # below the fold: viewport space
    # The refs are the tab's: an action on one reaches the element the picture shows.
    assert client.post("/action", json={"kind": "click", "ref": nodes["Help"]["ref"]}).status_code == 200
    # Another capture: a new epoch token, the same refs.
    again = client.get("/capture?output=inline&withBounds=false").json
    assert again["epoch"]["domEpoch"] != cap["epoch"]["domEpoch"]
    assert base64.b64decode(again["image"]["base64"])[:3] == b"\xff\xd8\xff"
    assert {n["ref"] for n in again["snapshot"]["nodes"]} == {n["ref"] for n in cap["snapshot"]["nodes"]}
    assert all("boundingBox" not in n for n in again["snapshot"]["nodes"])


def test_capture_of_one_element_and_of_the_whole_document(client, page):
    one = client.get(f"/tabs/{page}/capture?selector=%23panel&format=png&output=inline&wait=none").json
    assert one["image"]["coordinateSpace"] == "clip"
    assert one["image"]["clip"] == {"x": 400, "y": 200, "w": 200, "h": 100}
    [inner] = one["snapshot"]["nodes"]
    assert inner["name"] == "Inner" and inner["boundingBox"]["x"] == 0 and inner["boundingBox"]["y"] == 0
    whole = client.get("/capture?beyondViewport=true&output=inline&wait=load").json
    assert whole["image"]["coordinateSpace"] == "document"
    far = next(n for n in whole["snapshot"]["nodes"] if n["name"] == "Far")
    assert far["boundingBox"]["y"] == pytest.approx(1800, abs=2)
    raw = client.get("/capture?output=raw&format=png")
    assert raw.content_type == "image/png" and raw.data[:4] == b"\x89PNG"


def test_capture_rejects_bad_options_with_the_field_named(client, page):
    for query, field in (("wait=forever", "wait"), ("output=disk", "output"), ("scale=0", "scale"),
                         ("filter=some", "filter"), ("quality=101", "quality")):
        r = client.get(f"/capture?{query}")
        assert r.status_code == 400 and r.json["details"]["field"] == field, r.json
    assert client.get("/capture?selector=%23nope").status_code == 404


def test_capture_says_when_the_page_navigated_mid_capture(client, site):
    nav(client, site.url("capture_nav.html"))
    r = client.get("/capture?noAnimations=true&requirePair=true&output=inline")
    assert r.status_code == 409 and r.json["code"] == "navigation_changed", r.json
    nav(client, site.url("capture_nav.html"))
    r = client.get("/capture?noAnimations=true&output=inline")
    if r.status_code == 200:
        assert r.json["pairing"]["navigated"] is True
    else:  # the old document went away under the snapshot itself
        assert r.status_code == 409 and r.json["code"] == "navigation_changed"


# --- noAnimations -----------------------------------------------------------------------------------
def test_no_animations_shows_a_running_transition_at_its_end(client, page):
    def fade(query: str) -> tuple[int, int, int]:
        shot = client.get(f"/screenshot?selector=%23fade&format=png&raw=true&scale=0.05{query}")
        assert shot.status_code == 200
        return first_pixel(shot.data)

    r, _, b = fade("")
    assert b > 200 and r < 60  # ten minutes of a blue-to-red fade: just begun
    assert fade("&noAnimations=true") == (255, 0, 0)


def test_the_config_holds_animations_still_for_every_capture(app_factory, site):
    client = app_factory(**{"instanceDefaults.noAnimations": True}).test_client()
    nav(client, site.url("capture_page.html"))
    shot = client.get("/screenshot?selector=%23fade&format=png&raw=true&scale=0.05")
    assert first_pixel(shot.data) == (255, 0, 0)


# --- annotations -----------------------------------------------------------------------------------
def test_annotated_screenshot_lists_the_boxes_and_leaves_the_page_as_it_was(client, page):
    plain = client.get("/screenshot?format=png&raw=true").data
    r = client.get("/screenshot?format=png&annotate=true")
    shot = check(ScreenshotResponse, r.json)
    names = {a["name"]: a for a in shot["annotations"]}
    assert "Hidden" not in names and {"Go", "Help", "Query", "Inner"} <= set(names)
    assert names["Go"]["box"] == {"x": 20, "y": 80, "w": 120, "h": 40} and names["Go"]["tag"] == "button"
    assert names["Go"]["ref"].startswith("e") and names["Go"]["role"] == "button"
    assert base64.b64decode(shot["base64"]) != plain  # the boxes are in the picture
    assert client.get("/screenshot?format=png&raw=true").data == plain  # and gone from the page
    one = client.get("/screenshot?format=png&annotate=true&selector=%23panel").json
    assert [(a["name"], a["box"]["x"], a["box"]["y"]) for a in one["annotations"]] == [("Inner", 0, 0)]


def test_annotate_leaves_a_clickable_overlay_until_cleared(app_factory, site):
    client = app_factory(**{"security.allowEvaluate": True}).test_client()
    nav(client, site.url("capture_page.html"))

    def overlay_labels() -> list[str]:
        labels = "'#__pinchtab_annotations_interactive__ div > div'"  # each box's label
        r = client.post("/evaluate", json={"expression": f"[...document.querySelectorAll({labels})]"
                                                         ".map(s => s.textContent)"})
        return r.json["result"]

    r = client.get("/annotate")
    ann = check(AnnotateResponse, r.json)
    go = next(a for a in ann["annotations"] if a["name"] == "Go")
    assert ann["annotated"] == len(ann["annotations"]) and go["ref"] in overlay_labels()
    # A person clicks the label of Go: its description is copied.
    label = go["box"]
    assert client.post("/action", json={"kind": "click", "x": label["x"] + 6, "y": label["y"] - 8}).status_code == 200
    copied = client.post("/evaluate", json={"expression": "window.__ptLastCopied"}).json["result"]
    assert f"Element: {go['ref']}" in copied and "Role: button" in copied and "Name: Go" in copied
    assert "CSS: #go" in copied and 'XPath: //*[@id="go"]' in copied
    title = client.get("/title").json["title"]
    assert f"Page: {title} (http://127.0.0.1" in copied
    # The original's clients click a label from a script: the <div> whose text is the ref, its click event.
    help_ref = next(a["ref"] for a in ann["annotations"] if a["name"] == "Help")
    click = ("(() => { let label = null; document.getElementById('__pinchtab_annotations_interactive__')"
             f".querySelectorAll('div').forEach((d) => {{ if (d.textContent === '{help_ref}') label = d; }});"
             " label.dispatchEvent(new MouseEvent('click', {bubbles: true})); return window.__ptLastCopied; })()")
    copied = client.post("/evaluate", json={"expression": click}).json["result"]
    assert f"Element: {help_ref}" in copied and "Page: " in copied and "CSS: " in copied and "XPath: " in copied
    # Scoped: only the elements inside; clear: the overlay goes.
    scoped = client.get("/annotate?selector=%23panel").json
    assert [a["name"] for a in scoped["annotations"]] == ["Inner"]
    assert overlay_labels() == [scoped["annotations"][0]["ref"]]
    assert client.get("/annotate?clear=true").json == {"cleared": True}
    assert overlay_labels() == []
    r = client.get("/annotate?selector=%23nope")
    assert r.status_code == 400 and r.json["code"] == "element_not_found" and r.json["details"]["field"] == "selector"
