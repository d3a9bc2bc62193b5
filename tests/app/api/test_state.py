"""Saved state (POST /state/save|load|clean, GET /state/list|show, DELETE /state) on a real Chromium."""
from __future__ import annotations

import json
import os
import stat
import time
from pathlib import Path
from typing import Any

import pytest
from support.waits import wait_until

from cdp.browser import Browser


class _OnceBrowser(Browser):
    """Started once by the module; the bridge's start() finds it running and leaves it be."""

    def start(self) -> None:
        if not self.alive():
            super().start()


@pytest.fixture(scope="module")
def browser() -> Any:
    """This module's browser, for ``app_factory`` (one launch for the module, not one per app)."""
    b = _OnceBrowser()
    b.start()
    yield b
    b.stop()


@pytest.fixture
def app(app_factory: Any) -> Any:
    return app_factory(**{"security.allowStateExport": True})


@pytest.fixture
def client(app: Any) -> Any:
    return app.test_client()


def sessions(app: Any) -> Path:
    return app.extensions["pinchtab"].config.server.state_dir / "sessions"


def nav(client: Any, url: str, tab: str | None = None) -> str:
    r = client.post("/navigate", json={"url": url, **({"tabId": tab} if tab else {})})
    assert r.status_code == 200, r.json
    return r.json["tabId"]


def page_text(client: Any, tab: str) -> str:
    return client.get(f"/text?tabId={tab}&mode=raw").json["text"]


def on_tab(app: Any, tab_id: str, fn: Any) -> Any:
    tab = app.extensions["pinchtab"].browser.tab(tab_id)
    return tab.run(lambda: fn(tab), 15)


def forget_everything(app: Any, tab_id: str) -> None:
    """What a fresh browser would have: no cookies, empty storage for the page's origin."""
    on_tab(app, tab_id, lambda t: (t.call("Network.clearBrowserCookies"),
                                   t.call("Runtime.evaluate",
                                          {"expression": "localStorage.clear(); sessionStorage.clear()"})))


def save(client: Any, **body: Any) -> Any:
    r = client.post("/state/save", json=body)
    assert r.status_code == 200, r.json
    return r.json


def test_save_clear_load_and_the_page_sees_everything_again(app, client, site):
    tab = nav(client, site.url("storage.html?set=1"))
    text = page_text(client, tab)
    assert "visitor=agent-7" in text and "cart=apples,pears" in text and "step=3" in text

    out = save(client, name="shop-login", tabId=tab, metadata={"account": "agent"})
    origin = site.url("").rstrip("/")
    assert out["name"] == "shop-login" and out["encrypted"] is False
    assert out["cookies"] >= 2 and out["origins"] == [origin]
    path = Path(out["path"])
    assert path == sessions(app) / "shop-login.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(sessions(app).stat().st_mode) == 0o700
    record = json.loads(path.read_text())
    assert record["version"] == 1 and record["name"] == "shop-login" and record["metadata"] == {"account": "agent"}
    assert record["storage"][origin] == {"local": {"cart": "apples,pears"}, "session": {"step": "3"}}
    assert {c["name"]: c["value"] for c in record["cookies"]}["visitor"] == "agent-7"

    forget_everything(app, tab)
    nav(client, site.url("storage.html"), tab)
    text = page_text(client, tab)
    assert "cookies=" in text and "visitor" not in text and "cart=null" in text and "step=null" in text

    r = client.post("/state/load", json={"name": "shop-login", "tabId": tab})
    assert r.status_code == 200, r.json
    assert r.json["name"] == "shop-login" and r.json["cookiesRestored"] == out["cookies"]
    assert r.json["storageItemsRestored"] == 2 and r.json["origins"] == [origin] and r.json["skippedOrigins"] == []
    nav(client, site.url("storage.html"), tab)  # the page reads what it finds at load
    text = wait_until(lambda: (t := page_text(client, tab)) and "cart=apples" in t and t)
    assert "visitor=agent-7" in text and "theme=dark" in text and "step=3" in text


def test_load_on_another_origin_restores_cookies_and_says_which_storage_it_skipped(app, client, site):
    tab = nav(client, site.url("storage.html?set=1"))
    save(client, name="elsewhere", tabId=tab)
    forget_everything(app, tab)
    nav(client, "about:blank", tab)
    r = client.post("/state/load", json={"name": "elsewhere", "tabId": tab})
    assert r.status_code == 200, r.json
    assert r.json["cookiesRestored"] >= 2 and r.json["storageItemsRestored"] == 0
    assert r.json["skippedOrigins"] == [site.url("").rstrip("/")]
    nav(client, site.url("storage.html"), tab)
    text = page_text(client, tab)
    assert "visitor=agent-7" in text and "cart=null" in text


def test_load_by_prefix_takes_the_newest_and_unknown_names_are_404(app, client, site):
    tab = nav(client, site.url("storage.html?set=1"))
    save(client, name="acct-old", tabId=tab)
    save(client, name="acct-new", tabId=tab, metadata={"n": 2})
    old = sessions(app) / "acct-old.json"
    record = json.loads(old.read_text())
    record["savedAt"] = "2020-01-01T00:00:00.000Z"
    old.write_text(json.dumps(record))
    r = client.post("/state/load", json={"name": "acct", "tabId": tab})
    assert r.status_code == 200 and r.json["name"] == "acct-new"
    r = client.post("/state/load", json={"name": "acct-old", "tabId": tab})  # an exact name wins
    assert r.status_code == 200 and r.json["name"] == "acct-old"
    r = client.post("/state/load", json={"name": "nobody"})
    assert r.status_code == 404 and r.json["code"] == "state_not_found"
    r = client.post("/state/load", json={})
    assert r.status_code == 400 and r.json["details"]["field"] == "name"


def test_a_cookie_the_browser_rejects_does_not_stop_the_others(app, client, site):
    tab = nav(client, site.url("storage.html"))
    sessions(app).mkdir(parents=True, exist_ok=True)
    good = {"name": "kept", "value": "yes", "domain": "127.0.0.1", "path": "/", "expires": -1, "session": True}
    bad = {"name": "nowhere", "value": "x", "path": "/"}  # neither domain nor url: Chrome refuses it
    (sessions(app) / "handmade.json").write_text(json.dumps(
        {"version": 1, "name": "handmade", "savedAt": "2026-01-01T00:00:00.000Z", "origins": [],
         "cookies": [bad, good], "storage": {}, "metadata": {}, "encrypted": False}))
    r = client.post("/state/load", json={"name": "handmade", "tabId": tab})
    assert r.status_code == 200 and r.json["cookiesRestored"] == 1, r.json
    nav(client, site.url("storage.html"), tab)
    assert "kept=yes" in page_text(client, tab)


def test_list_show_delete_and_clean(app, client, site):
    tab = nav(client, site.url("storage.html?set=1"))
    save(client, name="alpha", tabId=tab)
    save(client, name="beta", tabId=tab)
    auto = save(client, tabId=tab)["name"]
    assert auto.startswith("state-")

    r = client.get("/state/list")
    assert r.status_code == 200 and r.json["count"] == 3
    assert [s["name"] for s in r.json["states"]][0] == auto  # newest first
    assert {s["name"] for s in r.json["states"]} == {"alpha", "beta", auto}
    assert all(s["size"] > 0 and s["savedAt"].endswith("Z") for s in r.json["states"])

    shown = client.get("/state/show?name=alpha").json
    assert shown["name"] == "alpha" and shown["cookies"]
    assert {c["value"] for c in shown["cookies"]} == {"***"}
    revealed = client.get("/state/show?name=alpha&reveal=true").json
    assert {c["name"]: c["value"] for c in revealed["cookies"]}["visitor"] == "agent-7"
    assert client.get("/state/show?name=zzz").json["code"] == "state_not_found"

    r = client.delete("/state?name=beta")
    assert r.status_code == 200 and r.json == {"deleted": "beta"}
    assert not (sessions(app) / "beta.json").exists()
    r = client.delete("/state?name=beta")
    assert r.status_code == 404 and r.json["code"] == "state_not_found"
    r = client.delete("/state?name=alp")  # delete never takes a prefix
    assert r.status_code == 404 and (sessions(app) / "alpha.json").exists()

    # alpha was saved "two days ago"; the auto-named one is recent.
    alpha = sessions(app) / "alpha.json"
    record = json.loads(alpha.read_text())
    record["savedAt"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(time.time() - 48 * 3600))
    alpha.write_text(json.dumps(record))
    r = client.post("/state/clean", json={"olderThanHours": 24})
    assert r.status_code == 200 and r.json["removed"] == 1 and r.json["olderThanHours"] == 24
    assert [s["name"] for s in client.get("/state/list").json["states"]] == [auto]
    r = client.post("/state/clean", json={})
    assert r.status_code == 200 and r.json["removed"] == 0 and r.json["olderThanHours"] == 24
    r = client.post("/state/clean", json={"olderThanHours": -1})
    assert r.status_code == 400 and r.json["details"]["field"] == "olderThanHours"


BAD_NAMES = ("../x", "a/b", "..", ".hidden", "/etc/passwd", "a\\b", "x" * 65, "", "a b", "nul\u0000", "caf\u00e9",
             "sessions/../../x")


def test_names_that_could_leave_the_sessions_dir_are_refused(app, client):
    outside = app.extensions["pinchtab"].config.server.state_dir / "x.json"
    outside.parent.mkdir(parents=True, exist_ok=True)
    outside.write_text("{}")
    for name in BAD_NAMES:
        for method, url, kwargs in (("post", "/state/save", {"json": {"name": name}}),
                                    ("post", "/state/load", {"json": {"name": name}}),
                                    ("get", "/state/show", {"query_string": {"name": name}}),
                                    ("delete", "/state", {"query_string": {"name": name}})):
            r = getattr(client, method)(url, **kwargs)
            assert r.status_code == 400, (url, name, r.json)
            assert r.json["code"] == "bad_request" and r.json["details"]["field"] == "name", (url, name)
    assert outside.read_text() == "{}"
    assert not sessions(app).exists() or os.listdir(sessions(app)) == []


def test_encryption_without_a_key_is_refused_with_a_reason(app, client, site):
    tab = nav(client, site.url("storage.html"))
    r = client.post("/state/save", json={"name": "secret", "encrypt": True, "tabId": tab})
    assert r.status_code == 400 and r.json["code"] == "state_key_required"
    assert "PINCHTAB_STATE_KEY" in r.json["error"] and "security.stateEncryptionKey" in r.json["error"]
    assert "encryption key" in r.json["error"]   # what the original's clients look for
    assert not sessions(app).exists() or os.listdir(sessions(app)) == []


def test_a_planted_file_cannot_ask_scrypt_for_gigabytes(app_factory):
    import time

    from app.api import state_cipher

    app = app_factory(**{"security.allowStateExport": True, "security.stateEncryptionKey": "k" * 16})
    client = app.test_client()
    sealed = state_cipher.seal({"version": 1, "name": "planted", "savedAt": "2026-11-27T00:00:00Z"}, "k" * 16)
    sealed["sealed"]["kdf"].update(n=2**20, r=32)   # 4 GiB of memory, were it obeyed
    sessions(app).mkdir(parents=True, exist_ok=True)
    (sessions(app) / "planted.json").write_text(json.dumps(sealed))
    started = time.monotonic()
    r = client.post("/state/load", json={"name": "planted"})
    assert r.status_code == 422 and r.json["code"] == "state_corrupt" and "out of range" in r.json["error"], r.json
    assert time.monotonic() - started < 2


def test_state_routes_are_off_by_default(app_factory):
    client = app_factory().test_client()
    for method, url in (("post", "/state/save"), ("post", "/state/load"), ("get", "/state/list"),
                        ("get", "/state/show?name=a"), ("delete", "/state?name=a"), ("post", "/state/clean")):
        r = getattr(client, method)(url, json={"name": "a"} if method == "post" else None)
        assert r.status_code == 403, url
        assert r.json["code"] == "state_export_disabled" and r.json["details"]["setting"] == "security.allowStateExport"
