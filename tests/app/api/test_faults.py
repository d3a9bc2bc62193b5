"""Bad input and faults: each gets a clear answer within its deadline, and other tabs keep working."""
from __future__ import annotations

import time

from support.waits import wait_until


def test_a_page_that_spins_its_main_thread_times_out_and_other_tabs_answer(client, site):
    spin = client.post("/navigate", json={"url": site.url("spin.html")}).json["tabId"]
    other = client.post("/navigate", json={"url": site.url("form.html")}).json["tabId"]
    started = time.monotonic()
    r = client.post("/action", json={"kind": "click", "selector": "#spin", "tabId": spin, "timeout": 2})
    assert r.status_code == 504 and r.json["code"] == "timeout"
    assert time.monotonic() - started < 6
    started = time.monotonic()
    r = client.get(f"/tabs/{other}/snapshot?filter=interactive&format=compact")
    assert r.status_code == 200 and "Username:" in r.data.decode()
    assert time.monotonic() - started < 2
    r = client.get(f"/tabs/{spin}/snapshot?timeout=1")
    assert r.status_code == 504
    assert client.post(f"/tabs/{spin}/close").status_code == 200  # a stuck tab can still be closed


def test_oversized_bodies_get_413(app_factory):
    client = app_factory(**{"server.maxBodyBytes": 1024}).test_client()
    r = client.post("/navigate", data="x" * 4096, content_type="application/json")
    assert r.status_code == 413 and r.json["code"] == "body_too_large"


def test_openapi_describes_every_route_from_the_request_schemas(client):
    doc = client.get("/openapi.json").json
    assert doc["openapi"].startswith("3.")
    for path in ("/navigate", "/tabs/{tabId}/navigate", "/snapshot", "/action", "/actions", "/text", "/find",
                 "/wait", "/screenshot", "/evaluate", "/health", "/shutdown"):
        assert path in doc["paths"], path
    params = {p["name"]: p for p in doc["paths"]["/snapshot"]["get"]["parameters"]}
    assert params["format"]["schema"]["enum"] == ["json", "compact", "text", "yaml"]
    action = doc["components"]["schemas"]["Action"]
    assert "kind" in action["required"] and "drag" in action["properties"]["kind"]["enum"]
    assert "security" not in doc["paths"]["/health"]["get"]


def test_shutdown_stops_the_bridge(app_factory, tmp_path):
    from app.api import create_app
    from support.config import make_config

    app = create_app(make_config(tmp_path), start_browser=False)
    bridge = app.extensions["pinchtab"]
    bridge.start(background=False)
    browser = bridge.browser
    r = app.test_client().post("/shutdown")
    assert r.json == {"status": "shutting down"}
    wait_until(lambda: not browser.alive() and not browser.process.alive(), 10)
