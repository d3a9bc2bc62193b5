"""Faults: a crashed browser, a crashed tab, a busy tab. Each gets a clear answer in time."""
from __future__ import annotations

import os
import signal
import threading
import time

from support.config import make_config
from support.waits import wait_until


def own_app(tmp_path):
    """An app with a browser of its own (these tests kill it)."""
    from app.api import create_app

    app = create_app(make_config(tmp_path), start_browser=False)
    app.extensions["pinchtab"].start(background=False)
    return app


def test_a_crashed_browser_is_restarted_by_the_next_request_which_says_so(tmp_path, site):
    app = own_app(tmp_path)
    bridge = app.extensions["pinchtab"]
    c = app.test_client()
    try:
        old_tab = c.post("/navigate", json={"url": site.url("form.html")}).json["tabId"]
        pid = bridge.browser.process.proc.pid
        os.killpg(pid, signal.SIGKILL)
        wait_until(lambda: not bridge.browser.alive(), 10)
        assert c.get("/health").json["status"] == "error"
        r = c.post("/navigate", json={"url": site.url("table.html")})
        assert r.status_code == 200 and r.json["browserRestarted"] is True
        assert r.headers["X-PinchTab-Browser-Restarted"] == "true"
        assert r.json["title"] == "Orders"
        assert bridge.browser.process.proc.pid != pid
        r = c.get(f"/tabs/{old_tab}/snapshot")
        assert r.status_code == 404  # its tabs died with it
        health = c.get("/health").json
        assert health["status"] == "ok" and health["restarts"] == 1
    finally:
        bridge.stop()


def test_a_crashed_tab_fails_at_once_and_other_tabs_keep_working(client, site, browser):
    a = client.post("/navigate", json={"url": site.url("form.html")}).json["tabId"]
    b = client.post("/navigate", json={"url": site.url("table.html")}).json["tabId"]
    tab = browser.tab(a)
    tab.conn.send("Page.crash", {}, tab.session_id)
    wait_until(lambda: tab.closed is not None, 10)
    started = time.monotonic()
    r = client.get(f"/tabs/{a}/snapshot")
    assert r.status_code in (404, 409) and r.json["code"] in ("tab_crashed", "tab_not_found")
    assert time.monotonic() - started < 2
    assert client.get(f"/tabs/{b}/text").json["title"] == "Orders"


def test_a_slow_tab_does_not_hold_up_the_others(client, site):
    slow = client.post("/navigate", json={"url": site.url("form.html")}).json["tabId"]
    other = client.post("/navigate", json={"url": site.url("table.html")}).json["tabId"]
    done = threading.Event()

    def slow_nav():  # type: ignore[no-untyped-def]
        client.post("/navigate", json={"url": site.url("slow?ms=3000"), "tabId": slow})
        done.set()

    t = threading.Thread(target=slow_nav)
    t.start()
    try:
        started = time.monotonic()
        r = client.get(f"/tabs/{other}/snapshot?filter=interactive&format=compact")
        assert r.status_code == 200 and "Alan Turing" in r.data.decode()
        assert time.monotonic() - started < 1.5 and not done.is_set()
    finally:
        t.join(15)
