"""The dashboard's login: the token typed once in a real browser, then the original's
``pinchtab_auth_token`` cookie (HttpOnly, SameSite=Strict); the routes it opens; CSRF rules for
cookie-borne changes; logout; elevation (the config's, with ``sessions.dashboard.requireElevation``
on and off); the login rate limit; and the dashboard's layout at 1280 px. Real Chromium against a
real ``pinchtab server``; the elevation clock is the one fake (in-process, pure logic)."""
from __future__ import annotations

import base64
import secrets
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from flask import Flask
from support.browser_page import Page
from support.config import make_config
from support.servers import ServerProcess
from support.waits import wait_until

from app.access import auth
from app.orchestrator.login import FAILURES_PER_WINDOW, LoginStore

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(shared_server: ServerProcess) -> ServerProcess:
    return shared_server


def login(server: ServerProcess, token: str, **headers: str) -> requests.Response:
    return requests.post(server.base + "/api/auth/login", json={"token": token}, headers=headers, timeout=10)


def test_the_token_is_typed_once_then_a_cookie_keeps_the_dashboard_logged_in(server, browser, shared_token):
    page = Page(browser)
    try:
        page.go(server.base + "/login")
        wait_until(lambda: page.dom("!document.getElementById('token-panel').hidden"), 10)
        page.fill("#token-input", "not-the-token")
        page.click("#token-save")
        wait_until(lambda: page.dom("document.getElementById('token-error').textContent") == "That token was refused.",
                   10)
        page.fill("#token-input", shared_token)
        page.click("#token-save")
        wait_until(lambda: page.dom("document.querySelectorAll('#instances [data-instance-id]').length") >= 1, 15)
        assert page.dom("location.pathname") == "/dashboard"
        wait_until(lambda: page.dom("document.getElementById('events-state').textContent") == "live", 10)
        # The browser holds a cookie the page's scripts cannot read, and no token anywhere.
        cookie = next(c for c in page.cookies() if c["name"] == auth.COOKIE)
        assert cookie["httpOnly"] is True and cookie["sameSite"] == "Strict" and cookie["value"] != shared_token
        assert auth.COOKIE not in page.dom("document.cookie")
        assert shared_token not in page.dom("JSON.stringify(Object.assign({}, localStorage, sessionStorage))")
        # A reload stays logged in: nothing is typed again.
        page.go(server.base + "/dashboard")
        wait_until(lambda: page.dom("document.querySelectorAll('#instances [data-instance-id]').length") >= 1, 15)
        assert page.dom("document.getElementById('token-panel').hidden") is True
        # Agent sessions are made here (the token shown once) and revoked here; making one asks for
        # the token again (logging in does not elevate), then retries on its own.
        agent = "dash-" + secrets.token_hex(3)
        page.fill("#session-agent", agent)
        page.click("#session-create")
        wait_until(lambda: page.dom("!document.getElementById('elevate-form').hidden"), 10)
        page.fill("#elevate-input", shared_token)
        page.click("#elevate-save")
        wait_until(lambda: page.dom("!document.getElementById('session-token').hidden"), 10)
        made = page.dom("document.getElementById('session-token-value').textContent")
        as_agent = {"Authorization": f"Session {made}"}
        assert made.startswith("pts_") and requests.get(server.base + "/tabs", headers=as_agent).status_code == 200
        revoke = f"#agent-sessions tr[data-agent='{agent}'] button"
        wait_until(lambda: page.dom(f'!!document.querySelector("{revoke}")'), 10)
        page.click(revoke)
        wait_until(lambda: not page.dom(f'!!document.querySelector("{revoke}")'), 10)
        assert requests.get(server.base + "/tabs", headers=as_agent).status_code == 401
        # Log out: the cookie stops working, and the page asks for the token again.
        page.click("#token-change")
        wait_until(lambda: page.dom("!document.getElementById('token-panel').hidden"), 10)
        status = page.dom("fetch('/instances', {credentials: 'same-origin'}).then(r => r.status)")
        assert status == 401
    finally:
        page.close()


def test_the_profiles_table_fits_a_1280_px_window(server, browser, shared_token, tmp_path):
    for name in ("work-account-with-a-rather-long-name", "personal"):
        server.post("/profiles", json={"name": name})
    page = Page(browser)
    try:
        page.run(lambda t: t.call("Emulation.setDeviceMetricsOverride",
                                  {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}))
        page.go(server.base + "/login")
        page.fill("#token-input", shared_token)
        page.click("#token-save")
        wait_until(lambda: page.dom("document.querySelectorAll('#profiles tbody tr[data-profile]').length") >= 2, 15)
        fits = page.dom("""(() => {
            const panel = document.getElementById('profiles').closest('.panel');
            const table = document.getElementById('profiles');
            const p = panel.getBoundingClientRect(), t = table.getBoundingClientRect();
            return {inside: t.right <= p.right - 1, noScroll: panel.scrollWidth <= panel.clientWidth,
                    onScreen: p.right <= window.innerWidth, width: window.innerWidth};
        })()""")
        shot = page.run(lambda t: t.call("Page.captureScreenshot", {"format": "png"}))["data"]
        (tmp_path / "dashboard-1280.png").write_bytes(base64.b64decode(shot))  # kept for a person to look at
        assert fits == {"inside": True, "noScroll": True, "onScreen": True, "width": 1280}, fits
    finally:
        page.close()


def test_cookie_flags_and_csrf_rules_for_cookie_borne_changes(server, shared_token):
    r = login(server, shared_token)
    assert r.status_code == 200 and r.json()["status"] == "ok" and r.json()["csrfToken"]
    set_cookie = r.headers["Set-Cookie"]
    assert set_cookie.startswith("pinchtab_auth_token=") and auth.COOKIE == "pinchtab_auth_token"
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie and "Path=/" in set_cookie
    assert "Max-Age=" in set_cookie and "Expires=" in set_cookie
    assert "Secure" not in set_cookie  # plain http here; https gets Secure
    jar = {auth.COOKIE: r.cookies[auth.COOKIE]}
    csrf = r.json()["csrfToken"]
    url = server.base + "/api/config"
    assert requests.get(server.base + "/instances", cookies=jar, timeout=10).status_code == 200
    # A change with the cookie alone, or from another site's page, is refused.
    for headers in ({}, {"Referer": "http://evil.example/x"}, {"X-CSRF-Token": "guess"}):
        bad = requests.put(url, json={}, cookies=jar, headers=headers, timeout=10)
        assert bad.status_code == 403 and bad.json()["code"] == "origin_forbidden", (headers, bad.text)
        assert bad.json()["details"] == {"sameOriginRequired": True}
    # Another site's Origin is refused in front of every route (app.access.web_origin), before the cookie is read.
    bad = requests.put(url, json={}, cookies=jar, headers={"Origin": "http://evil.example"}, timeout=10)
    assert bad.status_code == 403 and bad.json()["code"] == "origin_not_allowed", bad.text
    for headers in ({"Origin": server.base}, {"Referer": server.base + "/dashboard"}, {"X-CSRF-Token": csrf}):
        ok = requests.put(url, json={}, cookies=jar, headers=headers, timeout=10)
        assert ok.status_code == 200 and "config" in ok.json(), (headers, ok.text)
    # Login from another site's page is refused; a wrong token is a 401.
    assert login(server, shared_token, Origin="http://evil.example").status_code == 403
    assert login(server, "wrong").json()["code"] == "bad_token"
    # Logout ends the cookie at once, and tells the browser to drop it.
    out = requests.post(server.base + "/api/auth/logout", cookies=jar, headers={"Origin": server.base}, timeout=10)
    assert out.status_code == 200 and out.json() == {"status": "ok"}
    assert out.headers["Set-Cookie"].startswith("pinchtab_auth_token=;") and "Max-Age=0" in out.headers["Set-Cookie"]
    gone = requests.get(url, cookies=jar, headers={"Origin": server.base}, timeout=10)
    assert gone.status_code == 401 and gone.json()["code"] == "missing_token"


def test_the_cookie_opens_the_dashboards_routes_only(server, shared_token, site):
    jar = {auth.COOKIE: login(server, shared_token).cookies[auth.COOKIE]}
    ours = {"Origin": server.base}
    got = requests.get(server.base + "/api/config", cookies=jar, headers=ours, timeout=10)
    assert got.status_code == 200 and got.json()["config"]["server"]["token"] == "***"
    tab = server.post("/navigate", json={"url": site.url("table.html")}, headers={"X-Agent-Id": "cookie-routes"})
    tab_id = tab.json()["tabId"]
    try:
        # Downloads fetch with the browser's cookies: the header only, as in the original; so for the
        # rest of the browser API the dashboard does not call.
        for path in (f"/download?url={site.url('table.html')}", f"/tabs/{tab_id}/download?url={site.url('table.html')}",
                     f"/tabs/{tab_id}/snapshot", f"/tabs/{tab_id}/text", "/shutdown"):
            method = "POST" if path == "/shutdown" else "GET"
            r = requests.request(method, server.base + path, cookies=jar, headers=ours, timeout=30)
            assert r.status_code == 403 and r.json()["code"] == "header_auth_required", (path, r.text)
        shot = requests.get(f"{server.base}/tabs/{tab_id}/screenshot?raw=true", cookies=jar, timeout=30)
        assert shot.status_code == 200 and shot.headers["Content-Type"].startswith("image/")
    finally:
        server.post("/close", json={"tabId": tab_id})


def set_config(server: ServerProcess, change: dict[str, Any]) -> None:
    r = server.request("PUT", "/api/config", json=change)
    assert r.status_code == 200, r.text


def test_config_changes_from_the_dashboard_need_elevation_when_they_matter(server, shared_token):
    r = login(server, shared_token)
    jar, ours = {auth.COOKIE: r.cookies[auth.COOKIE]}, {"Origin": server.base}
    assert r.json()["elevationWindowSec"] == 300

    def put(change: dict[str, Any]) -> requests.Response:
        return requests.put(server.base + "/api/config", json=change, cookies=jar, headers=ours, timeout=10)

    try:
        # By default a login changes how the server runs without typing the token again...
        r = put({"server": {"trustProxyHeaders": False}})
        assert r.status_code == 200 and r.json()["applied"] == ["server.trustProxyHeaders"], r.text
        assert r.json()["config"]["server"]["trustProxyHeaders"] is False
        # ...but not who may do what: that needs the token typed lately (logging in does not count).
        r = put({"security": {"allowEvaluate": True}})
        assert r.status_code == 403 and r.json()["code"] == "elevation_required", r.text
        assert r.json()["details"]["keys"] == ["security.allowEvaluate"]
        # The original's switch: every change from a login needs it.
        set_config(server, {"sessions": {"dashboard": {"requireElevation": True}}})
        r = put({"server": {"trustProxyHeaders": True}})
        assert r.status_code == 403 and r.json()["code"] == "elevation_required", r.text
        assert r.json()["details"]["elevationWindowSec"] == 300
        wrong = requests.post(server.base + "/api/auth/elevate", json={"token": "nope"}, cookies=jar, headers=ours,
                              timeout=10)
        assert wrong.status_code == 401 and wrong.json()["code"] == "bad_token"
        up = requests.post(server.base + "/api/auth/elevate", json={"token": shared_token}, cookies=jar,
                           headers=ours, timeout=10)
        assert up.status_code == 200 and up.json()["status"] == "ok" and up.json()["elevationWindowSec"] == 300
        r = put({"server": {"trustProxyHeaders": True}})
        assert r.status_code == 200 and r.json()["config"]["server"]["trustProxyHeaders"] is True, r.text
        # The header is never asked to elevate; the token stays write-only, with the original's code.
        r = server.request("PUT", "/api/config", json={"server": {"token": "forbidden-from-dashboard"}})
        assert r.status_code == 400 and r.json()["code"] == "token_write_only", r.text
    finally:
        set_config(server, {"sessions": {"dashboard": {"requireElevation": False}},
                            "server": {"trustProxyHeaders": True}})


def test_forwarded_headers_count_only_when_trusted_and_decide_the_secure_flag(server, shared_token):
    https = {"X-Forwarded-Proto": "https"}
    try:
        # On (as this server starts): the proxy on this machine says the browser used https.
        r = login(server, shared_token, **https)
        assert r.status_code == 200 and "Secure" in r.headers["Set-Cookie"]
        jar = {auth.COOKIE: r.cookies[auth.COOKIE]}
        # The scheme is then part of "our own page": an http Origin behind that https is not it.
        refused = requests.post(server.base + "/api/auth/elevate", json={"token": shared_token}, cookies=jar,
                                headers={"Origin": server.base, **https}, timeout=10)
        assert refused.status_code == 403 and refused.json()["code"] == "origin_forbidden", refused.text
        # Off (the original's default): whoever sends them, forwarded headers are ignored.
        set_config(server, {"server": {"trustProxyHeaders": False}})
        r = login(server, shared_token, **https)
        assert r.status_code == 200 and "Secure" not in r.headers["Set-Cookie"]
        jar = {auth.COOKIE: r.cookies[auth.COOKIE]}
        ok = requests.post(server.base + "/api/auth/elevate", json={"token": shared_token}, cookies=jar,
                           headers={"Origin": server.base, **https}, timeout=10)
        assert ok.status_code == 200, ok.text
    finally:
        set_config(server, {"server": {"trustProxyHeaders": True}})


# --- elevation and the failed-login limit: the server app in process, with a clock we move ---------
def login_app(tmp_path: Path, token: str, **settings: Any) -> Flask:
    """The server's auth, login and session routes alone, in process (no manager, no browser)."""
    from app.access import session_routes
    from app.orchestrator.routes import login as login_routes
    from app.web import errors
    from app.web.openapi import init_api

    app = Flask("login-test")
    config = app.extensions["pinchtab.config"] = make_config(tmp_path, **{"server.token": token, **settings})
    api = init_api(app, "t", "t")
    errors.register(app)
    auth.register(app, token)
    login_routes.init_app(app, config)
    session_routes.init_app(app, config)
    api.register_blueprint(login_routes.bp)
    api.register_blueprint(session_routes.bp)
    return app


def test_an_old_login_must_type_the_token_again_to_make_sessions(tmp_path: Path):
    token = "in-process-t0ken"
    app = login_app(tmp_path, token, **{"sessions.dashboard.elevationWindowSec": 60})
    now = [time.time()]
    app.extensions[auth.LOGINS]._clock = lambda: now[0]
    client = app.test_client()
    r = client.post("/api/auth/login", json={"token": token})
    assert r.status_code == 200 and r.get_json()["elevationWindowSec"] == 60
    headers = {"X-CSRF-Token": r.get_json()["csrfToken"]}
    # Logging in does not elevate (as in the original): the token is typed again for the changes that matter.
    r = client.post("/sessions", json={"agentId": "a"}, headers=headers)
    assert r.status_code == 403 and r.get_json()["code"] == "elevation_required"
    assert r.get_json()["details"]["elevationWindowSec"] == 60
    assert client.get("/sessions").status_code == 200  # reading needs no fresh token
    assert client.post("/api/auth/elevate", json={"token": "wrong"}, headers=headers).status_code == 401
    up = client.post("/api/auth/elevate", json={"token": token}, headers=headers)
    assert up.status_code == 200 and up.get_json()["status"] == "ok" and up.get_json()["elevationWindowSec"] == 60
    assert client.post("/sessions", json={"agentId": "a"}, headers=headers).status_code == 201
    now[0] += 50
    assert client.post("/sessions", json={"agentId": "a"}, headers=headers).status_code == 201
    now[0] += 11  # past the configured minute
    r = client.post("/sessions", json={"agentId": "a"}, headers=headers)
    assert r.status_code == 403 and r.get_json()["code"] == "elevation_required"
    # A bearer caller never needs to elevate.
    bearer = client.post("/api/auth/elevate", json={"token": token}, headers={"Authorization": f"Bearer {token}"})
    assert bearer.status_code == 400 and bearer.get_json()["code"] == "not_a_login"
    # Logging in again from the same browser replaces its login: the old cookie stops working.
    old = client.get_cookie(auth.COOKIE).value
    assert client.post("/api/auth/login", json={"token": token}).status_code == 200
    assert client.get_cookie(auth.COOKIE).value != old
    client.set_cookie(auth.COOKIE, old)
    assert client.get("/sessions").status_code == 401


def test_logins_are_rate_limited_with_the_originals_answer_and_secure_follows_the_setting(tmp_path: Path):
    token = "in-process-t0ken"
    client = login_app(tmp_path, token).test_client()
    for _ in range(FAILURES_PER_WINDOW):
        r = client.post("/api/auth/login", json={"token": "wrong-token"})
        assert r.status_code == 401 and r.get_json()["code"] == "bad_token"
    r = client.post("/api/auth/login", json={"token": token})   # past the limit even the right one waits
    assert r.status_code == 429 and r.get_json()["code"] == "login_rate_limited", r.get_json()
    details = r.get_json()["details"]
    assert 1 <= details["retryAfterSec"] <= 60 and details["windowSec"] == 60
    assert details["maxAttempts"] == FAILURES_PER_WINDOW and r.headers["Retry-After"] == str(details["retryAfterSec"])
    # server.cookieSecure: true marks the cookie Secure, and refuses a login the browser would not keep.
    secure = login_app(tmp_path / "secure", token, **{"server.cookieSecure": True}).test_client()
    r = secure.post("/api/auth/login", json={"token": token})
    assert r.status_code == 400 and r.get_json()["code"] == "secure_cookie_requires_https"
    r = secure.post("/api/auth/login", json={"token": token}, base_url="https://localhost")
    assert r.status_code == 200 and "Secure" in r.headers["Set-Cookie"]
    never = login_app(tmp_path / "never", token, **{"server.cookieSecure": False}).test_client()
    r = never.post("/api/auth/login", json={"token": token}, base_url="https://localhost")
    assert r.status_code == 200 and "Secure" not in r.headers["Set-Cookie"]


def test_failed_logins_are_limited_per_client():
    now = [1000.0]
    store = LoginStore(idle_s=3600, max_age_s=7200, elevation_s=60, clock=lambda: now[0])
    for _ in range(FAILURES_PER_WINDOW):
        assert store.allow_attempt("10.0.0.1")
        store.failed("10.0.0.1")
    assert not store.allow_attempt("10.0.0.1") and store.allow_attempt("10.0.0.2")
    now[0] += 61
    assert store.allow_attempt("10.0.0.1")
    cookie, made = store.create()
    assert store.resolve(cookie) is made and store.resolve(cookie + "x") is None
    store.revoke(cookie)
    assert store.resolve(cookie) is None
    # The limits given (sessions.dashboard.idleTimeoutSec, maxLifetimeSec): idle an hour, or two hours old.
    idle, _ = store.create()
    now[0] += 3599
    assert store.resolve(idle) is not None
    now[0] += 3600
    assert store.resolve(idle) is None
    busy, _ = store.create()
    for _ in range(3):
        now[0] += 3000
        lived = store.resolve(busy)
    assert lived is None  # 9000 s > 7200 s, however busy
