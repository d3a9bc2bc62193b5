"""The screencast through ``pinchtab server``: the WebSocket relayed to the instance that has the tab,
recordings forwarded like every browser route. The shared server (conftest) allows screencasts."""
from __future__ import annotations

import base64
import json
import time
from typing import Any

import pytest
import websocket
from support.servers import ServerProcess
from support.waits import wait_until

pytestmark = pytest.mark.e2e


def frames(ws: websocket.WebSocket, count: int, timeout_s: float = 10.0) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout_s
    while len(out) < count:
        ws.settimeout(max(0.05, deadline - time.monotonic()))
        msg = json.loads(ws.recv())
        if msg["type"] == "frame":
            out.append(msg)
    return out


def test_server_mode_relays_the_cast_and_forwards_recordings(shared_server: ServerProcess, shared_token: str,
                                                             site: Any) -> None:
    sp = shared_server
    r = sp.post("/navigate", json={"url": site.url("capture_ticker.html")})
    assert r.status_code == 200, r.text
    tab_id = r.json()["tabId"]
    header = [f"Authorization: Bearer {shared_token}"]
    base = sp.base.replace("http://", "ws://")
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:  # the instance's answer, as it gave it
        websocket.create_connection(f"{base}/screencast?tabId={tab_id}&fps=99", timeout=10, header=header)
    assert refused.value.status_code == 400
    with pytest.raises(websocket.WebSocketBadStatusException) as unknown:
        websocket.create_connection(f"{base}/screencast?tabId=NOPE", timeout=10, header=header)
    assert unknown.value.status_code == 404
    ws = websocket.create_connection(f"{base}/screencast?tabId={tab_id}&fps=20", timeout=10, header=header,
                                     skip_utf8_validation=True)
    assert json.loads(ws.recv())["tabId"] == tab_id
    assert base64.b64decode(frames(ws, 2)[1]["data"])[:3] == b"\xff\xd8\xff"
    ws.close()
    r = sp.post("/record/start", json={"tabId": tab_id, "format": "gif", "scale": 0.25})
    assert r.status_code == 200, r.text
    wait_until(lambda: sp.get("/record/status").json()["frames"] >= 2, 10)
    stopped = sp.post("/record/stop").json()
    assert stopped["status"] == "encoding" and stopped["frames"] >= 2 and stopped["path"].endswith(".gif")
    # The file is made after the stop answers: the instance's status says when, through the proxy too.
    saved = wait_until(lambda: (s := sp.get("/record/status").json())["state"] == "finished" and s, 30)
    assert saved["path"] == stopped["path"] and saved["size"] > 0
    sp.post("/close", json={"tabId": tab_id})


def test_the_originals_instance_path_casts_a_still_page_without_pause(shared_server: ServerProcess,
                                                                     shared_token: str, site: Any) -> None:
    sp = shared_server
    r = sp.post("/navigate", json={"url": site.url("links.html")})
    assert r.status_code == 200, r.text
    tab_id = r.json()["tabId"]
    owner = next(t["instanceId"] for t in sp.get("/instances/tabs?fresh=1").json() if t["id"] == tab_id)
    base = sp.base.replace("http://", "ws://")
    ws = websocket.create_connection(f"{base}/instances/{owner}/proxy/screencast?tabId={tab_id}&fps=5&quality=20"
                                     "&maxWidth=320", timeout=10, header=[f"Authorization: Bearer {shared_token}"],
                                     skip_utf8_validation=True)
    try:
        assert json.loads(ws.recv())["tabId"] == tab_id
        # A still page draws once; its frame keeps coming, so a viewer sees the cast is alive.
        got = frames(ws, 3)
        assert any(f.get("repeat") for f in got) and len({f["seq"] for f in got}) < 3
    finally:
        ws.close()
        sp.post("/close", json={"tabId": tab_id})
