"""Reading a page without acting on it: title, url, html, styles, element reads, count, box, PDF and
element screenshots, against a real headless Chromium."""
from __future__ import annotations

import base64
import os
import re
import stat
import struct
import zlib
from pathlib import Path

from support.waits import wait_until


def nav(client, url, **extra):
    r = client.post("/navigate", json={"url": url, **extra})
    assert r.status_code == 200, r.json
    return r.json["tabId"]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    return struct.unpack(">II", data[16:24])


def png_pixels(data: bytes) -> list[list[tuple[int, int, int]]]:
    """The RGB rows of an 8-bit, non-interlaced RGB or RGBA PNG (what Chrome's screenshots are)."""
    width, height = png_size(data)
    pos, idat, bpp = 8, b"", 3
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            assert body[8] == 8 and body[12] == 0, "8-bit, not interlaced"
            bpp = {2: 3, 6: 4}[body[9]]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    raw, stride, rows, prev, i = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp), 0
    for _ in range(height):
        kind, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):  # undo the row filter (PNG spec, section 9)
            a = line[x - bpp] if x >= bpp else 0
            b, c = prev[x], (prev[x - bpp] if x >= bpp else 0)
            if kind == 1:
                line[x] = (line[x] + a) & 255
            elif kind == 2:
                line[x] = (line[x] + b) & 255
            elif kind == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif kind == 4:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        prev = line
    return rows


def corners(data: bytes) -> set[tuple[int, int, int]]:
    rows = png_pixels(data)
    return {rows[0][0], rows[0][-1], rows[-1][0], rows[-1][-1]}


def media_boxes(pdf: bytes) -> list[bytes]:
    return re.findall(rb"/MediaBox\s*\[([^\]]*)\]", pdf)


def page_size(pdf: bytes) -> tuple[int, int]:
    """The first page's width and height in points, whole."""
    _, _, w, h = (float(v) for v in media_boxes(pdf)[0].split())
    return int(w), int(h)


def state_dir(tmp_path: Path) -> Path:
    return (tmp_path / ".pinchtab").resolve()  # make_config sets HOME to tmp_path


def assert_error(r, status: int, code: str, words: str = "") -> None:
    assert r.status_code == status and r.json["code"] == code, r.json
    assert words in r.json["error"], r.json


# --- title, url, html, styles ------------------------------------------------------------------
def test_title_url_and_html_of_the_page_and_of_one_element(client, site):
    tab = nav(client, site.url("reads_inspect.html"))
    page = {"tabId": tab, "url": site.url("reads_inspect.html"), "title": "Reads"}
    assert client.get("/title").json == page
    assert client.get(f"/tabs/{tab}/url").json == page
    assert client.get(f"/url?tabId={tab}").json == page

    doc = client.get("/html").json
    assert doc["tabId"] == tab and doc["title"] == "Reads" and doc["truncated"] is False
    assert doc["html"].startswith("<html>") and "<title>Reads</title>" in doc["html"]
    el = client.get(f"/tabs/{tab}/html?selector=%23boxed").json
    assert el["html"] == '<div id="boxed" data-kind="box" title="A box">Boxed <b>text</b></div>'
    assert client.get("/html?ref=%23boxed").json["html"] == el["html"]  # legacy ref takes any selector
    cut = client.get("/html?maxChars=12").json
    assert cut["html"] == doc["html"][:12] and cut["truncated"] is True
    # an element inside a (same-process) iframe is reached too
    assert client.get("/html?selector=%23inner").json["html"].startswith('<button id="inner"')

    assert_error(client.get("/html?selector=%23nope"), 404, "element_not_found", "#nope")
    assert_error(client.get("/html?maxChars=0"), 400, "bad_request", "maxChars")
    assert_error(client.get("/tabs/NOSUCHTAB/title"), 404, "tab_not_found")
    assert_error(client.get("/url?tabId=NOSUCHTAB"), 404, "tab_not_found")


def test_styles_are_computed_sorted_and_narrowed_by_prop(client, site):
    tab = nav(client, site.url("reads_inspect.html"))
    root = client.get("/styles").json
    assert root["tabId"] == tab and root["title"] == "Reads"
    keys = list(root["styles"])
    assert len(keys) > 100 and keys == sorted(keys) and root["styles"]["display"] == "block"
    boxed = client.get(f"/tabs/{tab}/styles?selector=%23boxed").json["styles"]
    assert boxed["color"] == "rgb(255, 0, 0)" and boxed["position"] == "absolute" and boxed["width"] == "200px"
    assert client.get("/styles?selector=%23boxed&prop=color").json["styles"] == {"color": "rgb(255, 0, 0)"}
    assert client.get("/styles?ref=%23boxed&prop=--brand").json["styles"] == {"--brand": "teal"}
    assert client.get("/styles?selector=%23boxed&prop=no-such-prop").json["styles"] == {"no-such-prop": None}
    assert_error(client.get("/styles?selector=%23nope"), 404, "element_not_found")


# --- one element ---------------------------------------------------------------------------------
def test_element_reads_by_selector_or_legacy_ref(client, site):
    tab = nav(client, site.url("reads_inspect.html"))
    get = lambda path: client.get(path).json  # noqa: E731
    assert get("/value?selector=%23name") == {"ref": "#name", "value": "Ada"}
    assert get("/value?selector=%23sel")["value"] == "b"
    assert get("/value?selector=%23ta")["value"] == "notes"
    assert get("/value?selector=%23boxed") == {"ref": "#boxed", "value": None}  # not a form control
    client.post("/action", json={"kind": "fill", "selector": "#empty", "text": "typed"})
    assert get(f"/tabs/{tab}/value?selector=%23empty")["value"] == "typed"

    # a snapshot ref, given as ref (legacy) or as selector
    nodes = client.get("/snapshot?filter=interactive").json["nodes"]
    name_ref = next(n["ref"] for n in nodes if n["role"] == "textbox" and n["name"] == "Name")
    assert get(f"/value?ref={name_ref}") == {"ref": name_ref, "value": "Ada"}
    assert get(f"/enabled?selector={name_ref}") == {"ref": name_ref, "enabled": True}

    assert get("/attr?selector=%23boxed&name=title") == {"ref": "#boxed", "name": "title", "value": "A box"}
    assert get("/attr?ref=%23boxed&name=data-kind")["value"] == "box"
    assert get("/attr?selector=%23boxed&name=alt") == {"ref": "#boxed", "name": "alt", "value": None}

    for sel, want in (("%23boxed", True), ("%23hidden", False), ("%23ghost", False), ("%23faded", False),
                      ("%23far", True), ("%23inner", True)):
        assert get(f"/visible?selector={sel}")["visible"] is want, sel
    for sel, want in (("%23name", True), ("%23off", False), ("%23inset", False), ("%23aria-off", False)):
        assert get(f"/enabled?selector={sel}")["enabled"] is want, sel
    for sel, want in (("%23yes", True), ("%23no", False), ("%23r1", True), ("%23sw", True), ("%23boxed", False)):
        assert get(f"/checked?selector={sel}")["checked"] is want, sel
    client.post("/action", json={"kind": "check", "selector": "#no"})
    assert get("/checked?ref=%23no") == {"ref": "#no", "checked": True}

    missing = "selector (or ref) query parameter is required"
    for path in ("/value", "/attr?name=x", "/box", "/visible", "/enabled", "/checked", "/count", "/value?selector=%20"):
        assert_error(client.get(path), 400, "bad_request", missing)
    assert_error(client.get("/attr?selector=%23boxed"), 400, "bad_request", "name query parameter is required")
    assert_error(client.get("/attr?selector=%23boxed&name="), 400, "bad_request", "name")
    for path in ("/value", "/attr", "/box", "/visible", "/enabled", "/checked"):
        assert_error(client.get(f"{path}?ref=%23does-not-exist&name=x"), 404, "element_not_found")
    assert_error(client.get("/value?ref=e999999"), 404, "ref_not_found")
    assert_error(client.get("/visible?selector=%5B%5B%5B"), 400, "bad_selector")
    assert_error(client.get("/tabs/NOSUCHTAB/value?selector=%23name"), 404, "tab_not_found")


def test_box_is_in_viewport_pixels_across_frames(client, site, site2):
    nav(client, site.url("reads_inspect.html"))
    assert client.get("/box?selector=%23boxed").json == {"ref": "#boxed", "box": {
        "x": 40, "y": 30, "width": 200, "height": 50, "top": 30, "right": 240, "bottom": 80, "left": 40}}
    # inside the iframe at (300, 100) with a 5 px border: the button's (20, 10) is (325, 115) in the viewport
    inner = client.get("/box?selector=%23inner").json["box"]
    assert (inner["x"], inner["y"], inner["width"], inner["height"]) == (325, 115, 80, 30)
    client.post("/action", json={"kind": "scroll", "direction": "down", "pixels": 20})
    wait_until(lambda: client.get("/box?selector=%23boxed").json["box"]["y"] == 10, 5)  # viewport, not page

    # a cross-site iframe runs in another process: its offset is added across sessions too
    nav(client, site.url("xorigin.html") + f"?card=http://localhost:{site2.port}", waitFor="load")
    wait_until(lambda: client.get("/count?selector=%23num").json["count"] == 1, 10)
    frame = client.get("/box?selector=%23card").json["box"]
    field = client.get("/box?selector=%23num").json["box"]
    content_top = frame["top"] + 7 + 5  # border and padding of the iframe
    assert content_top <= field["top"] and field["bottom"] <= frame["bottom"]
    assert frame["left"] + 12 <= field["left"] and field["right"] <= frame["right"]


def test_count_by_every_kind_of_selector(client, site):
    tab = nav(client, site.url("reads_inspect.html"))
    cases = {".item": 4,  # three list items, and the button of the same class inside the iframe
             "//li": 3, "xpath://li[@class='item']": 3, "text:two": 1, "first:.item": 1, "nth:9:.item": 0,
             "#nope": 0, "e999999": 0, "role:checkbox": 2, "label:Name": 1}
    for sel, want in cases.items():
        r = client.get("/count", query_string={"selector": sel})
        assert r.status_code == 200 and r.json == {"selector": sel, "count": want}, (sel, r.json)
    assert client.get(f"/tabs/{tab}/count?ref=.item").json == {"selector": ".item", "count": 4}
    assert_error(client.get("/count?selector=%5B%5B%5B"), 400, "bad_selector")
    assert_error(client.get("/count?selector=nth:0:li"), 400, "bad_selector")


# --- PDF -------------------------------------------------------------------------------------------
def test_pdf_as_base64_raw_bytes_and_from_a_post_body(client, site):
    tab = nav(client, site.url("reads_inspect.html"))
    doc = client.get("/pdf").json
    assert doc["format"] == "pdf"
    pdf = base64.b64decode(doc["base64"])
    assert pdf.startswith(b"%PDF") and page_size(pdf) == (612, 792)  # US letter, portrait
    raw = client.get(f"/tabs/{tab}/pdf?raw=true&landscape=true")
    assert raw.content_type == "application/pdf" and raw.data.startswith(b"%PDF")
    assert page_size(raw.data) == (792, 612)
    a4 = client.get("/pdf?raw=1&paperWidth=8.27&paperHeight=11.69&marginTop=0&scale=0.5").data
    assert page_size(a4) == (595, 841)  # A4
    r = client.get("/pdf", query_string={"raw": "true", "displayHeaderFooter": "true",
                                          "headerTemplate": "<span class='title'></span>", "pageRanges": "1"})
    assert r.status_code == 200 and r.data.startswith(b"%PDF")

    # POST /tabs/{id}/pdf takes the same keys from a JSON body; others are ignored
    r = client.post(f"/tabs/{tab}/pdf", json={"landscape": True, "raw": True, "colour": ["ignored"]})
    assert r.status_code == 200 and page_size(r.data) == (792, 612)
    r = client.post("/pdf", json={"tabId": tab, "paperWidth": 8.27, "paperHeight": 11.69})
    assert page_size(base64.b64decode(r.json["base64"])) == (595, 841)

    assert_error(client.post(f"/tabs/{tab}/pdf", json={"scale": [1]}), 400, "bad_request", "scale")
    assert_error(client.post(f"/tabs/{tab}/pdf", json={"landscape": {"yes": 1}}), 400, "bad_request", "landscape")
    assert_error(client.post(f"/tabs/{tab}/pdf", json={"tabId": "OTHER"}), 400, "bad_request", "does not match")
    assert_error(client.post(f"/tabs/{tab}/pdf", json={"landscape": "maybe"}), 400, "bad_request", "landscape")
    assert_error(client.get("/pdf?scale=9"), 400, "bad_request", "scale")
    assert_error(client.get("/pdf?output=printer"), 400, "bad_request", "output")
    for field, template in (("headerTemplate", "<script>fetch('/x')</script>"),
                            ("footerTemplate", "<a href='javascript:alert(1)'>x</a>"),
                            ("headerTemplate", "<img src=x onerror=alert(1)>"),
                            ("footerTemplate", "<div ONCLICK = 'x()'>")):
        r = client.get("/pdf", query_string={"displayHeaderFooter": "true", field: template})
        assert_error(r, 400, "bad_request", field)
    # options only Chrome can judge are still the caller's mistake, not the server's
    assert_error(client.get("/pdf?pageRanges=5-9"), 400, "bad_pdf_options", "pageRanges")
    assert_error(client.get("/pdf?pageRanges=abc"), 400, "bad_pdf_options", "pageRanges")
    assert_error(client.get("/pdf?paperWidth=0.5&paperHeight=0.5&marginTop=1"), 400, "bad_pdf_options")
    assert_error(client.get("/tabs/NOSUCHTAB/pdf"), 404, "tab_not_found")


# --- files ------------------------------------------------------------------------------------------
def test_pdf_and_screenshot_files_stay_inside_the_state_dir(client, site, tmp_path):
    nav(client, site.url("reads_inspect.html"))
    root = state_dir(tmp_path) / "outputs"

    def check_file(out: dict, folder: str, magic: bytes, fmt: str) -> Path:
        path = Path(out["path"])
        assert path.resolve().parent == root / folder, out
        assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
        data = path.read_bytes()
        assert data.startswith(magic) and out["size"] == len(data) and out["format"] == fmt
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", out["timestamp"])
        return path

    pdf = check_file(client.get("/pdf?output=file").json, "pdfs", b"%PDF", "pdf")
    assert re.fullmatch(r"page-[\d-]+\.pdf", pdf.name)
    named = check_file(client.post("/pdf?output=file", json={"path": "reports/q3.pdf"}).json, "reports", b"%PDF",
                       "pdf")
    assert named == root / "reports" / "q3.pdf"
    shot = check_file(client.get("/screenshot?output=file").json, "screenshots", b"\xff\xd8\xff", "jpeg")
    assert re.fullmatch(r"screenshot-[\d-]+\.jpg", shot.name)
    png = check_file(client.get("/screenshot?output=file&format=png&selector=%23boxed").json, "screenshots",
                     b"\x89PNG", "png")
    assert png.suffix == ".png" and png_size(png.read_bytes()) == (200, 50)

    outside = tmp_path / "outside.pdf"
    for route in ("/pdf", "/screenshot"):
        for bad in ("../escape.pdf", str(outside), "/etc/pinchtab.pdf", "pdfs/../../escape.pdf"):
            r = client.get(route, query_string={"output": "file", "path": bad})
            assert_error(r, 400, "invalid_output_path", "is outside outputs/")
    assert_error(client.get("/pdf?output=file&path=pdfs"), 400, "invalid_output_path", "directory")
    assert_error(client.get("/screenshot?output=file&path=screenshots"), 400, "invalid_output_path", "directory")
    assert not outside.exists() and not (tmp_path / "escape.pdf").exists()


def test_screenshot_of_one_element(client, site):
    nav(client, site.url("reads_inspect.html"))
    boxed = client.get("/screenshot?selector=%23boxed&format=png&raw=true").data
    assert png_size(boxed) == (200, 50) and corners(boxed) == {(255, 221, 0)}  # its yellow background
    # below the fold: scrolled into view first
    far = client.get("/screenshot?selector=%23far&format=png&raw=true").data
    assert png_size(far) == (120, 40) and corners(far) == {(0, 170, 0)}
    # inside an iframe: a solid blue button
    inner = client.get("/screenshot?selector=%23inner&format=png&raw=true").data
    assert png_size(inner) == (80, 30) and {px for row in png_pixels(inner) for px in row} == {(0, 0, 255)}
    half = client.get("/screenshot?selector=%23boxed&format=png&raw=true&scale=0.5").data
    assert png_size(half) == (100, 25) and corners(half) == {(255, 221, 0)}
    shot = client.get("/screenshot?selector=%23boxed").json
    assert shot["format"] == "jpeg" and base64.b64decode(shot["base64"])[:3] == b"\xff\xd8\xff"
    assert_error(client.get("/screenshot?selector=%23nope"), 404, "element_not_found")
    assert_error(client.get("/screenshot?selector=%23hidden"), 400, "action_failed", "no box")


def test_readable_text_is_the_main_content_not_the_first_of_several_articles(client, site):
    client.post("/navigate", json={"url": site.url("text_feed.html")})
    feed = client.get("/text").json["text"]
    assert all(word in feed for word in ("ravens", "herons", "owls", "Latest posts")), feed
    assert "Copyright footer" not in feed and "Topics" not in feed
    client.post("/navigate", json={"url": site.url("text_post.html")})
    post = client.get("/text").json["text"]
    assert "migration of ravens" in post and "second paragraph" in post
    assert "teaser" not in post and "Copyright footer" not in post and "nice." not in post

