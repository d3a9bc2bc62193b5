"""Network capture and interception against real Chromium: GET /network (filters, broken),
/network/{requestId} (bodies kept or not), POST /network/clear, the HAR and NDJSON exports (inline and
to a file),
the two event streams (bounded, ended by a shutdown or the tab closing) and /network/route
(gated; continue, abort and fulfill rules through the Fetch domain, alongside resource blocking)."""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.waits import wait_until

ASSETS = "network_assets.html"


def _open(client: Any, site: Any, page: str = ASSETS, **extra: Any) -> str:
    r = client.post("/navigate", json={"url": site.url(page), **extra})
    assert r.status_code == 200, r.json
    return r.json["tabId"]


SETTLED = ("network_data.json?n=1", "network_data.json?n=2", "network_dot.svg", "network_missing.png",
           "network_clip.webm")


def _settled(client: Any, tab_id: str) -> list[dict[str, Any]]:
    """The tab's entries once the page's own requests (its fetches, images and clip) have all ended."""
    def done() -> list[dict[str, Any]] | None:
        entries = client.get(f"/network?tabId={tab_id}").json["entries"]
        ended = [e for e in entries if any(name in e["url"] for name in SETTLED) and (e["finished"] or e["failed"])]
        return entries if len(ended) >= len(SETTLED) else None
    return wait_until(done, 10)


def _by_name(entries: list[dict[str, Any]], name: str) -> dict[str, Any]:
    return next(e for e in entries if name in e["url"])


@pytest.fixture
def app(app_factory: Any) -> Any:
    return app_factory(**{"security.allowNetworkIntercept": True, "server.retainNetworkBodies": True,
                          "server.retainNetworkBodyMaxBytes": 20})


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


# --- capture ---------------------------------------------------------------------------------------------
def test_every_request_of_a_new_tab_is_captured_and_filtered(client: Any, site: Any) -> None:
    tab_id = _open(client, site)
    entries = _settled(client, tab_id)
    page = _by_name(entries, ASSETS)
    assert (page["method"], page["status"], page["resourceType"], page["finished"]) == ("GET", 200, "Document", True)
    assert page["mimeType"] == "text/html" and page["duration"] is not None and page["endTime"]
    svg = _by_name(entries, "network_dot.svg")
    assert (svg["status"], svg["resourceType"]) == (200, "Image")
    missing = _by_name(entries, "network_missing.png")
    assert missing["status"] == 404
    keyed = _by_name(entries, "n=2")
    assert keyed["requestHeaders"]["X-Api-Key"] == "sekrit-key" and keyed["resourceType"] == "Fetch"

    r = client.get(f"/network?tabId={tab_id}&type=FETCH")
    assert r.json["count"] == 2 and r.json["items"] == r.json["entries"] and r.json["tabId"] == tab_id
    assert {e["url"].rsplit("=", 1)[1] for e in r.json["entries"]} == {"1", "2"}
    # The original's clients ask type=XHR for a page's fetch() calls too.
    assert client.get(f"/network?tabId={tab_id}&type=XHR").json["entries"] == r.json["entries"]
    clip = _by_name(entries, "network_clip.webm")
    assert (clip["status"], clip["resourceType"]) == (404, "Media")
    client_errors = client.get(f"/network?tabId={tab_id}&status=4xx").json["entries"]
    assert {missing["url"], clip["url"]} <= {e["url"] for e in client_errors}  # (and /favicon.ico, when asked)
    assert all(400 <= e["status"] <= 499 for e in client_errors)
    assert client.get(f"/network?tabId={tab_id}&status=200-299&method=get&limit=1").json["count"] == 1
    assert client.get(f"/network?tabId={tab_id}&method=POST").json["count"] == 0

    broken = client.get(f"/network?tabId={tab_id}&broken=true").json
    assert {"url": missing["url"], "resourceType": "image", "statusCode": 404} in broken["broken"]
    assert broken["count"] == len(broken["broken"]) and "entries" not in broken


@pytest.mark.parametrize("opener_control", ["#open", "#link"])  # window.open(), a target=_blank link
def test_a_popup_is_captured_from_its_first_request(client: Any, site: Any, opener_control: str) -> None:
    opener = _open(client, site, "popup_opener.html")
    r = client.post("/action", json={"kind": "click", "selector": opener_control, "tabId": opener})
    popup = r.json["result"]["openedTab"]
    page = _by_name(_settled(client, popup), ASSETS)  # the popup's own document, and both its fetches
    assert (page["resourceType"], page["status"], page["finished"]) == ("Document", 200, True)
    assert not any(ASSETS in e["url"] for e in client.get(f"/network?tabId={opener}").json["entries"])


def test_bad_filters_are_refused(client: Any, site: Any) -> None:
    tab_id = _open(client, site, "network_title.html")
    for query in ("status=abc", "status=4x", "limit=-1", "bufferSize=0", "broken=maybe"):
        r = client.get(f"/network?tabId={tab_id}&{query}")
        assert r.status_code == 400, (query, r.json)
    assert client.get("/network?tabId=NOPE").status_code == 404


def test_a_request_in_detail_with_its_body_cut_at_the_cap(client: Any, site: Any) -> None:
    tab_id = _open(client, site)
    data = _by_name(_settled(client, tab_id), "n=1")
    r = client.get(f"/network/{data['requestId']}?tabId={tab_id}")
    assert r.status_code == 200 and r.json["entry"] == data and "responseBody" not in r.json

    r = client.get(f"/tabs/{tab_id}/network/{data['requestId']}?body=true")
    assert r.json["bodyRetained"] is True and r.json["bodyTruncated"] is True and r.json["bodySource"] == "retained"
    assert r.json["responseBody"] == '{"msg": "from the server", "items": [1, 2, 3]}'[:20]
    assert "retainNetworkBodyMaxBytes" in r.json["bodyNote"]

    r = client.get(f"/network/no-such-request?tabId={tab_id}")
    assert r.status_code == 404 and r.json["code"] == "request_not_found"


def test_the_originals_retained_body_query_finds_a_fetch_and_its_kept_body(app_factory: Any, site: Any) -> None:
    client = app_factory(**{"server.retainNetworkBodies": True}).test_client()
    tab_id = _open(client, site)
    _settled(client, tab_id)
    items = client.get(f"/network?tabId={tab_id}&type=XHR&limit=20").json["items"]
    data = _by_name(items, "n=1")
    r = client.get(f"/network/{data['requestId']}?tabId={tab_id}&body=true&bodyMode=retained-preferred"
                   "&timeoutMs=2000")
    assert r.status_code == 200, r.json
    assert r.json["bodyRetained"] is True and r.json["bodySource"] == "retained" and not r.json.get("bodyPending")
    assert "from the server" in r.json["responseBody"] and r.json["bodyTruncated"] is False
    for query in ("bodyMode=sideways", "timeoutMs=-1", "timeoutMs=60000"):
        assert client.get(f"/network/{data['requestId']}?tabId={tab_id}&body=true&{query}").status_code == 400, query


def test_bodies_are_not_kept_unless_the_config_says_so(app_factory: Any, site: Any) -> None:
    client = app_factory().test_client()
    tab_id = _open(client, site)
    data = _by_name(_settled(client, tab_id), "n=1")
    r = client.get(f"/network/{data['requestId']}?tabId={tab_id}&body=true")
    assert r.json["bodyRetained"] is False and "responseBody" not in r.json
    assert "server.retainNetworkBodies" in r.json["bodyNote"]


def test_clear_one_tab_or_all(client: Any, site: Any) -> None:
    first, second = _open(client, site), _open(client, site, "network_title.html")
    _settled(client, first)
    assert client.post(f"/network/clear?tabId={first}").json == {"cleared": True, "tabId": first}
    assert client.get(f"/network?tabId={first}").json["count"] == 0
    assert client.get(f"/network?tabId={second}").json["count"] >= 1
    assert client.post("/network/clear").json == {"cleared": True, "all": True}
    assert client.get(f"/network?tabId={second}").json["count"] == 0


def test_capture_keeps_only_the_newest_entries_of_the_ring(app_factory: Any, site: Any) -> None:
    client = app_factory(**{"server.networkBufferSize": 3}).test_client()
    tab_id = _open(client, site)
    wait_until(lambda: any("n=2" in e["url"] and e["finished"]
                           for e in client.get(f"/network?tabId={tab_id}").json["entries"]), 10)
    urls = [e["url"] for e in client.get(f"/network?tabId={tab_id}").json["entries"]]
    assert len(urls) == 3 and not any(ASSETS in u for u in urls)  # the document was pushed out first


# --- HAR export ---------------------------------------------------------------------------------------------
def test_har_export_redacts_credentials_unless_asked(client: Any, site: Any) -> None:
    tab_id = _open(client, site)
    _settled(client, tab_id)
    doc = client.get(f"/network/export?tabId={tab_id}&body=true").json["log"]
    assert doc["version"] == "1.2" and doc["creator"]["name"] == "Pinchtab"
    keyed = next(e for e in doc["entries"] if e["request"]["url"].endswith("n=2"))
    headers = {h["name"]: h["value"] for h in keyed["request"]["headers"]}
    assert headers["X-Api-Key"] == "[redacted]"
    assert keyed["request"]["queryString"] == [{"name": "n", "value": "2"}]
    assert keyed["response"]["status"] == 200 and keyed["response"]["content"]["text"]  # the kept (cut) body
    raw = client.get(f"/network/export?tabId={tab_id}&redact=false&filter=n=2").json["log"]["entries"]
    assert [{h["name"]: h["value"] for h in e["request"]["headers"]}["X-Api-Key"] for e in raw] == ["sekrit-key"]


def test_har_export_to_a_file_in_the_state_dir(app: Any, client: Any, site: Any) -> None:
    tab_id = _open(client, site)
    _settled(client, tab_id)
    r = client.get(f"/network/export?tabId={tab_id}&output=file&path=exports/run.har")
    assert r.status_code == 200 and r.json["format"] == "har" and r.json["entries"] >= 5
    saved = app.extensions["pinchtab.config"].server.state_dir / "outputs" / "exports" / "run.har"
    assert len(json.loads(saved.read_text())["log"]["entries"]) == r.json["entries"]
    for bad in ("../escape.har", "exports/", "x" * 300 + ".har"):
        r = client.get(f"/network/export?tabId={tab_id}&output=file&path={bad}")
        assert r.status_code == 400 and r.json["code"] == "invalid_output_path", bad


def test_ndjson_export_is_one_har_entry_a_line_inline_and_to_a_file(app: Any, client: Any, site: Any) -> None:
    tab_id = _open(client, site)
    _settled(client, tab_id)
    har_entries = client.get(f"/network/export?tabId={tab_id}").json["log"]["entries"]
    r = client.get(f"/network/export?tabId={tab_id}&format=ndjson")
    assert r.status_code == 200 and r.content_type == "application/x-ndjson"
    lines = r.get_data(as_text=True).splitlines()
    assert [json.loads(line)["request"]["url"] for line in lines] == [e["request"]["url"] for e in har_entries]
    r = client.get(f"/network/export?tabId={tab_id}&format=NDJSON&output=file&path=run.ndjson")
    assert r.status_code == 200 and r.json["format"] == "ndjson" and r.json["entries"] == len(lines)
    saved = app.extensions["pinchtab.config"].server.state_dir / "outputs" / "run.ndjson"
    assert [json.loads(line)["request"]["method"] for line in saved.read_text().splitlines()] == ["GET"] * len(lines)
    # Without a path the file is named for the format.
    auto = client.get(f"/network/export?tabId={tab_id}&format=ndjson&output=file").json["path"]
    assert auto.endswith(".ndjson") and "/exports/network-" in auto


def test_an_unknown_export_format_is_refused_with_the_list_of_formats(client: Any, site: Any) -> None:
    tab_id = _open(client, site)
    for path in ("/network/export", "/network/export/stream"):
        r = client.get(f"{path}?tabId={tab_id}&format=xml&path=x.xml")
        assert r.status_code == 400, (path, r.json)
        assert r.json["code"] == "unknown_format" and r.json["available"] == ["har", "ndjson"]
        assert r.json["details"] == {"field": "format"}


# --- streams ------------------------------------------------------------------------------------------------
def _events(resp: Any) -> Iterator[tuple[str, dict[str, Any]]]:
    """The (event, data) pairs of an event stream read from a Flask test response, as they come."""
    for chunk in resp.response:
        text = chunk.decode() if isinstance(chunk, bytes) else chunk
        if text.startswith("event: "):
            head, data = text.strip().split("\n", 1)
            yield head[len("event: "):], json.loads(data[len("data: "):])


def _shutdown(app: Any) -> None:
    for hook in app.extensions["pinchtab.on_shutdown"]:
        hook()


def test_the_stream_sends_new_requests_and_ends_on_shutdown(app: Any, client: Any, site: Any) -> None:
    tab_id = _open(client, site, "network_title.html")
    resp = client.get(f"/network/stream?tabId={tab_id}&type=image", buffered=False)
    assert resp.status_code == 200 and resp.mimetype == "text/event-stream"
    events = _events(resp)
    assert client.post("/navigate", json={"url": site.url(ASSETS), "tabId": tab_id}).status_code == 200
    seen = [next(events) for _ in range(2)]
    assert {(kind, e["url"].rsplit("/", 1)[1]) for kind, e in seen} == {("network", "network_dot.svg"),
                                                                      ("network", "network_missing.png")}
    started = time.monotonic()
    _shutdown(app)
    assert next(events) == ("end", {"reason": "shutdown"})
    assert time.monotonic() - started < 2
    resp.close()


def test_a_stream_ends_when_its_tab_closes(client: Any, site: Any) -> None:
    tab_id = _open(client, site, "network_title.html")
    _open(client, site, "network_title.html")  # not the last tab: it may close
    resp = client.get(f"/network/stream?tabId={tab_id}", buffered=False)
    events = _events(resp)
    assert client.post("/close", json={"tabId": tab_id}).status_code == 200
    assert next(events) == ("end", {"reason": "tab_closed"})
    resp.close()


def test_streams_are_capped_and_give_their_place_back(app_factory: Any, site: Any) -> None:
    client = app_factory(**{"debug.maxConnections": 1}).test_client()
    tab_id = _open(client, site, "network_title.html")
    first = client.get(f"/network/stream?tabId={tab_id}", buffered=False)
    r = client.get(f"/network/stream?tabId={tab_id}")
    assert r.status_code == 503 and r.json["code"] == "too_many_connections" and r.headers["Retry-After"]
    first.close()
    again = client.get(f"/network/stream?tabId={tab_id}", buffered=False)
    assert again.status_code == 200
    again.close()


@pytest.mark.parametrize("fmt", ["har", "ndjson"])
def test_a_streamed_export_writes_its_file_when_it_ends(app: Any, client: Any, site: Any, fmt: str) -> None:
    tab_id = _open(client, site, "network_title.html")
    assert client.get(f"/network/export/stream?tabId={tab_id}").status_code == 400  # path required
    resp = client.get(f"/network/export/stream?tabId={tab_id}&path=exports/live.{fmt}&filter=network_data"
                      f"&format={fmt}", buffered=False)
    events = _events(resp)
    assert client.post("/navigate", json={"url": site.url(ASSETS), "tabId": tab_id}).status_code == 200
    assert [next(events)[0] for _ in range(2)] == ["export", "export"]
    _shutdown(app)
    kind, done = next(events)
    assert (kind, done["entries"], done["reason"]) == ("done", 2, "shutdown")
    text = (app.extensions["pinchtab.config"].server.state_dir / "outputs" / "exports" / f"live.{fmt}").read_text()
    entries = json.loads(text)["log"]["entries"] if fmt == "har" else [json.loads(x) for x in text.splitlines()]
    assert sorted(e["request"]["url"][-3:] for e in entries) == ["n=1", "n=2"]
    resp.close()


# --- interception -----------------------------------------------------------------------------------------
def test_routes_are_off_by_default(app_factory: Any, site: Any) -> None:
    client = app_factory().test_client()
    tab_id = _open(client, site, "network_title.html")
    for method in ("get", "post", "delete"):
        r = getattr(client, method)(f"/tabs/{tab_id}/network/route", json={"pattern": "*.png", "action": "abort"})
        assert r.status_code == 403 and r.json["code"] == "network_intercept_disabled", method
        assert r.json["details"]["setting"] == "security.allowNetworkIntercept"


def _text(client: Any, tab_id: str) -> str:
    return client.get(f"/text?tabId={tab_id}&mode=raw").json["text"]


def test_fulfil_and_abort_rules_change_what_the_page_gets(client: Any, site: Any) -> None:
    tab_id = _open(client, site, "network_title.html")
    r = client.post(f"/tabs/{tab_id}/network/route", json={
        "pattern": "*network_data.json?n=1", "action": "fulfill", "body": '{"msg": "mocked"}', "status": 201})
    assert r.status_code == 200 and r.json["ok"] is True
    assert r.json["rules"] == [{"pattern": "*network_data.json?n=1", "action": "fulfill", "body": '{"msg": "mocked"}',
                                "contentType": "application/json", "status": 201}]
    client.post(f"/network/route?tabId={tab_id}", json={"pattern": "*.svg", "action": "abort"})
    client.post(f"/network/route?tabId={tab_id}", json={"pattern": "*.svg", "action": "abort", "resourceType": "Image"})
    assert len(client.get(f"/network/route?tabId={tab_id}").json["rules"]) == 2  # same pattern: replaced

    assert client.post("/navigate", json={"url": site.url(ASSETS), "tabId": tab_id}).status_code == 200
    wait_until(lambda: "data: mocked" in _text(client, tab_id), 10)
    entries = _settled(client, tab_id)
    assert _by_name(entries, "n=1")["status"] == 201
    svg = _by_name(entries, "network_dot.svg")
    assert svg["failed"] and "BLOCKED_BY_CLIENT" in svg["error"]

    r = client.delete(f"/tabs/{tab_id}/network/route?pattern=*.svg")
    assert (r.json["removed"], len(r.json["rules"])) == (1, 1)
    # The original's clients send the pattern (and tab) in a JSON body.
    client.post(f"/network/route?tabId={tab_id}", json={"pattern": "*.css", "action": "abort"})
    r = client.delete("/network/route", json={"tabId": tab_id, "pattern": "*.css"})
    assert r.status_code == 200 and (r.json["removed"], len(r.json["rules"])) == (1, 1), r.json
    assert client.delete(f"/tabs/{tab_id}/network/route").json["rules"] == []
    r = client.delete(f"/tabs/{tab_id}/network/route")
    assert r.status_code == 404 and r.json["code"] == "not_routed"
    client.post(f"/network/clear?tabId={tab_id}")
    client.post("/reload", query_string={"tabId": tab_id})
    wait_until(lambda: "data: from the server" in _text(client, tab_id), 10)  # interception is off again


def test_a_continue_rule_sets_request_headers(client: Any, site: Any) -> None:
    tab_id = _open(client, site, "network_title.html")
    r = client.post(f"/tabs/{tab_id}/network/route", json={
        "pattern": "/headers", "action": "continue", "headers": {"X-Routed": "yes", "User-Agent": "routed-agent"}})
    assert r.json["rules"][0]["headers"] == {"X-Routed": "yes", "User-Agent": "routed-agent"}
    assert client.post("/navigate", json={"url": site.url("headers"), "tabId": tab_id}).status_code == 200
    text = _text(client, tab_id)
    assert "X-Routed: yes" in text and "User-Agent: routed-agent" in text and "Host: 127.0.0.1" in text


BAD_RULES = [
    ({"action": "abort"}, "pattern"),
    ({"pattern": "x", "action": "teleport"}, "action"),
    ({"pattern": "x", "action": "fulfill", "status": 999}, "status"),
    ({"pattern": "x", "action": "fulfill", "status": 50}, "status"),
    ({"pattern": "x", "action": "fulfill", "contentType": "text/html"}, "contentType"),
    ({"pattern": "x", "action": "fulfill", "contentType": "application/json\r\nX-Evil: 1"}, "contentType"),
    ({"pattern": "x", "action": "abort", "method": "FOOBAR"}, "method"),
    ({"pattern": "x", "action": "abort", "resourceType": "java"}, "resourceType"),
    ({"pattern": "x", "action": "continue", "headers": {"X-A": "1\r\nX-B: 2"}}, "headers"),
    ({"pattern": "x", "action": "fulfill", "body": "x" * (1024 * 1024 + 1)}, "body"),
]


def test_bad_rules_are_refused_naming_the_field(client: Any, site: Any) -> None:
    tab_id = _open(client, site, "network_title.html")
    for rule, field in BAD_RULES:
        r = client.post(f"/tabs/{tab_id}/network/route", json=rule)
        assert r.status_code == 400 and r.json["details"]["field"] == field, (rule, r.json)
    assert client.get(f"/tabs/{tab_id}/network/route").json["rules"] == []


def test_routes_and_resource_blocking_share_the_tab(client: Any, site: Any) -> None:
    tab_id = _open(client, site, "network_title.html")
    client.post(f"/tabs/{tab_id}/network/route", json={
        "pattern": "*network_data.json?n=1", "action": "fulfill", "body": '{"msg": "still mocked"}'})
    r = client.post("/navigate", json={"url": site.url(ASSETS), "tabId": tab_id, "blockImages": True})
    assert r.status_code == 200
    wait_until(lambda: "data: still mocked" in _text(client, tab_id), 10)
    svg = _by_name(_settled(client, tab_id), "network_dot.svg")
    assert svg["failed"] and "BLOCKED_BY_CLIENT" in svg["error"]
