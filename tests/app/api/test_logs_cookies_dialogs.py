"""Console and errors, cookies, JavaScript dialogs and the tab's state, against a real headless Chromium."""
from __future__ import annotations

import logging
import threading
import time
from types import SimpleNamespace

from support.waits import wait_until


def nav(client, url, **extra):
    r = client.post("/navigate", json={"url": url, **extra})
    assert r.status_code == 200, r.json
    return r.json["tabId"]


def assert_error(r, status: int, code: str, words: str = "") -> None:
    assert r.status_code == status and r.json["code"] == code, r.json
    assert words in r.json["error"], r.json


def raw_text(client, tab: str) -> str:
    return client.get(f"/tabs/{tab}/text?mode=raw").json["text"]


# --- console and errors ------------------------------------------------------------------------------
def test_console_keeps_what_the_page_logged_while_loading(client, site):
    tab = nav(client, site.url("reads_logs.html"))
    # Logged during the load, before anyone asked: captured from the tab's creation.
    logged = wait_until(lambda: (lambda c: c if len(c) >= 3 else None)(client.get("/console").json["console"]), 5)
    first, warn, err = logged[:3]
    assert first["level"] == "log" and first["message"].startswith("page loaded 42 ")
    assert first["source"] == site.url("reads_logs.html")
    assert (warn["level"], warn["message"]) == ("warning", "careful now")
    assert (err["level"], err["message"]) == ("error", "something failed")
    assert all(e["timestamp"].endswith("Z") for e in logged)

    for _ in range(3):
        assert client.post("/action", json={"kind": "click", "selector": "#more"}).status_code == 200
    wait_until(lambda: len(client.get(f"/tabs/{tab}/console").json["console"]) == 6, 5)
    last = client.get(f"/console?tabId={tab}&limit=2").json
    assert last["tabId"] == tab and [e["message"] for e in last["console"]] == ["clicked 2", "clicked 3"]
    assert last["console"][0]["level"] == "info"
    assert len(client.get("/console?limit=0").json["console"]) == 6
    assert len(client.get("/console?limit=5000").json["console"]) == 6  # capped at the ring's size, not an error

    assert client.post(f"/console/clear?tabId={tab}").json == {"success": True, "tabId": tab}
    assert client.get("/console").json == {"tabId": tab, "console": []}
    client.post("/action", json={"kind": "click", "selector": "#more"})
    wait_until(lambda: [e["message"] for e in client.get("/console").json["console"]] == ["clicked 4"], 5)
    assert client.post(f"/tabs/{tab}/console/clear").json == {"success": True, "tabId": tab}

    assert_error(client.get("/console?tabId=NOSUCHTAB"), 404, "tab_not_found")
    assert_error(client.post("/console/clear?tabId=NOSUCHTAB"), 404, "tab_not_found")
    assert_error(client.get("/console?limit=-1"), 400, "bad_request", "limit")
    assert_error(client.get("/console?limit=many"), 400, "bad_request", "limit")


def test_errors_record_uncaught_exceptions_and_unhandled_rejections(client, site):
    tab = nav(client, site.url("reads_logs.html"))
    errors = wait_until(lambda: (lambda e: e if len(e) >= 2 else None)(client.get("/errors").json["errors"]), 5)
    messages = " | ".join(e["message"] for e in errors)
    assert "Error: boom at load" in messages and "nobody caught me" in messages
    thrown = next(e for e in errors if "boom at load" in e["message"])
    assert thrown["url"] == site.url("reads_logs.html") and isinstance(thrown["line"], int)
    assert client.get(f"/errors?tabId={tab}&limit=1").json["errors"] == errors[-1:]
    assert client.get(f"/tabs/{tab}/errors").json == {"tabId": tab, "errors": errors}
    assert client.post(f"/errors/clear?tabId={tab}").json == {"success": True, "tabId": tab}
    assert client.get("/errors").json == {"tabId": tab, "errors": []}
    assert client.get("/console").json["console"]  # clearing errors leaves the console alone
    assert_error(client.get("/errors?tabId=NOSUCHTAB"), 404, "tab_not_found")
    assert_error(client.post("/errors/clear?tabId=NOSUCHTAB"), 404, "tab_not_found")


# --- cookies ---------------------------------------------------------------------------------------
def test_cookies_are_off_until_configured(client, site):
    tab = nav(client, site.url("form.html"))
    for r in (client.get("/cookies"), client.post("/cookies", json={"url": site.url("/"), "cookies": [{}]}),
              client.delete("/cookies"), client.delete(f"/tabs/{tab}/cookies")):
        assert_error(r, 403, "cookies_disabled", "security.allowCookies")
        assert r.json["details"]["setting"] == "security.allowCookies"


def test_cookies_set_read_filter_and_clear(app_factory, site, caplog):
    caplog.set_level(logging.DEBUG)
    c = app_factory(**{"security.allowCookies": True, "security.allowEvaluate": True}).test_client()
    c.delete("/cookies")
    tab = nav(c, site.url("form.html"))
    later = time.time() + 3600
    r = c.post("/cookies", json={"url": site.url("/"), "cookies": [
        {"name": "sid", "value": "s3cr3t-cookie-value", "path": "/"},
        {"name": "", "value": "nameless"},
        {"name": "empty", "value": ""},
        {"name": "flavour", "value": "oat", "httpOnly": True, "sameSite": "lax", "expires": later},
        {"name": "odd", "value": "x", "sameSite": "sometimes"},
    ]})
    assert r.status_code == 200 and r.json == {"set": 2, "failed": 3, "total": 5}

    got = c.get("/cookies").json  # the tab's URL by default
    assert got["url"] == site.url("form.html") and got["count"] == 2
    by_name = {ck["name"]: ck for ck in got["cookies"]}
    assert by_name["sid"] == {"name": "sid", "value": "s3cr3t-cookie-value", "domain": "127.0.0.1", "path": "/",
                              "secure": False, "httpOnly": False, "sameSite": ""}  # a session cookie: no expires
    assert by_name["flavour"]["httpOnly"] is True and by_name["flavour"]["sameSite"] == "Lax"
    assert abs(by_name["flavour"]["expires"] - later) < 5
    # the page really has them (the httpOnly one is hidden from scripts)
    assert c.post("/evaluate", json={"expression": "document.cookie"}).json == {"result": "sid=s3cr3t-cookie-value"}

    only = c.get(f"/tabs/{tab}/cookies?name=flavour").json
    assert only["count"] == 1 and only["cookies"][0]["value"] == "oat"
    elsewhere = c.get("/cookies", query_string={"url": "http://example.invalid/"}).json
    assert elsewhere == {"url": "http://example.invalid/", "cookies": [], "count": 0}
    r = c.post(f"/tabs/{tab}/cookies", json={"url": site.url("/"), "cookies": [{"name": "sid", "value": "v2"}]})
    assert r.json == {"set": 1, "failed": 0, "total": 1}
    assert c.get("/cookies?name=sid").json["cookies"][0]["value"] == "v2"

    assert c.delete(f"/tabs/{tab}/cookies").json == {"status": "cleared"}
    assert c.get("/cookies").json["count"] == 0
    c.post("/cookies", json={"url": site.url("/"), "cookies": [{"name": "again", "value": "1"}]})
    assert c.delete("/cookies").json == {"status": "cleared"}
    assert c.get("/cookies").json["count"] == 0

    assert_error(c.post("/cookies", json={"cookies": [{"name": "a", "value": "b"}]}), 400, "bad_request",
                 "url is required")
    assert_error(c.post("/cookies", json={"url": site.url("/"), "cookies": []}), 400, "bad_request",
                 "cookies array is empty")
    assert_error(c.post("/cookies", json={"url": site.url("/")}), 400, "bad_request", "cookies array is empty")
    assert_error(c.post("/cookies", json={"url": "ftp://x/", "cookies": [{"name": "a", "value": "b"}]}), 400,
                 "bad_url")
    assert_error(c.get("/cookies?url=javascript:alert(1)"), 400, "bad_url")
    assert_error(c.post("/cookies", json={"url": site.url("/"), "cookies": [{"name": "a", "value": 7}]}), 400,
                 "bad_request", "value")
    assert_error(c.delete("/tabs/NOSUCHTAB/cookies"), 404, "tab_not_found")
    assert_error(c.get("/cookies?tabId=NOSUCHTAB"), 404, "tab_not_found")
    assert "s3cr3t-cookie-value" not in caplog.text


# --- dialogs and the tab's state ---------------------------------------------------------------------
def test_an_unplanned_alert_blocks_the_tab_until_answered(client, site):
    tab = nav(client, site.url("dialog.html"))
    state = client.get(f"/tabs/{tab}/state").json
    assert state == {"tabId": tab, "url": site.url("dialog.html"), "title": "Dialogs", "dialogPresent": False,
                     "load": {"readyState": "complete", "navigationInProgress": False,
                              "state": state["load"]["state"]},
                     "actionability": "ready"}
    assert state["load"]["state"] in ("load", "networkidle")

    started = time.monotonic()
    r = client.post("/action", json={"kind": "click", "selector": "#alert"})
    assert time.monotonic() - started < 2
    assert_error(r, 409, "dialog_blocking", "alert")
    assert r.json["details"]["dialog_type"] == "alert" and r.json["details"]["dialog_message"] == "hi"

    state = client.get(f"/tabs/{tab}/state").json
    assert state["dialogPresent"] is True and state["actionability"] == "blocked"
    assert state["dialog"] == {"type": "alert", "message": "hi"}

    # everything else on the tab fails fast instead of hanging until its deadline
    calls = [lambda: client.get("/title"), lambda: client.get(f"/tabs/{tab}/snapshot"),
             lambda: client.get("/html?selector=%23out"), lambda: client.get("/pdf"),
             lambda: client.post("/action", json={"kind": "click", "selector": "#confirm"})]
    for call in calls:
        started = time.monotonic()
        r = call()
        assert time.monotonic() - started < 2
        assert_error(r, 409, "dialog_blocking")
    # the logs and the state are read without the page: they still answer
    assert client.get("/console").status_code == 200 and client.get(f"/tabs/{tab}/state").status_code == 200

    assert client.post("/dialog", json={"action": "accept"}).json == {"type": "alert", "message": "hi", "handled": True}
    state = client.get(f"/tabs/{tab}/state").json
    assert state["dialogPresent"] is False and "dialog" not in state and state["actionability"] == "ready"
    assert client.get("/title").json["title"] == "Dialogs"
    assert_error(client.post("/dialog", json={"action": "accept"}), 400, "no_dialog", f"no dialog open on tab {tab}")


def test_an_evaluate_that_opens_a_dialog_is_told_so_and_the_dialog_waits_for_an_answer(app_factory, site):
    client = app_factory(**{"security.allowEvaluate": True}).test_client()
    tab = nav(client, site.url("dialog.html"))
    started = time.monotonic()
    r = client.post("/evaluate", json={"expression": "confirm('Go on?') ? 'yes' : 'no'"})
    assert time.monotonic() - started < 2
    assert_error(r, 409, "dialog_blocking", "confirm")
    assert r.json["details"]["dialog_message"] == "Go on?"
    started = time.monotonic()
    assert_error(client.post("/evaluate", json={"expression": "1+1"}), 409, "dialog_blocking")  # at once
    assert time.monotonic() - started < 1
    assert client.post("/dialog", json={"action": "dismiss"}).json["handled"] is True
    assert client.post("/evaluate", json={"expression": "1+1"}).json == {"result": 2}
    assert client.get(f"/tabs/{tab}/state").json["dialogPresent"] is False


def test_planned_and_posted_answers_reach_the_page(client, site):
    tab = nav(client, site.url("dialog.html"))
    r = client.post("/action", json={"kind": "click", "selector": "#confirm", "dialogAction": "dismiss"})
    assert r.status_code == 200
    assert r.json["result"]["dialog"] == {"type": "confirm", "message": "Sure?", "handled": "dismissed"}
    wait_until(lambda: "confirm:false" in raw_text(client, tab), 5)
    client.post("/action", json={"kind": "click", "selector": "#confirm", "dialogAction": "accept"})
    wait_until(lambda: "confirm:true" in raw_text(client, tab), 5)

    r = client.post("/action", json={"kind": "click", "selector": "#prompt", "dialogAction": "accept",
                                     "dialogText": "Grace"})
    assert r.status_code == 200 and r.json["result"]["dialog"]["defaultPrompt"] == "nobody"
    wait_until(lambda: "prompt:Grace" in raw_text(client, tab), 5)

    # unplanned prompts, answered with POST /dialog (and its /tabs/{id} twin)
    assert_error(client.post("/action", json={"kind": "click", "selector": "#prompt"}), 409, "dialog_blocking")
    assert client.get(f"/tabs/{tab}/state").json["dialog"] == {"type": "prompt", "message": "Name?",
                                                              "defaultPrompt": "nobody"}
    r = client.post(f"/tabs/{tab}/dialog", json={"action": "accept", "text": "Hopper"})
    assert r.json == {"type": "prompt", "message": "Name?", "handled": True}
    wait_until(lambda: "prompt:Hopper" in raw_text(client, tab), 5)
    assert_error(client.post("/action", json={"kind": "click", "selector": "#prompt"}), 409, "dialog_blocking")
    assert client.post("/dialog", json={"tabId": tab, "action": "dismiss"}).status_code == 200
    wait_until(lambda: "prompt:null" in raw_text(client, tab), 5)


def test_dialog_request_errors(client, site):
    tab = nav(client, site.url("dialog.html"))
    assert_error(client.post("/dialog", json={}), 400, "bad_request", "action required (accept or dismiss)")
    assert_error(client.post("/dialog", json={"accept": True}), 400, "bad_request", "action required")
    assert_error(client.post("/dialog", json={"action": "maybe"}), 400, "bad_request", "'accept' or 'dismiss'")
    assert_error(client.post("/dialog", json={"action": "accept"}), 400, "no_dialog", f"no dialog open on tab {tab}")
    assert_error(client.post(f"/tabs/{tab}/dialog", json={"action": "dismiss", "tabId": "OTHER"}), 400,
                 "bad_request", "does not match")
    assert_error(client.post("/tabs/NOSUCHTAB/dialog", json={"action": "accept"}), 404, "tab_not_found")
    assert_error(client.get("/tabs/NOSUCHTAB/state"), 404, "tab_not_found")


def test_state_and_logs_answer_while_the_worker_is_busy(app_factory, site):
    app = app_factory()
    client = app.test_client()
    tab_id = nav(client, site.url("reads_logs.html"))
    tab = app.extensions["pinchtab"].browser.tab(tab_id)
    loads = tab.loads_started
    busy = threading.Thread(target=lambda: app.test_client().post(
        f"/tabs/{tab_id}/navigate", json={"url": site.url("slow?ms=2500")}), daemon=True)
    busy.start()
    try:
        # the navigation has started on the tab's worker, which now waits for the slow server
        wait_until(lambda: tab.loads_started != loads, 2)
        started = time.monotonic()
        state = client.get(f"/tabs/{tab_id}/state")
        logs = client.get(f"/console?tabId={tab_id}")
        assert time.monotonic() - started < 1  # neither queued behind the navigation
        assert state.status_code == 200 and state.json["url"] == site.url("reads_logs.html")
        assert logs.status_code == 200 and logs.json["console"]
        assert busy.is_alive()  # the worker really was busy all along
        # a read that needs the page does queue: it sees the page the navigation brings
        assert client.get(f"/tabs/{tab_id}/title").json["title"] == "Slow"
    finally:
        busy.join(15)
    assert client.get(f"/tabs/{tab_id}/state").json["url"] == site.url("slow?ms=2500")


def test_load_state_follows_the_main_frame_lifecycle():
    from cdp.page_state import page_state
    from cdp.tab import Dialog, Frame

    main = Frame("F", "S")
    tab = SimpleNamespace(id="T", url="http://x/", title="X", main_frame_id="F", frames={"F": main}, dialog=None)
    expected = [(set(), "loading", True, "loading", "caution"),
                ({"commit", "DOMContentLoaded"}, "interactive", False, "domcontentloaded", "caution"),
                ({"DOMContentLoaded", "load"}, "complete", False, "load", "ready"),
                ({"DOMContentLoaded", "load", "networkIdle"}, "complete", False, "networkidle", "ready")]
    for lifecycle, ready, navigating, name, actionability in expected:
        main.lifecycle = lifecycle
        out = page_state(tab)
        assert out["load"] == {"readyState": ready, "navigationInProgress": navigating, "state": name}, lifecycle
        assert out["actionability"] == actionability and out["dialogPresent"] is False
    tab.dialog = Dialog("confirm", "Sure?")
    out = page_state(tab)
    assert out["actionability"] == "blocked" and out["dialog"] == {"type": "confirm", "message": "Sure?"}
