"""POST /fingerprint/rotate: pages look like another device from their next document on."""
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
