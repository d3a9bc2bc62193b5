"""The bridge's activity log: one line per browser call, written once the answer is out, with what
an agent did (path, tab, url, action, ref, status) and never what it typed."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import requests
from support.agent import compact, ref_of
from support.waits import wait_until


def lines(tmp_path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for p in sorted((tmp_path / ".pinchtab" / "activity").glob("events-*.jsonl"))
            for line in p.read_text().splitlines()]


def call(client: Any, method: str, path: str, **kw: Any) -> Any:
    """A request through the test client, its answer closed as a server closes it after sending."""
    r = client.open(path, method=method, **kw)
    body = r.get_json(silent=True)
    r.close()
    return r.status_code, body


def test_each_call_is_logged_with_what_the_agent_did(client, site, tmp_path):
    status, nav = call(client, "POST", "/navigate", json={"url": site.url("form.html")},
                       headers={"X-Agent-Id": "agent-7"})
    assert status == 200
    tab = nav["tabId"]
    ref = ref_of(compact(client, tabId=tab), "textbox", "Password:")
    status, _ = call(client, "POST", "/action", json={"tabId": tab, "kind": "type", "ref": ref,
                                                      "text": "hunter2-secret"}, headers={"X-Agent-Id": "agent-7"})
    assert status == 200
    assert call(client, "GET", f"/text?tabId={tab}")[0] == 200
    assert call(client, "GET", "/health")[0] == 200
    assert call(client, "POST", "/action", data="{not json", content_type="application/json")[0] == 400

    got = lines(tmp_path)
    first = got[0]
    assert (first["method"], first["path"], first["status"], first["agentId"], first["tabId"], first["url"]) == \
        ("POST", "/navigate", 200, "agent-7", tab, site.url("form.html"))
    assert first["durationMs"] > 0
    typed = next(e for e in got if e["path"] == "/action" and e["status"] == 200)
    assert (typed["action"], typed["ref"], typed["tabId"]) == ("type", ref, tab)
    assert any(e["path"] == "/text" and e["tabId"] == tab and e["method"] == "GET" for e in got)
    assert any(e["path"] == "/action" and e["status"] == 400 for e in got)
    assert not any(e["path"] == "/health" for e in got)
    assert "hunter2" not in json.dumps(got)


def test_a_real_server_logs_each_call_right_after_answering(bridge_process, site, tmp_path):
    bp = bridge_process()
    bp.wait_healthy()
    with requests.Session() as http:
        tab = http.post(bp.base + "/navigate", json={"url": site.url("form.html")}, timeout=30).json()["tabId"]
        r = http.get(bp.base + f"/snapshot?tabId={tab}&filter=interactive&format=compact", timeout=30)
        assert r.status_code == 200
    wait_until(lambda: [e["path"] for e in lines(tmp_path)] == ["/navigate", "/snapshot"], 5)
    assert {e["tabId"] for e in lines(tmp_path)} == {tab}


def test_a_real_server_reads_bodies_of_declared_length_and_chunked_ones_alike(bridge_process, site, tmp_path):
    # A declared length is read straight off the server's stream (app.web.parser.body); a chunked
    # body (no length) goes the general way. Both are read whole, and the log sees what they held.
    bp = bridge_process()
    bp.wait_healthy()
    plain, chunked = site.url("form.html") + "?how=plain", site.url("form.html") + "?how=chunked"
    with requests.Session() as http:
        r = http.post(bp.base + "/navigate", json={"url": plain}, timeout=30)
        assert r.status_code == 200 and r.json()["url"] == plain
        pieces = iter([b'{"url": ', json.dumps(chunked).encode(), b', "newTab": true}'])
        r = http.post(bp.base + "/navigate", data=pieces, headers={"Content-Type": "application/json"}, timeout=30)
        assert r.request.headers.get("Transfer-Encoding") == "chunked"
        assert r.status_code == 200 and r.json()["url"] == chunked
    wait_until(lambda: [e["url"] for e in lines(tmp_path)] == [plain, chunked], 5)


def test_reads_the_server_marks_quiet_are_not_logged_and_changes_always_are(client, site, tmp_path):
    # The server marks its own surveys and the dashboard's polling (X-PinchTab-Quiet): a dashboard
    # left open must not fill the log. A change is logged whatever it carries.
    quiet = {"X-PinchTab-Quiet": "1", "X-Agent-Id": "dashboard"}
    assert call(client, "GET", "/tabs", headers=quiet)[0] == 200
    status, nav = call(client, "POST", "/navigate", json={"url": site.url("form.html")}, headers=quiet)
    assert status == 200
    assert call(client, "GET", "/tabs", headers={"X-Agent-Id": "agent-9"})[0] == 200
    assert [(e["method"], e["path"], e["agentId"]) for e in lines(tmp_path)] == \
        [("POST", "/navigate", "dashboard"), ("GET", "/tabs", "agent-9")]
