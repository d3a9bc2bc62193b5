"""The dashboard's debug panel in real Chromium: sessions, live telemetry, filter, pause, commands.

The page is served by a debug server (the debug routes and WebSocket of a bridge, with a token)
that also serves the dashboard's files, as the server does; an app is a websocket-client peer that
speaks the protocol. One end-to-end test runs ``pinchtab server`` itself: a listed tab's Debug
button, and that tab's telemetry through the server's proxy. What is asserted is what a person
sees on the page.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import websocket
from support.config import make_config
from support.waits import wait_until

from app.access import auth
from app.debug import protocol
from app.debug.standalone import StandaloneServer
from app.orchestrator.routes import dashboard

TOKEN = "dash-t0ken-for-tests"
SESSION = "dash-session-0123456789abcdef"


@pytest.fixture
def server(tmp_path: Path) -> Iterator[StandaloneServer]:
    srv = StandaloneServer(make_config(tmp_path, **{"server.token": TOKEN}), "127.0.0.1", 0, SESSION)
    # The dashboard's files, public as on the server (its front door serves them before the token check).
    srv.app.register_blueprint(dashboard.bp)
    auth.allow_public(srv.app, lambda req: req.path == "/dashboard" or req.path.startswith("/dashboard/"))
    with srv:
        yield srv


def base(srv: StandaloneServer) -> str:
    return f"http://127.0.0.1:{srv.port}"


class Page:
    """The dashboard open in a tab, with a token given the way a person gives it."""

    def __init__(self, tab: Any, url: str) -> None:
        self.tab = tab
        from cdp import navigation

        self.run(lambda t: navigation.navigate(t, url + "/dashboard", timeout_s=20))
        wait_until(lambda: self.dom("!document.getElementById('token-panel').hidden"), 10)
        self.fill("#token-input", TOKEN)
        self.click("#token-save")
        # The login is a request of its own: the page's calls carry its cookie once it is done.
        wait_until(lambda: self.dom("document.getElementById('token-panel').hidden"), 10)

    def run(self, fn: Any) -> Any:
        return self.tab.run(lambda: fn(self.tab), 30)

    def dom(self, expr: str) -> Any:
        res = self.run(lambda t: t.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}))
        return res["result"].get("value")

    def click(self, selector: str) -> None:
        from cdp import actions
        from cdp.input import Target

        self.run(lambda t: actions.click(t, Target(selector=selector)))

    def fill(self, selector: str, text: str) -> None:
        from cdp import actions
        from cdp.input import Target

        self.run(lambda t: actions.fill(t, Target(selector=selector), text))

    def select(self, selector: str, value: str) -> None:
        from cdp import actions
        from cdp.input import Target

        self.run(lambda t: actions.select(t, Target(selector=selector), value))

    def stream_texts(self, visible_only: bool = False) -> list[str]:
        rows = "[...document.querySelectorAll('#debug-stream li')]"
        if visible_only:
            rows += ".filter(li => !li.hidden)"
        return self.dom(f"{rows}.map(li => li.dataset.type + ' ' + li.textContent)") or []

    def watch(self, session_id: str) -> None:
        row = f'#debug-sessions tr[data-session-id="{session_id}"]'
        wait_until(lambda: self.dom(f"!!document.querySelector('{row}')"), 10)
        self.click(f"{row} button[data-action=watch]")
        wait_until(lambda: self.dom("document.getElementById('debug-state').textContent") == "live", 10)


class App:
    """A web app of the session, as the page SDK would be: hello, telemetry, answers to commands."""

    def __init__(self, srv: StandaloneServer) -> None:
        self.ws = websocket.create_connection(f"{srv.url}?role=app&sessionId={SESSION}", timeout=5,
                                              skip_utf8_validation=True)

    def send(self, type: str, **fields: Any) -> None:
        self.ws.send(json.dumps(protocol.envelope(SESSION, type, **fields)))

    def recv_until(self, pred: Any, timeout_s: float = 10.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.ws.settimeout(max(0.01, deadline - time.monotonic()))
            msg = json.loads(self.ws.recv())
            if pred(msg):
                return msg
        raise AssertionError("no such message in time")

    def close(self) -> None:
        self.ws.close()


@pytest.fixture
def app(server: StandaloneServer) -> Iterator[App]:
    a = App(server)
    a.send("hello", appName="Shop", appVersion="1.2", url="http://127.0.0.1/shop",
           userAgent="test", viewport={"width": 800, "height": 600})
    yield a
    a.close()


def test_a_session_shows_its_app_and_its_console_messages_arrive_live(server, app, tab):
    page = Page(tab, base(server))
    row = f'document.querySelector(\'#debug-sessions tr[data-session-id="{SESSION}"]\')'
    wait_until(lambda: "Shop 1.2" in (page.dom(f"{row} && {row}.textContent") or ""), 10)
    assert "http://127.0.0.1/shop" in page.dom(f"{row}.textContent")
    page.watch(SESSION)

    app.send("console", level="warn", args=["cart is empty", "3"])
    app.send("navigation", url="http://127.0.0.1/shop/cart", previousUrl="http://127.0.0.1/shop", trigger="pushstate")
    app.send("network_request", requestId="n1", method="POST", url="http://127.0.0.1/api/cart", initiator="fetch")
    app.send("network_response", requestId="n1", status=201, statusText="Created", duration=12, ok=True)
    app.send("error", errorType="runtime", message="x is not defined", filename="app.js", lineno=3, colno=7)
    app.send("dom_mutations", batchId="b1", mutations=[{"mutationType": "childList", "targetSelector": "#list"},
                                                       {"mutationType": "attributes", "targetSelector": "#a"}])
    wait_until(lambda: any(t.startswith("dom_mutations") for t in page.stream_texts()), 10)
    texts = page.stream_texts()
    assert any(t.startswith("console") and "warn: cart is empty 3" in t for t in texts), texts
    assert any(t.startswith("navigation") and "pushstate http://127.0.0.1/shop/cart" in t for t in texts)
    assert any(t.startswith("network_request") and "POST http://127.0.0.1/api/cart" in t for t in texts)
    # The response is named after its request.
    assert any(t.startswith("network_response") and "POST http://127.0.0.1/api/cart → 201 Created" in t
               for t in texts)
    assert any(t.startswith("error") and "runtime: x is not defined (app.js:3:7)" in t for t in texts)
    assert any("2 mutations (childList 1, attributes 1)" in t for t in texts)
    # Newest first.
    assert texts[0].startswith("dom_mutations")

    # The filter keeps one kind; the others stay, hidden.
    page.select("#debug-filter", "network")
    assert {t.split(" ")[0] for t in page.stream_texts(visible_only=True)} == {"network_request", "network_response"}
    page.select("#debug-filter", "all")
    assert len(page.stream_texts(visible_only=True)) == len(page.stream_texts())

    # Clicking a row shows the whole message.
    page.click('#debug-stream li[data-type="error"]')
    detail = page.dom("document.querySelector('#debug-stream li[data-type=\"error\"] pre').textContent")
    assert json.loads(detail)["lineno"] == 3


def test_a_command_from_the_box_reaches_the_app_and_its_answer_shows(server, app, tab):
    page = Page(tab, base(server))
    page.watch(SESSION)
    page.fill("#debug-command", '{"type": "click", "target": {"stableId": "e3"}}')
    page.click("#debug-send")
    cmd = app.recv_until(lambda m: m["type"] == "click")
    assert cmd["target"] == {"stableId": "e3"} and cmd["requestId"]
    app.send("command_result", requestId=cmd["requestId"], requestType="click", success=True,
             result={"clicked": "Add to cart"}, duration=4)
    wait_until(lambda: page.dom("document.getElementById('debug-answer').dataset.status") == "ok", 10)
    answer = json.loads(page.dom("document.getElementById('debug-answer').textContent"))
    assert answer["success"] is True and answer["result"] == {"clicked": "Add to cart"}
    # The stream shows the command going out and its result coming back.
    wait_until(lambda: any(t.startswith("command_result") and "click ok" in t for t in page.stream_texts()), 10)
    assert any(t.startswith("click") and "#e3" in t for t in page.stream_texts())

    # A failure from the app is shown as one.
    page.fill("#debug-command", '{"type": "click", "target": {"stableId": "gone"}}')
    page.click("#debug-send")
    cmd = app.recv_until(lambda m: m["type"] == "click")
    app.send("command_result", requestId=cmd["requestId"], requestType="click", success=False,
             error={"code": "TARGET_NOT_FOUND", "message": "no element gone"}, duration=1)
    wait_until(lambda: page.dom("document.getElementById('debug-answer').dataset.status") == "bad", 10)
    assert "TARGET_NOT_FOUND" in page.dom("document.getElementById('debug-answer').textContent")

    # Bad input is refused on the page, with what a command looks like.
    page.fill("#debug-command", "{click e3")
    page.click("#debug-send")
    assert "not JSON" in page.dom("document.getElementById('debug-answer').textContent")
    # A command the server refuses shows its error.
    page.fill("#debug-command", '{"type": "explode"}')
    page.click("#debug-send")
    wait_until(lambda: "400" in (page.dom("document.getElementById('debug-answer').textContent") or ""), 10)


def test_pause_holds_messages_clear_empties_and_content_stays_text(server, app, tab):
    page = Page(tab, base(server))
    page.watch(SESSION)
    app.send("console", level="log", args=["before pause"])
    wait_until(lambda: any("before pause" in t for t in page.stream_texts()), 10)

    page.click("#debug-pause")
    app.send("console", level="log", args=["while paused"])
    wait_until(lambda: "1 waiting" in page.dom("document.getElementById('debug-count').textContent"), 10)
    assert not any("while paused" in t for t in page.stream_texts())
    page.click("#debug-pause")
    assert any("while paused" in t for t in page.stream_texts())

    page.click("#debug-clear")
    assert page.stream_texts() == []

    # Message content is text, never markup.
    app.send("console", level="error", args=['<img src=x onerror="window.pwned=1">'])
    wait_until(lambda: any("<img src=x" in t for t in page.stream_texts()), 10)
    assert page.dom("document.querySelectorAll('#debug-stream img').length") == 0
    assert page.dom("window.pwned === undefined")


def test_the_stream_stays_bounded_in_the_page(server, app, tab):
    page = Page(tab, base(server))
    page.watch(SESSION)
    for i in range(650):
        app.send("console", level="log", args=[f"line {i}"])
    wait_until(lambda: any(t.endswith("log: line 649") for t in page.stream_texts()[:1]), 20, 0.1)
    texts = page.stream_texts()
    assert len(texts) == 500
    assert not any(t.endswith("log: line 0") for t in texts)


def test_new_session_button_creates_one_to_join(server, tab):
    page = Page(tab, base(server))
    before = {s["sessionId"] for s in requests.get(base(server) + "/debug/sessions", timeout=5,
                                                   headers={"Authorization": f"Bearer {TOKEN}"}).json()["sessions"]}
    page.click("#debug-new")
    wait_until(lambda: page.dom("document.getElementById('debug-state').textContent") == "live", 10)
    after = {s["sessionId"] for s in requests.get(base(server) + "/debug/sessions", timeout=5,
                                                  headers={"Authorization": f"Bearer {TOKEN}"}).json()["sessions"]}
    (new,) = after - before
    assert page.dom("document.getElementById('debug-selected').textContent") == new
    assert f"/debug/sdk.js?sessionId={new}" in page.dom("document.getElementById('debug-join').textContent")


def test_an_ended_session_leaves_the_table_and_the_stream_says_so(server, app, tab):
    page = Page(tab, base(server))
    page.watch(SESSION)
    r = requests.delete(f"{base(server)}/debug/sessions/{SESSION}", timeout=5,
                        headers={"Authorization": f"Bearer {TOKEN}"})
    assert r.status_code == 200
    wait_until(lambda: page.dom("document.getElementById('debug-state').textContent") == "session ended", 15)
    wait_until(lambda: page.dom(f"!document.querySelector('#debug-sessions tr[data-session-id=\"{SESSION}\"]')"), 10)


@pytest.mark.e2e
def test_a_tabs_debug_button_shows_that_tabs_console_and_runs_commands(server_process, site, tab):
    """Through ``pinchtab server``: the Debug button of a listed tab, then the tab's own telemetry."""
    server = server_process(token=TOKEN)
    health = server.wait_ready()
    instance = health["defaultInstance"]["id"]
    opened = server.post(f"/instances/{instance}/tabs/open", json={"url": site.url("counter.html")})
    assert opened.status_code in (200, 201), opened.text
    tab_id = opened.json()["tabId"]

    page = Page(tab, server.base)
    button = f'#instances figure[data-tab-id="{tab_id}"] button[data-action=debug]'
    wait_until(lambda: page.dom(f"!!document.querySelector('{button}')"), 20, 0.1)
    page.click(button)
    wait_until(lambda: page.dom("document.getElementById('debug-state').textContent") == "live", 20, 0.1)
    session_id = page.dom("document.getElementById('debug-selected').textContent")
    sessions = server.get("/debug/sessions").json()["sessions"]
    assert any(s["sessionId"] == session_id and s.get("tabId") == tab_id for s in sessions), sessions

    # What the tab does shows up: its navigation, then what its page logs while loading.
    assert server.post(f"/tabs/{tab_id}/navigate", json={"url": site.url("reads_logs.html")}).status_code == 200
    wait_until(lambda: any(t.startswith("console") and "page loaded 42" in t for t in page.stream_texts()), 20, 0.1)
    wait_until(lambda: any(t.startswith("navigation") and "reads_logs.html" in t for t in page.stream_texts()), 10, 0.1)

    # A command from the box runs in the tab.
    page.fill("#debug-command", '{"type": "click", "target": {"selector": "#more"}}')
    page.click("#debug-send")
    wait_until(lambda: page.dom("document.getElementById('debug-answer').dataset.status") == "ok", 20, 0.1)
    wait_until(lambda: any(t.startswith("console") and "clicked 1" in t for t in page.stream_texts()), 20, 0.1)
