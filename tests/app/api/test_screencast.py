"""Live frames and recordings, against a real headless Chromium behind a real threaded server: the
WebSocket GET /screencast, GET /screencast/tabs, and POST /record/start|stop, GET /record/status."""
from __future__ import annotations

import base64
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import websocket
from support.debug_pages import AppServer
from support.waits import wait_until

ON = {"security.allowScreencast": True}


@pytest.fixture
def serve(app_factory: Callable[..., Any]) -> Iterator[Callable[..., AppServer]]:
    """A bridge app (``overrides`` on its config) on a real server: WebSockets need one."""
    servers: list[AppServer] = []

    def start(**overrides: Any) -> AppServer:
        srv = AppServer(app_factory(**overrides))
        servers.append(srv)
        return srv

    yield start
    for srv in servers:
        srv.stop()


def open_tab(srv: AppServer, url: str) -> str:
    r = requests.post(srv.url("/navigate"), json={"url": url}, timeout=30)
    assert r.status_code == 200, r.text
    return r.json()["tabId"]


def cast(srv: AppServer, query: str) -> websocket.WebSocket:
    return websocket.create_connection(srv.url(f"/screencast?{query}").replace("http://", "ws://"), timeout=10,
                                       skip_utf8_validation=True)


def frames(ws: websocket.WebSocket, count: int, timeout_s: float = 10.0) -> list[dict[str, Any]]:
    """The next ``count`` frame messages (within the deadline)."""
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    while len(out) < count:
        ws.settimeout(max(0.05, deadline - time.monotonic()))
        msg = json.loads(ws.recv())
        if msg["type"] == "frame":
            out.append(msg)
    return out


def closed_with(ws: websocket.WebSocket, timeout_s: float = 5.0) -> int:
    """The close code the server ends the connection with (frames before it are skipped)."""
    deadline = time.monotonic() + timeout_s
    while True:
        ws.settimeout(max(0.05, deadline - time.monotonic()))
        opcode, data = ws.recv_data(control_frame=True)
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return int.from_bytes(data[:2], "big")


# --- the screencast WebSocket --------------------------------------------------------------------------
def test_a_tab_is_cast_frame_by_frame_even_behind_another_tab(serve, site):
    srv = serve(**ON)
    ticking = open_tab(srv, site.url("capture_ticker.html"))
    open_tab(srv, site.url("capture_page.html"))  # now in front: the ticker is a background tab
    listed = requests.get(srv.url("/screencast/tabs"), timeout=10).json()
    assert ticking in [t["id"] for t in listed]
    ws = cast(srv, f"tabId={ticking}&fps=30&maxWidth=400&maxHeight=300")
    start = json.loads(ws.recv())
    assert start == {"type": "start", "tabId": ticking, "format": "jpeg", "maxWidth": 400, "maxHeight": 300,
                     "fps": 30}
    got = frames(ws, 4)
    assert [f["seq"] for f in got] == sorted({f["seq"] for f in got})  # in order, none twice
    for f in got:
        assert f["tabId"] == ticking and f["format"] == "jpeg"
        assert base64.b64decode(f["data"])[:3] == b"\xff\xd8\xff"
        assert f["metadata"]["deviceWidth"] > 0 and "timestamp" in f["metadata"]
    assert len({f["data"] for f in got}) > 1  # the page changes, and so do the frames
    ws.close()


def test_a_still_page_keeps_streaming_its_last_frame_and_a_scroll_draws_a_new_one(serve, site):
    srv = serve(**ON)
    still = open_tab(srv, site.url("links.html"))  # still once loaded, and taller than the window
    ws = cast(srv, f"tabId={still}&fps=5&quality=20&maxWidth=320")
    assert json.loads(ws.recv())["type"] == "start"
    seen: list[dict[str, Any]] = []

    def repeated() -> dict[str, Any] | None:
        seen.append(frames(ws, 1)[0])
        return seen[-1] if seen[-1].get("repeat") else None

    # Chrome draws while the page settles, then nothing: the last frame goes out again.
    again = wait_until(repeated, 10)
    drawn = [f for f in seen if not f.get("repeat")][-1]
    assert (again["seq"], again["data"]) == (drawn["seq"], drawn["data"])
    assert repeated() is not None  # and again
    r = requests.post(srv.url("/action"), json={"tabId": still, "kind": "scroll", "scrollY": 300}, timeout=10)
    assert r.status_code == 200, r.text
    fresh = wait_until(lambda: next((f for f in frames(ws, 1) if not f.get("repeat")), None), 10)
    assert fresh["seq"] > again["seq"] and fresh["metadata"]["scrollOffsetY"] > 0
    ws.close()


def test_two_viewers_share_a_cast_and_one_leaving_keeps_the_other(serve, site):
    srv = serve(**ON)
    ticking = open_tab(srv, site.url("capture_ticker.html"))
    a = cast(srv, f"tabId={ticking}&fps=20")
    b = cast(srv, f"tabId={ticking}&fps=4")
    assert frames(a, 2) and frames(b, 1)
    t0 = time.monotonic()
    frames(b, 3)
    assert time.monotonic() - t0 > 0.45  # four a second at most, as asked (one may have been waiting)
    a.close()
    assert frames(b, 1)
    b.close()
    again = cast(srv, f"tabId={ticking}")  # the cast stopped with its last viewer, and starts anew
    assert frames(again, 1)
    again.close()


def test_the_cast_ends_when_its_tab_closes_and_at_shutdown_within_a_second(serve, site):
    srv = serve(**ON)
    ticking = open_tab(srv, site.url("capture_ticker.html"))
    open_tab(srv, site.url("capture_page.html"))
    ws = cast(srv, f"tabId={ticking}")
    frames(ws, 1)
    assert requests.post(srv.url("/close"), json={"tabId": ticking}, timeout=10).status_code == 200
    assert closed_with(ws) == 1001
    other = open_tab(srv, site.url("capture_ticker.html"))
    ws = cast(srv, f"tabId={other}")
    frames(ws, 1)
    t0 = time.monotonic()
    for hook in srv.server.app.extensions["pinchtab.on_shutdown"]:
        hook()
    assert closed_with(ws, 2.0) == 1001 and time.monotonic() - t0 < 1.0


def test_screencast_answers_before_the_upgrade(serve, site):
    off = serve()
    tab_id = open_tab(off, site.url("capture_page.html"))
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        cast(off, f"tabId={tab_id}")
    assert refused.value.status_code == 403
    assert json.loads(refused.value.resp_body)["code"] == "screencast_disabled"
    r = requests.get(off.url("/screencast/tabs"), timeout=10)
    assert r.status_code == 403 and r.json()["details"]["setting"] == "security.allowScreencast"

    srv = serve(**ON, **{"debug.maxConnections": 1})
    tab_id = open_tab(srv, site.url("capture_page.html"))
    for query, status in ((f"tabId={tab_id}&quality=0", 400), ("tabId=NOPE", 404)):
        with pytest.raises(websocket.WebSocketBadStatusException) as bad:
            cast(srv, query)
        assert bad.value.status_code == status
    first = cast(srv, f"tabId={tab_id}")
    with pytest.raises(websocket.WebSocketBadStatusException) as full:
        cast(srv, f"tabId={tab_id}")
    assert full.value.status_code == 503 and full.value.resp_headers.get("retry-after") == "5"
    first.close()
    wait_until(lambda: srv.server.app.extensions["pinchtab.debug"].connections == 0, 5)
    cast(srv, f"tabId={tab_id}").close()  # the slot came back


# --- recording -------------------------------------------------------------------------------------------
def ebml_blocks(data: bytes) -> tuple[str, int]:
    """A WebM file's DocType and how many video blocks its clusters hold (EBML walked by hand)."""
    def vint(i: int, keep_marker: bool) -> tuple[int, int]:
        first, length, mask = data[i], 1, 0x80
        while not first & mask:
            mask >>= 1
            length += 1
        value = first if keep_marker else first & (mask - 1)
        for k in range(1, length):
            value = (value << 8) | data[i + k]
        return value, length

    doc_type, blocks = "", 0

    def walk(i: int, end: int) -> None:
        nonlocal doc_type, blocks
        while i < end:
            element, n = vint(i, True)
            size, m = vint(i + n, False)
            start = i + n + m
            if size == (1 << (7 * m)) - 1:  # "unknown size": MediaRecorder streams its segment and clusters
                size = end - start
            if element == 0x4282:
                doc_type = data[start:start + size].decode()
            elif element in (0xA3, 0xA0):  # SimpleBlock, BlockGroup
                blocks += 1
            if element in (0x1A45DFA3, 0x18538067, 0x1F43B675):  # EBML header, Segment, Cluster
                walk(start, min(start + size, end))
            i = start + size

    assert data[:4] == bytes.fromhex("1a45dfa3"), "not an EBML file"
    walk(0, len(data))
    return doc_type, blocks


def browser_reads(client, data: bytes, kind: str) -> dict[str, Any]:
    """What Chromium itself makes of the file: a GIF's frames (ImageDecoder), a WebM's video size."""
    b64 = base64.b64encode(data).decode()
    if kind == "gif":
        expr = f"""(async () => {{
          const bytes = Uint8Array.from(atob("{b64}"), (c) => c.charCodeAt(0));
          const dec = new ImageDecoder({{data: bytes, type: "image/gif"}});
          await dec.tracks.ready;
          const n = dec.tracks.selectedTrack.frameCount, sizes = [];
          for (let i = 0; i < n; i++) {{
            const f = (await dec.decode({{frameIndex: i}})).image;
            sizes.push([f.displayWidth, f.displayHeight, f.duration]);
            f.close();
          }}
          return {{frames: n, sizes}};
        }})()"""
    else:
        expr = f"""new Promise((done) => {{
          const v = document.createElement("video");
          v.onloadeddata = () => done({{width: v.videoWidth, height: v.videoHeight, ready: v.readyState}});
          v.onerror = () => done({{error: String(v.error && v.error.message)}});
          v.src = "data:video/webm;base64,{b64}";
        }})"""
    r = client.post("/evaluate", json={"expression": expr, "awaitPromise": True})
    assert r.status_code == 200, r.json
    return r.json["result"]


@pytest.fixture
def recorder(app_factory, site):
    client = app_factory(**ON, **{"security.allowEvaluate": True}).test_client()
    r = client.post("/navigate", json={"url": site.url("capture_ticker.html")})
    assert r.status_code == 200
    return client


def record(client, **body: Any) -> dict[str, Any]:
    tabs_before = client.get("/tabs").json["tabs"]
    r = client.post("/record/start", json={"fps": 10, **body})
    assert r.status_code == 200, r.json
    assert client.get("/tabs").json["tabs"] == tabs_before  # the encoder page is no tab
    wait_until(lambda: client.get("/record/status").json["frames"] >= 5, 10)
    status = client.get("/record/status").json
    assert status["active"] is True and status["state"] == "recording" and status["format"] == r.json["format"]
    stop = client.post("/record/stop")
    assert stop.status_code == 200, stop.json
    assert stop.json["status"] == "encoding" and stop.json["format"] == r.json["format"], stop.json
    return finished(client, stop.json)


def finished(client, stop: dict[str, Any]) -> dict[str, Any]:
    """The status once the stopped recording's file is made (a stop answers before it is)."""
    def done() -> dict[str, Any] | None:
        status = client.get("/record/status").json
        assert status["state"] in ("encoding", "finished"), status
        return status if status["state"] == "finished" else None

    status = wait_until(done, 30)
    assert status["active"] is False and status["path"] == status["outputPath"] == stop["path"]
    assert status["frames"] >= stop["frames"] and status["format"] == stop["format"]
    return status


def test_a_recording_is_a_webm_file_chromium_plays(recorder, tmp_path):
    saved = record(recorder, scale=0.5)
    path = Path(saved["path"])
    assert path.parent == (tmp_path / ".pinchtab").resolve() / "outputs" / "recordings" and path.suffix == ".webm"
    data = path.read_bytes()
    assert saved["format"] == "webm" and saved["size"] == len(data)
    assert saved["frames"] >= 5 and saved["durationMs"] >= 400
    doc_type, blocks = ebml_blocks(data)
    assert doc_type == "webm" and blocks >= 5
    video = browser_reads(recorder, data, "webm")
    viewport = recorder.post("/evaluate", json={"expression": "[innerWidth, innerHeight]"}).json["result"]
    assert (video["width"], video["height"]) == (round(viewport[0] / 4) * 2, round(viewport[1] / 4) * 2)


def test_a_recording_is_a_gif_of_the_frames_that_changed(recorder):
    saved = record(recorder, format="gif", file="ticker", scale=0.25)
    path = Path(saved["path"])
    assert path.name == "ticker.gif" and path.read_bytes()[:6] == b"GIF89a"
    gif = browser_reads(recorder, path.read_bytes(), "gif")
    assert gif["frames"] == saved["frames"] >= 5
    assert len({(w, h) for w, h, _ in gif["sizes"]}) == 1
    assert all(duration > 0 for _, _, duration in gif["sizes"])  # each frame shown until the next came


def test_recording_refuses_what_it_cannot_do(app_factory, recorder, site):
    off = app_factory().test_client()
    for method, route in (("post", "/record/start"), ("post", "/record/stop"), ("get", "/record/status")):
        r = getattr(off, method)(route)
        assert r.status_code == 403 and r.json["code"] == "recording_disabled", r.json
    for body, field in (({"format": "mp4"}, "format"), ({"fps": 0}, "fps"), ({"file": "../up.webm"}, "file"),
                        ({"file": "sub/dir.webm"}, "file"), ({"scale": 2}, "scale")):
        r = recorder.post("/record/start", json=body)
        assert r.status_code == 400 and r.json["details"]["field"] == field, r.json
    assert recorder.get("/record/status").json == {"active": False, "state": "idle", "frames": 0}
    none = recorder.post("/record/stop", json={})
    assert none.status_code == 400 and none.json["code"] == "not_recording"
    assert recorder.post("/record/start", json={"tabId": "NOPE"}).status_code == 404
    assert recorder.post("/record/start", json={}).status_code == 200
    again = recorder.post("/record/start", json={})
    assert again.status_code == 409 and again.json["code"] == "recording_active"
    dropped = recorder.post("/record/stop", json={"discard": True}).json
    assert dropped["status"] == "discarded" and "path" not in dropped
    assert recorder.get("/record/status").json == {"active": False, "state": "idle", "frames": 0}
    # Stopped twice: the second is refused, while the file is being made and after.
    assert recorder.post("/record/start", json={"format": "gif"}).status_code == 200
    first = recorder.post("/record/stop", json={})
    assert first.status_code == 200 and first.json["status"] == "encoding"
    second = recorder.post("/record/stop", json={})
    assert second.status_code == 400 and second.json["code"] in ("recording_encoding", "not_recording")
    finished(recorder, first.json)
    assert recorder.post("/record/stop", json={}).status_code == 400



@pytest.mark.parametrize("fmt", ["webm", "gif"])
def test_a_recording_stopped_at_once_on_a_still_page_is_still_a_file(app_factory, site, fmt):
    # A page that does not change sends no frame: the stop draws the page's picture as the one frame.
    client = app_factory(**ON).test_client()
    assert client.post("/navigate", json={"url": site.url("form.html")}).status_code == 200
    assert client.post("/record/start", json={"format": fmt}).status_code == 200
    stop = client.post("/record/stop")
    assert stop.status_code == 200, stop.json
    done = finished(client, stop.json)
    assert done["frames"] >= 1 and Path(done["path"]).stat().st_size == done["size"] > 0
