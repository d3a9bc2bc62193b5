"""POST /fingerprint/rotate: pages look like another device from their next document on (a seed), or
one tab at once (the original's os, browser, screen, language and timezone)."""
from __future__ import annotations

import pytest
from support.agent import nav
from support.config import make_config

from human import stealth


def test_a_seed_names_one_device_and_none_of_it_is_the_default():
    default = stealth.persona()
    assert stealth.persona(7) == stealth.persona(7)
    for seed in range(1, 30):
        p = stealth.persona(seed)
        assert p["seed"] == seed
        assert p["hardwareConcurrency"] != default["hardwareConcurrency"]
        assert p["webglRenderer"] != default["webglRenderer"] and "OpenGL" in p["webglRenderer"]  # Linux, as the UA
    cfg = stealth.script_config("medium", {"product": "Chrome/140.0.1.2"}, persona=stealth.persona(7))
    assert (cfg["hardwareConcurrency"], cfg["seed"]) == (stealth.persona(7)["hardwareConcurrency"], 7)


@pytest.fixture
def medium_client(tmp_path):
    from app.api import create_app

    app = create_app(make_config(tmp_path, **{"instanceDefaults.stealthLevel": "medium",
                                              "security.allowEvaluate": True}), start_browser=False)
    app.extensions["pinchtab"].start(background=False)
    yield app.test_client()
    app.extensions["pinchtab"].stop()


def cores(client, tab: str) -> int:
    return client.post("/evaluate", json={"tabId": tab, "expression": "navigator.hardwareConcurrency"}).json["result"]


def test_rotation_reaches_new_documents_of_open_tabs_and_new_tabs(medium_client, site):
    client = medium_client
    tab = nav(client, site.url("counter.html"))["tabId"]
    assert cores(client, tab) == 8
    r = client.post("/fingerprint/rotate", json={"seed": 7})
    assert r.status_code == 200 and r.json["rotated"] is True and r.json["tabs"] >= 1
    want = r.json["persona"]["hardwareConcurrency"]
    assert r.json["persona"] == stealth.persona(7)
    assert cores(client, tab) == 8  # the document that is open keeps the device it was shown
    client.post(f"/reload?tabId={tab}")
    assert cores(client, tab) == want
    other = nav(client, site.url("form.html"))["tabId"]
    assert cores(client, other) == want
    r = client.post("/fingerprint/rotate", json={})
    assert r.status_code == 200 and r.json["persona"]["seed"] != 7
    assert client.post("/fingerprint/rotate", json={"seed": 0}).status_code == 400


SURFACE = ("JSON.stringify({ua: navigator.userAgent, platform: navigator.platform, language: navigator.language, "
           "w: innerWidth, h: innerHeight, sw: screen.width, zone: Intl.DateTimeFormat().resolvedOptions().timeZone, "
           "hints: navigator.userAgentData ? navigator.userAgentData.platform : null})")


def surface(client, tab: str) -> dict:
    import json

    r = client.post("/evaluate", json={"tabId": tab, "expression": SURFACE})
    assert r.status_code == 200, r.json
    return json.loads(r.json["result"])


def test_the_originals_fields_give_one_tab_a_device_at_once_kept_across_navigations(app_factory, site):
    from support.waits import wait_until

    client = app_factory(**{"security.allowEvaluate": True}).test_client()
    tab = nav(client, site.url("counter.html"))["tabId"]
    other = nav(client, site.url("table.html"))["tabId"]
    before = surface(client, other)
    assert client.get(f"/stealth/status?tabId={tab}").json["tabOverrides"] == {"fingerprintRotateActive": False}
    r = client.post("/fingerprint/rotate", json={"tabId": tab, "os": "windows", "screen": "1366x768",
                                                 "language": "de-DE", "timezone": 60, "webgl": True})
    assert r.status_code == 200 and r.json["status"] == "rotated" and r.json["tabId"] == tab, r.json
    fp = r.json["fingerprint"]
    assert "Windows NT 10.0" in fp["userAgent"] and fp["platform"] == "Win32" and fp["timezone"] == "Europe/Berlin"
    want = {"ua": fp["userAgent"], "platform": "Win32", "language": "de-DE", "w": 1366, "h": 768, "sw": 1366,
            "zone": "Europe/Berlin", "hints": "Windows"}
    assert wait_until(lambda: surface(client, tab) == want or None, 8)
    assert client.post(f"/tabs/{tab}/navigate", json={"url": site.url("form.html")}).status_code == 200
    assert surface(client, tab) == want  # the next document keeps it
    status = client.get(f"/stealth/status?tabId={tab}").json
    assert status["tabOverrides"]["fingerprintRotateActive"] is True and status["fingerprint"] == fp
    assert surface(client, other) == before  # other tabs are left as they were
    edge = client.post("/fingerprint/rotate", json={"tabId": other, "os": "random", "browser": "edge"}).json
    assert edge["fingerprint"]["os"] == "windows" and " Edg/" in edge["fingerprint"]["userAgent"]
    for body, field in (({"os": "mac", "browser": "edge"}, "browser"), ({"timezone": 7}, "timezone"),
                        ({"screen": "10x10"}, "screen"), ({"os": "beos"}, "os"), ({"language": "x y"}, "language")):
        r = client.post("/fingerprint/rotate", json={"tabId": tab, **body})
        assert r.status_code == 400 and r.json["details"]["field"] == field, (body, r.json)
