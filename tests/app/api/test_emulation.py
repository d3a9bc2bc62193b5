"""Emulation (POST /emulation/*), the browser cache and the browser's own routes (ensure, restart) on a
real Chromium. The page reports what it sees (tests/pages/h2_probe.html); a server of this module
answers with HTTP Basic auth and echoes request headers."""
from __future__ import annotations

import base64
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.agent import nav, text
from support.config import make_config
from support.waits import wait_until

from app.api.routes.emulation_contract import (
    CredentialsResponse,
    GeolocationResponse,
    HeadersResponse,
    MediaResponse,
    OfflineResponse,
    ViewportResponse,
)

USER, PASSWORD = "agent", "s3cret"


class _AuthHandler(http.server.BaseHTTPRequestHandler):
    """``/secret`` behind Basic auth (agent / s3cret); ``/headers`` shows the request's X- headers."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path == "/secret":
            good = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
            if self.headers.get("Authorization") == good:
                return self._html(200, "<title>Vault</title><p>welcome agent</p>")
            return self._html(401, "<title>Locked</title><p>locked out</p>",
                              {"WWW-Authenticate": 'Basic realm="vault"'})
        if self.path == "/headers":
            seen = "".join(f"<p>{k.lower()}={v}</p>" for k, v in self.headers.items() if k.lower().startswith("x-"))
            return self._html(200, f"<title>Headers</title>{seen or '<p>no x-headers</p>'}")
        self._html(404, "<title>Not found</title>")

    def _html(self, status: int, body: str, headers: dict[str, str] | None = None) -> None:
        data = f"<!doctype html><html><head><meta charset=utf-8>{body}</html>".encode()
        self.send_response(status)
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture(scope="module")
def auth_site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _AuthHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="test-auth-site", daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    server.server_close()


def post(client: Any, path: str, body: dict[str, Any], schema: Any) -> dict[str, Any]:
    r = client.post(path, json=body)
    assert r.status_code == 200, r.json
    return schema().load(r.json)


def probe(client: Any, site: Any, **extra: Any) -> str:
    return nav(client, site.url("h2_probe.html"), **extra)["tabId"]


def shows(client: Any, fragment: str, tab: str | None = None) -> bool:
    return fragment in text(client, mode="raw", **({"tabId": tab} if tab else {}))


# --- emulation -----------------------------------------------------------------------------------
def test_viewport_is_what_the_page_measures_and_only_in_that_tab(client, site):
    other = probe(client, site)
    tab = probe(client, site)
    out = post(client, f"/tabs/{tab}/emulation/viewport", {"width": 412, "height": 640, "deviceScaleFactor": 2,
                                                           "mobile": True}, ViewportResponse)
    assert out == {"width": 412, "height": 640, "deviceScaleFactor": 2.0, "mobile": True, "status": "applied"}
    wait_until(lambda: shows(client, "size=412x640@2", tab), 5)
    assert not shows(client, "size=412x640", other)


def test_dark_mode_and_print_media_are_emulated_and_can_be_undone(client, site):
    tab = probe(client, site)
    assert shows(client, "scheme=light", tab)
    out = post(client, "/emulation/media", {"feature": "prefers-color-scheme", "value": "dark", "tabId": tab},
               MediaResponse)
    assert out == {"feature": "prefers-color-scheme", "value": "dark", "status": "applied"}
    wait_until(lambda: shows(client, "scheme=dark", tab), 5)
    post(client, "/emulation/media", {"feature": "media", "value": "print", "tabId": tab}, MediaResponse)
    assert shows(client, "scheme=dark", tab)  # setting the media type keeps the feature set before
    post(client, "/emulation/media", {"feature": "prefers-color-scheme", "value": "", "tabId": tab}, MediaResponse)
    wait_until(lambda: shows(client, "scheme=light", tab), 5)


def test_geolocation_is_what_the_page_is_told(client, site):
    tab = probe(client, site)
    out = post(client, "/emulation/geolocation", {"latitude": 48.8584, "longitude": 2.2945}, GeolocationResponse)
    assert out == {"latitude": 48.8584, "longitude": 2.2945, "accuracy": 1.0, "status": "applied",
                   "permissionGranted": True}
    client.post("/action", json={"kind": "click", "selector": "#locate", "tabId": tab})
    wait_until(lambda: shows(client, "place=48.8584,2.2945", tab), 5)


def test_geolocation_on_an_origin_chrome_grants_nothing_is_still_applied(client, site):
    # Plain http on a host other than localhost is not a secure origin: Chrome refuses it the
    # permission (the original's e2e fixture host is such a one). The position is set all the same.
    insecure = site.url("h2_probe.html").replace("127.0.0.1", "0.0.0.0")
    tab = nav(client, insecure)["tabId"]
    out = post(client, "/emulation/geolocation", {"latitude": 51.5074, "longitude": -0.1278, "tabId": tab},
               GeolocationResponse)
    assert out == {"latitude": 51.5074, "longitude": -0.1278, "accuracy": 1.0, "status": "applied",
                   "permissionGranted": False}
    assert client.post("/action", json={"kind": "click", "selector": "#locate", "tabId": tab}).status_code == 200
    wait_until(lambda: "place unknown" not in text(client, mode="raw", tabId=tab), 5)  # the page got its answer


def test_offline_fails_loads_and_switching_back_online_restores_them(client, site):
    tab = probe(client, site)
    out = post(client, "/emulation/offline", {"offline": True, "tabId": tab}, OfflineResponse)
    assert out == {"offline": True, "status": "offline"}
    wait_until(lambda: shows(client, "online=false", tab), 5)
    r = client.post("/navigate", json={"url": site.url("h2_probe.html?again"), "tabId": tab})
    assert r.status_code == 502 and r.json["code"] == "navigation_failed"
    assert post(client, f"/tabs/{tab}/emulation/offline", {"offline": False},
                OfflineResponse) == {"offline": False, "status": "online"}
    nav(client, site.url("h2_probe.html?again"), tabId=tab)
    assert shows(client, "online=true", tab)


def test_offline_reaches_frames_of_other_sites_too(client, site, site2):
    tab = nav(client, site.url("h2_frames.html") + f"?x=http://localhost:{site2.port}", waitFor="load")["tabId"]
    wait_until(lambda: shows(client, "cross online=true", tab), 10)
    post(client, "/emulation/offline", {"offline": True, "tabId": tab}, OfflineResponse)
    wait_until(lambda: shows(client, "cross online=false", tab) and shows(client, "same online=false", tab), 5)
    post(client, "/emulation/offline", {"offline": False, "tabId": tab}, OfflineResponse)
    wait_until(lambda: shows(client, "cross online=true", tab), 5)


def test_extra_headers_reach_the_server_until_cleared(client, auth_site):
    tab = nav(client, auth_site + "/headers")["tabId"]
    assert shows(client, "no x-headers", tab)
    out = post(client, "/emulation/headers", {"headers": {"X-Team": "blue", "X-Run": "7"}, "tabId": tab},
               HeadersResponse)
    assert out == {"headers": {"X-Team": "blue", "X-Run": "7"}, "status": "applied"}
    nav(client, auth_site + "/headers", tabId=tab)
    assert shows(client, "x-team=blue", tab) and shows(client, "x-run=7", tab)
    post(client, "/emulation/headers", {"headers": {}, "tabId": tab}, HeadersResponse)
    nav(client, auth_site + "/headers", tabId=tab)
    assert shows(client, "no x-headers", tab)


def test_credentials_answer_basic_auth_a_wrong_password_does_not_loop_and_clearing_stops_them(client, auth_site):
    tab = nav(client, auth_site + "/headers")["tabId"]
    r = client.post("/navigate", json={"url": auth_site + "/secret", "tabId": tab})
    assert r.status_code == 502 and "AUTH" in r.json["error"]  # nobody to type a password: refused

    post(client, "/emulation/credentials", {"username": USER, "password": "wrong", "tabId": tab}, CredentialsResponse)
    r = client.post("/navigate", json={"url": auth_site + "/secret", "tabId": tab})
    assert r.status_code == 502 and "AUTH" in r.json["error"]  # tried once, then given up: no loop

    out = post(client, "/emulation/credentials", {"username": USER, "password": PASSWORD, "tabId": tab},
               CredentialsResponse)
    assert out == {"username": USER, "status": "applied"}  # the password is never answered back
    assert nav(client, auth_site + "/secret", tabId=tab)["title"] == "Vault"
    assert shows(client, "welcome agent", tab)

    assert post(client, "/emulation/credentials", {"username": "", "tabId": tab},
                CredentialsResponse) == {"status": "cleared"}
    nav(client, auth_site + "/headers", tabId=tab)  # requests are no longer held for challenges
    assert shows(client, "no x-headers", tab)


@pytest.mark.parametrize("path, body, field", [
    ("/emulation/viewport", {"width": 0, "height": 600}, "width"),
    ("/emulation/viewport", {"width": 800}, "height"),
    ("/emulation/geolocation", {"latitude": 91, "longitude": 0}, "latitude"),
    ("/emulation/offline", {}, "offline"),
    ("/emulation/offline", {"offline": "maybe"}, "offline"),
    ("/emulation/headers", {"headers": {"Bad Name": "x"}}, "headers"),
    ("/emulation/headers", {"headers": {"X-A": "a\r\nX-B: b"}}, "headers"),
    ("/emulation/credentials", {"password": "x"}, "username"),
    ("/emulation/media", {"feature": "prefers-colour-scheme", "value": "dark"}, "feature"),
])
def test_bad_emulation_requests_name_the_field(client, path, body, field):
    r = client.post(path, json=body)
    assert r.status_code == 400, r.json
    assert r.json["details"]["field"].startswith(field), r.json


# --- the cache and the browser itself ------------------------------------------------------------
def test_cache_can_be_cleared(client, site):
    probe(client, site)
    assert client.get("/cache/status").json == {"canClear": True}
    assert client.post("/cache/clear").json == {"status": "cleared"}


def test_ensure_browser_answers_ready(client):
    assert client.post("/ensure-browser").json == {"status": "browser_ready"}
    assert client.post("/ensure-chrome").json == {"status": "chrome_ready"}


def test_restart_gives_a_fresh_browser_and_the_api_goes_on(tmp_path: Path, site):
    from app.api import create_app

    app = create_app(make_config(tmp_path), start_browser=False)
    state = app.extensions["pinchtab"]
    state.start(background=False)
    try:
        c = app.test_client()
        before = state.browser
        tab = probe(c, site)
        assert c.post("/browser/restart").json == {"status": "browser_restarted"}
        assert state.browser is not before and state.browser.alive() and not before.alive()
        assert c.get(f"/tabs/{tab}/snapshot").status_code == 404  # its tabs went with it
        probe(c, site)
        assert shows(c, "size=")
    finally:
        state.stop()
