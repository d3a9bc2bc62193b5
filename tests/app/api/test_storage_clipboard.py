"""Web storage (GET|POST|DELETE /storage), the live state (GET /state), encrypted saved state and the
shared clipboard, on a real Chromium."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.agent import nav, text

from app.api.routes.clipboard_contract import ClipboardTextResponse
from app.api.routes.state_contract import LiveStateResponse, StateRecordResponse
from app.api.routes.storage_contract import StorageChangedResponse, StorageResponse

KEY = "correct horse battery staple"


@pytest.fixture
def app(app_factory: Any) -> Any:
    return app_factory(**{"security.allowStateExport": True, "security.allowClipboard": True})


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


def storage_page(client: Any, site: Any, query: str = "?set=1") -> str:
    return nav(client, site.url("storage.html" + query))["tabId"]


# --- /storage ------------------------------------------------------------------------------------
def test_set_read_and_remove_items_the_page_then_sees(client, site):
    tab = storage_page(client, site)
    r = client.post("/storage", json={"key": "cart", "value": "plums", "type": "local"})
    assert r.status_code == 200, r.json
    assert StorageChangedResponse().load(r.json) == {"success": True, "origin": site.url("")[:-1]}
    nav(client, site.url("storage.html"), tabId=tab)  # the page as it loads now, without ?set=1
    assert "cart=plums" in text(client, mode="raw")

    got = StorageResponse().load(client.get("/storage").json)
    assert {"key": "cart", "value": "plums"} in got["local"] and got["session"] == [{"key": "step", "value": "3"}]
    only = client.get(f"/tabs/{tab}/storage", query_string={"type": "local", "key": "cart"}).json
    assert only == {"local": [{"key": "cart", "value": "plums"}], "session": [], "origin": got["origin"]}

    r = client.delete("/storage", json={"type": "local", "key": "cart"})
    assert r.json == {"success": True, "action": "removeItem", "key": "cart", "origin": got["origin"]}
    assert client.get("/storage?type=local&key=cart").json["local"] == []
    r = client.delete("/storage")  # no body: both storages cleared
    assert r.json == {"success": True, "action": "clear", "type": "all", "origin": got["origin"]}
    assert client.get("/storage").json == {"local": [], "session": [], "origin": got["origin"]}
    client.post(f"/tabs/{tab}/reload")
    assert "cart=null" in text(client, mode="raw") and "step=null" in text(client, mode="raw")


@pytest.mark.parametrize("method, body, field", [
    ("post", {"value": "x", "type": "local"}, "key"),
    ("post", {"key": "k", "value": "x"}, "type"),
    ("post", {"key": "k", "type": "disk"}, "type"),
    ("delete", {"type": "all", "key": "k"}, "key"),
    ("delete", {"type": "cookies"}, "type"),
])
def test_bad_storage_requests_name_the_field(client, site, method, body, field):
    storage_page(client, site)
    r = getattr(client, method)("/storage", json=body)
    assert r.status_code == 400 and r.json["details"]["field"] == field, r.json


def test_a_page_without_an_origin_has_no_storage(client):
    tab = client.post("/tab", json={"action": "new"}).json["tabId"]
    r = client.get(f"/tabs/{tab}/storage")
    assert r.status_code == 409 and r.json["code"] == "no_origin"


def test_storage_and_live_state_are_off_by_default(app_factory, site):
    c = app_factory().test_client()
    nav(c, site.url("storage.html"))
    for method, url in (("get", "/storage"), ("post", "/storage"), ("delete", "/storage"), ("get", "/state")):
        r = getattr(c, method)(url, json={"key": "a", "type": "local"} if method == "post" else None)
        assert r.status_code == 403, url
        assert r.json["code"] == "state_export_disabled" and r.json["details"]["setting"] == "security.allowStateExport"


# --- GET /state ----------------------------------------------------------------------------------
def test_live_state_shows_cookies_storage_and_the_page(client, site):
    tab = storage_page(client, site)
    out = LiveStateResponse().load(client.get("/state", query_string={"tabId": tab}).json)
    origin = site.url("")[:-1]
    assert out["tabId"] == tab and out["title"] == "Storage" and out["origins"] == [origin]
    assert {"name": "visitor", "value": "agent-7"}.items() <= next(c for c in out["cookies"]
                                                                    if c["name"] == "visitor").items()
    assert out["storage"][origin] == {"local": {"cart": "apples,pears"}, "session": {"step": "3"}}
    assert out["metadata"]["origin"] == origin and "Chrome" in out["metadata"]["userAgent"]


# --- encrypted saved state -----------------------------------------------------------------------
def sessions(app: Any) -> Path:
    return app.extensions["pinchtab"].config.server.state_dir / "sessions"


def test_encrypted_state_is_unreadable_on_disk_and_loads_back_with_the_key(app_factory, site):
    app = app_factory(**{"security.allowStateExport": True, "security.stateEncryptionKey": KEY})
    c = app.test_client()
    tab = storage_page(c, site)
    r = c.post("/state/save", json={"name": "vault", "encrypt": True, "metadata": {"who": "agent"}})
    assert r.status_code == 200 and r.json["encrypted"] is True and r.json["cookies"] >= 2
    raw = (sessions(app) / "vault.json").read_text()
    assert "agent-7" not in raw and "apples" not in raw and "agent" not in raw.replace('"vault"', "")
    assert (sessions(app) / "vault.json").stat().st_mode & 0o777 == 0o600
    assert [s["name"] for s in c.get("/state/list").json["states"]] == ["vault"]

    shown = StateRecordResponse().load(c.get("/state/show?name=vault&reveal=true").json)
    assert shown["encrypted"] is True and shown["metadata"] == {"who": "agent"}
    assert any(ck["value"] == "agent-7" for ck in shown["cookies"])

    assert c.delete("/storage", json={"tabId": tab}).status_code == 200
    nav(c, site.url("storage.html"), tabId=tab)
    assert "cart=null" in text(c, mode="raw")
    r = c.post("/state/load", json={"name": "vau", "tabId": tab})  # a prefix, as for plain states
    assert r.status_code == 200 and r.json["storageItemsRestored"] == 2, r.json
    nav(c, site.url("storage.html"), tabId=tab)
    assert "cart=apples,pears" in text(c, mode="raw") and "step=3" in text(c, mode="raw")


def test_encrypt_without_a_key_is_refused_and_a_wrong_key_does_not_open_it(app_factory, site):
    plain = app_factory(**{"security.allowStateExport": True}).test_client()
    storage_page(plain, site)
    r = plain.post("/state/save", json={"name": "secret", "encrypt": True})
    assert r.status_code == 400 and r.json["code"] == "state_key_required"
    assert "PINCHTAB_STATE_KEY" in r.json["error"]

    good = app_factory(**{"security.allowStateExport": True, "security.stateEncryptionKey": KEY})
    gc = good.test_client()
    storage_page(gc, site)
    assert gc.post("/state/save", json={"name": "secret", "encrypt": True}).status_code == 200
    for other in (plain, app_factory(**{"security.allowStateExport": True,
                                        "security.stateEncryptionKey": "another key"}).test_client()):
        for r in (other.post("/state/load", json={"name": "secret"}), other.get("/state/show?name=secret")):
            assert r.status_code == 400, r.json
            assert r.json["code"] in ("state_key_required", "bad_state_key")

    path = sessions(good) / "secret.json"
    record = json.loads(path.read_text())
    record["savedAt"] = "2000-01-01T00:00:00.000Z"  # an edited clear field breaks the seal too
    path.write_text(json.dumps(record))
    r = gc.post("/state/load", json={"name": "secret"})
    assert r.status_code == 400 and r.json["code"] == "bad_state_key"


# --- the shared clipboard ------------------------------------------------------------------------
def test_clipboard_is_one_text_shared_by_every_tab(client, site):
    assert client.get("/clipboard/read").json == {"text": ""}
    assert client.post("/clipboard/write", json={"text": "order #42 ✓"}).json == {"success": True}
    assert ClipboardTextResponse().load(client.get("/clipboard/paste").json) == {"text": "order #42 ✓"}
    assert client.post("/clipboard/copy", json={"text": ""}).json == {"success": True}
    assert client.get("/clipboard/read").json == {"text": ""}
    big = "x" * (64 * 1024)
    assert client.post("/clipboard/write", json={"text": big}).status_code == 200
    assert client.get("/clipboard/read").json["text"] == big


@pytest.mark.parametrize("method, url, body", [
    ("get", "/clipboard/read?tabId=ABC", None),
    ("get", "/clipboard/paste?tabId=ABC", None),
    ("post", "/clipboard/write?tabId=ABC", {"text": "a"}),
    ("post", "/clipboard/write", {}),
    ("post", "/clipboard/copy", {"text": 5}),
    ("post", "/clipboard/write", {"text": "a", "tabId": "ABC"}),
    ("post", "/clipboard/write", {"text": "x" * (64 * 1024 + 1)}),
    ("post", "/clipboard/write", {"text": "é" * (32 * 1024 + 1)}),  # 64 KiB + 2 bytes in UTF-8
])
def test_bad_clipboard_requests_are_refused_and_change_nothing(client, method, url, body):
    client.post("/clipboard/write", json={"text": "kept"})
    r = getattr(client, method)(url, json=body)
    assert r.status_code == 400, r.json
    assert client.get("/clipboard/read").json == {"text": "kept"}


def test_clipboard_is_off_by_default(app_factory):
    c = app_factory().test_client()
    for method, url in (("get", "/clipboard/read"), ("get", "/clipboard/paste"), ("post", "/clipboard/write"),
                        ("post", "/clipboard/copy")):
        r = getattr(c, method)(url, json={"text": "a"} if method == "post" else None)
        assert r.status_code == 403 and r.json["code"] == "clipboard_disabled", url
        assert set(r.json["details"]) == {"setting", "hint", "remedy"}


def test_a_sealed_file_that_asks_for_too_costly_a_key_derivation_is_refused_unopened():
    from app.api import state_cipher

    sealed = state_cipher.seal({"version": 1, "name": "a", "savedAt": "now", "cookies": []}, KEY)
    assert state_cipher.unseal(sealed, KEY)["cookies"] == []
    sealed["sealed"]["kdf"]["n"] = 2**30  # would take gigabytes to derive: refused before trying
    with pytest.raises(state_cipher.BadEnvelope):
        state_cipher.unseal(sealed, KEY)
