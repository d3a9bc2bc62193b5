"""The dashboard's login: the token typed once in a real browser, then an HttpOnly, SameSite=Strict
cookie; CSRF rules for cookie-borne changes; logout; elevation; and the dashboard's layout at
1280 px. Real Chromium against a real ``pinchtab server``; the elevation clock is the one fake
(in-process, pure logic)."""
from __future__ import annotations

import base64
import secrets
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from flask import Flask
from support.config import make_config
from support.servers import ServerProcess
from support.waits import wait_until

from app import auth
from app.orchestrator.login import FAILURES_PER_WINDOW, LoginStore

pytestmark = pytest.mark.e2e


@pytest.fixture
def server(shared_server: ServerProcess) -> ServerProcess:
    return shared_server


def login(server: ServerProcess, token: str, **headers: str) -> requests.Response:
    return requests.post(server.base + "/api/auth/login", json={"token": token}, headers=headers, timeout=10)


class Page:
    """A tab of the shared browser on the server's pages, driven over CDP."""

    def __init__(self, browser: Any) -> None:
        self.tab = browser.new_tab()
        self.browser = browser

    def run(self, fn: Any) -> Any:
        return self.tab.run(lambda: fn(self.tab), 30)

    def go(self, url: str) -> None:
        from cdp import navigation

        self.run(lambda t: navigation.navigate(t, url, timeout_s=20))

    def dom(self, expr: str) -> Any:
        res = self.run(lambda t: t.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                                             "awaitPromise": True}))
        return res["result"].get("value")

    def fill(self, selector: str, text: str) -> None:
        from cdp import actions
        from cdp.input import Target

        self.run(lambda t: actions.fill(t, Target(selector=selector), text))

    def click(self, selector: str) -> None:
        from cdp import actions
        from cdp.input import Target

        self.run(lambda t: actions.click(t, Target(selector=selector)))

    def cookies(self) -> list[dict[str, Any]]:
        return self.run(lambda t: t.call("Network.getCookies", {}))["cookies"]

    def close(self) -> None:
        self.browser.close_tab(self.tab.id)


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
        # Agent sessions are made here (the token shown once) and revoked here.
        agent = "dash-" + secrets.token_hex(3)
        page.fill("#session-agent", agent)
        page.click("#session-create")
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
    assert r.status_code == 200 and r.json()["csrfToken"]
    set_cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in set_cookie and "SameSite=Strict" in set_cookie and "Path=/" in set_cookie
    assert "Secure" not in set_cookie  # plain http here; https gets Secure
    jar = {auth.COOKIE: r.cookies[auth.COOKIE]}
    csrf = r.json()["csrfToken"]
    url = server.base + "/api/config"
    assert requests.get(server.base + "/instances", cookies=jar, timeout=10).status_code == 200
    # A change with the cookie alone, or from another site's page, is refused.
    for headers in ({}, {"Referer": "http://evil.example/x"}, {"X-CSRF-Token": "guess"}):
        bad = requests.put(url, json={}, cookies=jar, headers=headers, timeout=10)
        assert bad.status_code == 403 and bad.json()["code"] == "csrf_failed", (headers, bad.text)
    # Another site's Origin is refused in front of every route (app.web_origin), before the cookie is read.
    bad = requests.put(url, json={}, cookies=jar, headers={"Origin": "http://evil.example"}, timeout=10)
    assert bad.status_code == 403 and bad.json()["code"] == "origin_not_allowed", bad.text
    for headers in ({"Origin": server.base}, {"Referer": server.base + "/dashboard"}, {"X-CSRF-Token": csrf}):
        ok = requests.put(url, json={}, cookies=jar, headers=headers, timeout=10)
        assert ok.status_code == 200, (headers, ok.text)
    # Login from another site's page is refused; a wrong token is a 401.
    assert login(server, shared_token, Origin="http://evil.example").status_code == 403
    assert login(server, "wrong").json()["code"] == "bad_token"
    # Logout ends the cookie at once.
    out = requests.post(server.base + "/api/auth/logout", cookies=jar, headers={"Origin": server.base}, timeout=10)
    assert out.status_code == 200
    assert requests.get(server.base + "/instances", cookies=jar, timeout=10).status_code == 401


# --- elevation and the failed-login limit: the server app in process, with a clock we move ---------
def login_app(tmp_path: Path, token: str, **settings: Any) -> Flask:
    """The server's auth, login and session routes alone, in process (no manager, no browser)."""
    from app import errors
    from app.api.routes import sessions as session_routes
    from app.openapi import init_api
    from app.orchestrator.routes import login as login_routes

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
    assert r.status_code == 200
    headers = {"X-CSRF-Token": r.get_json()["csrfToken"]}
    assert client.post("/sessions", json={"agentId": "a"}, headers=headers).status_code == 201
    now[0] += 50
    assert client.post("/sessions", json={"agentId": "a"}, headers=headers).status_code == 201
    now[0] += 11  # past the configured minute
    r = client.post("/sessions", json={"agentId": "a"}, headers=headers)
    assert r.status_code == 403 and r.get_json()["code"] == "elevation_required"
    assert client.get("/sessions").status_code == 200  # reading needs no fresh token
    assert client.post("/api/auth/elevate", json={"token": "wrong"}, headers=headers).status_code == 401
    assert client.post("/api/auth/elevate", json={"token": token}, headers=headers).status_code == 200
    assert client.post("/sessions", json={"agentId": "a"}, headers=headers).status_code == 201
    # A bearer caller never needs to elevate.
    bearer = client.post("/api/auth/elevate", json={"token": token}, headers={"Authorization": f"Bearer {token}"})
    assert bearer.status_code == 400 and bearer.get_json()["code"] == "not_a_login"


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
