"""The CDP side of the debug bridge: POST /tabs/{id}/debug makes the bridge the app of a real tab.

Real headless Chromium on pages served on 127.0.0.1; an in-memory agent joins the session and
sends commands through the hub, exactly as a WebSocket agent's frames arrive. Every message the
bridge emits is checked against the protocol's schemas.
"""
from __future__ import annotations

import base64
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.waits import wait_until

from app.debug import protocol
from app.debug.hub import Peer
from app.debug.tab_app import BINDING, HANDLE, WORLD

pytestmark = pytest.mark.timeout(60)


class Agent:
    """An agent in a tab's debug session: what it received, and commands it sends."""

    def __init__(self, app: Any, client: Any, tab_id: str, session_id: str, browser: Any) -> None:
        self.app, self.client, self.tab_id, self.session_id = app, client, tab_id, session_id
        self.tab = browser.tab(tab_id)
        self.tab_browser = browser
        self.hub = app.extensions["pinchtab.debug"]
        self.session = self.hub.get(session_id)
        self.messages: list[dict[str, Any]] = []
        self.invalid: list[tuple[dict[str, Any], dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.peer = Peer("agent", "test-agent", self._deliver)
        self.hub.join(self.session, self.peer)

    def _deliver(self, text: str, msg: dict[str, Any] | None) -> None:
        msg = msg if msg is not None else json.loads(text)
        errors = protocol.validate_message(msg)
        with self._lock:
            self.messages.append(msg)
            if errors:
                self.invalid.append((msg, errors))

    def of(self, type: str, pred: Callable[[dict[str, Any]], bool] = lambda m: True) -> list[dict[str, Any]]:
        with self._lock:
            return [m for m in self.messages if m.get("type") == type and pred(m)]

    def wait(self, type: str, pred: Callable[[dict[str, Any]], bool] = lambda m: True,
             timeout_s: float = 10.0) -> dict[str, Any]:
        return wait_until(lambda: next(iter(self.of(type, pred)), None), timeout_s)

    def send(self, type: str, **fields: Any) -> str:
        rid = f"r{next(self._ids)}"
        self.hub.from_agent(self.session, self.peer,
                            json.dumps(protocol.envelope(self.session_id, type, requestId=rid, **fields)))
        return rid

    def result(self, rid: str, timeout_s: float = 15.0) -> dict[str, Any]:
        return self.wait("command_result", lambda m: m["requestId"] == rid, timeout_s)

    def reply(self, type: str, rid: str, timeout_s: float = 15.0) -> dict[str, Any]:
        """A data reply (ui_tree, state_update, ...), or fail with the command_result that came instead."""
        def got() -> Any:
            data = self.of(type, lambda m: m.get("requestId") == rid)
            if data:
                return data[0]
            failed = self.of("command_result", lambda m: m["requestId"] == rid)
            assert not failed, failed
            return None
        return wait_until(got, timeout_s)

    def observer(self) -> Any:
        """``typeof`` the observer's handle in its isolated world (which the page cannot reach)."""
        def read() -> Any:
            ctx = self.tab.call("Page.createIsolatedWorld", {"frameId": self.tab.main_frame_id,
                                                             "worldName": WORLD})["executionContextId"]
            res = self.tab.call("Runtime.evaluate", {"expression": f"typeof globalThis.{HANDLE}", "contextId": ctx,
                                                     "returnByValue": True})
            return res["result"]["value"]
        return self.tab.run(read, 10)

    def page(self, expression: str) -> Any:
        """Run ``expression`` in the page's own world, as the app's own code would."""
        res = self.tab.run(lambda: self.tab.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                                      "awaitPromise": True}), 10)
        return (res.get("result") or {}).get("value")


@pytest.fixture
def debug(app_factory: Callable[..., Any], site: Any, browser: Any) -> Iterator[Callable[..., Agent]]:
    agents: list[Agent] = []

    def attach(page: str = "debug_app.html", *, own_session: bool = False, **overrides: Any) -> Agent:
        """Debug a new tab on ``page``: in a session the agent joined first (it sees everything
        from the start), or with ``own_session`` in the one the tab makes (the agent joins after)."""
        app = app_factory(**overrides)
        client = app.test_client()
        r = client.post("/navigate", json={"url": site.url(page)})
        assert r.status_code == 200, r.json
        tab_id = r.json["tabId"]
        if own_session:
            r = client.post(f"/tabs/{tab_id}/debug", json={})
            assert r.status_code == 201, r.json
            agent = Agent(app, client, tab_id, r.json["sessionId"], browser)
        else:
            sid = client.post("/debug/sessions").json["sessionId"]
            agent = Agent(app, client, tab_id, sid, browser)
            r = client.post(f"/tabs/{tab_id}/debug", json={"sessionId": sid})
            assert r.status_code == 201 and r.json["sessionId"] == sid, r.json
        agents.append(agent)
        return agent

    yield attach
    for agent in agents:
        assert not agent.invalid, agent.invalid  # every message the bridge sent conforms to the protocol
        agent.client.delete(f"/tabs/{agent.tab_id}/debug")


def test_attaching_greets_the_agent_and_hides_the_binding_from_the_page(debug, site):
    a = debug()
    hello = a.wait("hello")
    assert hello["url"] == site.url("debug_app.html") and hello["appName"] == "Debug App"
    assert "Chrome" in hello["userAgent"] and hello["viewport"]["width"] > 0
    caps = a.wait("capabilities")["capabilities"]
    assert {"console", "errors", "network", "navigation", "dom_mutations", "ui_tree", "dom_snapshot",
            "custom_state"} <= set(caps) and "eval" not in caps
    nav = a.wait("navigation")
    assert nav["trigger"] == "initial" and nav["url"] == site.url("debug_app.html")
    types = [m["type"] for m in a.messages if m["type"] != "connection_event"]
    assert types[:3] == ["hello", "capabilities", "navigation"]
    assert a.page(f"typeof window.{BINDING}") == "undefined"
    assert a.page("Object.keys(window).filter(k => k.toLowerCase().includes('pinchtabdebug')).length") == 0


def test_console_reports_every_level_with_readable_arguments(debug):
    a = debug()
    a.wait("navigation")
    a.page("console.log('plain', 42, true, null, undefined, {a: 1, b: [1, 'x']}, [3, 4]);"
           "console.info('note'); console.warn('careful'); console.error('bad'); console.debug('dbg');"
           "console.table([1])")
    logs = wait_until(lambda: (lambda c: c if len(c) >= 6 else None)(a.of("console")))
    assert logs[0]["level"] == "log"
    # From the event's own previews (no round trip): one level deep, as Chrome previews them.
    assert logs[0]["args"] == ["plain", "42", "true", "null", "undefined", '{"a":1,"b":Array(2)}', "[3,4]"]
    assert [(m["level"], m["args"]) for m in logs[1:5]] == [
        ("info", ["note"]), ("warn", ["careful"]), ("error", ["bad"]), ("debug", ["dbg"])]
    assert logs[5]["level"] == "log"  # console.table and the rest: "log"


def test_errors_and_unhandled_rejections_say_where_they_came_from(debug, site):
    a = debug()
    a.wait("navigation")
    a.page("boom(); rejectLater()")
    thrown = a.wait("error", lambda m: m["errorType"] == "runtime")
    assert thrown["message"] == "Error: boom in a timer"
    assert thrown["filename"] == site.url("debug_app.html")
    assert thrown["lineno"] == 20 and thrown["colno"] > 1
    assert "thrower" in thrown["stack"]
    rejected = a.wait("error", lambda m: m["errorType"] == "unhandledrejection")
    assert rejected["message"] == "Error: nobody caught me" and "rejectLater" in rejected["stack"]


def test_history_api_and_hash_changes_are_navigations_with_their_trigger(debug, site):
    a = debug()
    a.wait("navigation")
    a.page("history.pushState({}, '', '/step/1'); history.replaceState({}, '', '/step/2'); location.hash = 'top'")
    navs = wait_until(lambda: (lambda n: n if len(n) >= 4 else None)(a.of("navigation")))
    assert [(n["trigger"], n["url"], n.get("previousUrl")) for n in navs[1:4]] == [
        ("pushstate", site.url("step/1"), site.url("debug_app.html")),
        ("replacestate", site.url("step/2"), site.url("step/1")),
        ("hashchange", site.url("step/2#top"), site.url("step/2")),
    ]
    a.page("history.back()")
    back = a.wait("navigation", lambda m: m["trigger"] == "popstate")
    assert back["url"] == site.url("step/2") and back["previousUrl"] == site.url("step/2#top")


def test_fetch_and_xhr_are_reported_with_their_responses_and_failures(debug, site):
    a = debug()
    a.wait("navigation")
    a.page("fetch('/echo?x=1').then(r => r.text())")
    req = a.wait("network_request", lambda m: "/echo?x=1" in m["url"])
    assert req["method"] == "GET" and req["initiator"] == "fetch" and req["url"] == site.url("echo?x=1")
    res = a.wait("network_response", lambda m: m["requestId"] == req["requestId"])
    assert res["status"] == 200 and res["ok"] is True and res["duration"] >= 0
    a.page("new Promise(done => { const x = new XMLHttpRequest(); x.open('POST', '/nowhere.txt');"
           " x.onloadend = done; x.send('a=1'); })")
    xhr = a.wait("network_request", lambda m: m["initiator"] == "xhr")
    assert xhr["method"] == "POST" and xhr["body"] == "a=1"
    a.page("fetch('http://127.0.0.1:1/refused').catch(() => 0)")
    failed_req = a.wait("network_request", lambda m: m["url"].endswith("/refused"))
    failed = a.wait("network_response", lambda m: m["requestId"] == failed_req["requestId"])
    assert failed["status"] == 0 and failed["ok"] is False and failed["statusText"].startswith("net::ERR_")
    # Documents, scripts and images are the page's, not the app's requests: not reported.
    assert not a.of("network_request", lambda m: m["url"].endswith(".html"))


def test_dom_mutations_arrive_batched(debug):
    a = debug()
    a.wait("navigation")
    rid = a.send("click", target={"stableId": "add"})  # data-testid
    assert a.result(rid)["success"] is True
    batch = a.wait("dom_mutations", lambda m: any(x.get("addedNodes") for x in m["mutations"]))
    added = [n for m in batch["mutations"] for n in m.get("addedNodes", [])]
    assert [n["html"] for n in added if n["type"] == "element"] == ["<li>item 0</li>", "<li>item 1</li>",
                                                                   "<li>item 2</li>"]
    assert batch["mutations"][0]["targetSelector"] == "#list"
    a.page("document.body.setAttribute('data-mode', 'dark')")
    attr = a.wait("dom_mutations", lambda m: any(x.get("attributeName") == "data-mode" for x in m["mutations"]))
    assert attr["batchId"] > batch["batchId"]
    # A flood is capped per batch and the rest counted, not queued without end.
    a.page("for (let i = 0; i < 2000; i++) document.body.setAttribute('data-n', String(i))")
    flood = a.wait("dom_mutations", lambda m: m.get("dropped"))
    assert len(flood["mutations"]) == 500 and flood["dropped"] >= 1500


def test_mutations_of_a_background_tab_arrive_in_a_tenth_of_a_second(debug, browser):
    # Chrome runs a background tab's timers once a second: the batching must not rely on them.
    a = debug()
    a.wait("navigation")
    front = browser.new_tab()
    try:
        front.call("Page.bringToFront")
        def batches() -> int:
            return len(a.of("dom_mutations", lambda m: any(x.get("attributeName") == "data-bg"
                                                           for x in m["mutations"])))

        for n in range(3):
            before = batches()
            started = time.monotonic()
            a.page(f"document.body.setAttribute('data-bg', '{n}')")
            wait_until(lambda before=before: batches() > before, 5)
            assert time.monotonic() - started < 0.6
    finally:
        browser.close_tab(front.id)


def test_ui_tree_items_carry_our_refs_which_commands_accept(debug):
    a = debug()
    a.wait("navigation")
    tree = a.reply("ui_tree", a.send("request_ui_tree"))["items"]
    save = next(i for i in tree if i.get("text") == "Save")
    assert save["stableId"].startswith("e") and save["role"] == "button" and save["selector"] == "#save"
    assert save["visible"] is True and save["disabled"] is False and save["meta"]["tagName"] == "button"
    name = next(i for i in tree if i["meta"].get("name") == "name")
    assert name["meta"]["placeholder"] == "Your name" and name["role"] == "textbox"
    locked = next(i for i in tree if i.get("text") == "Locked")
    assert locked["disabled"] is True

    result = a.result(a.send("click", target={"stableId": save["stableId"]}))
    assert result["success"] is True and result["requestType"] == "click" and result["duration"] >= 0
    assert a.page("document.getElementById('status').textContent") == "saved 1"
    assert a.result(a.send("click", target={"text": "Save", "role": "button"}))["success"] is True
    assert a.page("window.saved") == 2

    refused = a.result(a.send("click", target={"stableId": locked["stableId"]}))
    assert refused["success"] is False and refused["error"]["code"] == "TARGET_DISABLED"
    assert a.page("window.lockedClicked") is None
    hidden = a.result(a.send("hover", target={"selector": "#ghost"}))
    assert hidden["error"]["code"] == "TARGET_NOT_VISIBLE"
    missing = a.result(a.send("click", target={"stableId": "no-such-thing"}))
    assert missing["error"]["code"] == "TARGET_NOT_FOUND"


def test_type_and_select_go_through_the_action_engine(debug):
    a = debug()
    a.wait("navigation")
    a.page("document.getElementById('name').value = 'old'")
    typed = a.result(a.send("type", target={"selector": "#name"}, text="Ada", options={"clear": True}))
    assert typed["success"] is True
    assert a.page("document.getElementById('name').value") == "Ada"
    assert a.page("document.getElementById('status').textContent") == "name=Ada"
    assert a.result(a.send("type", target={"stableId": "name"}, text="!", options={"delay": 5}))["success"]
    assert a.page("document.getElementById('name').value") == "Ada!"

    assert a.result(a.send("select", target={"stableId": "size"}, label="Large"))["success"] is True
    assert a.page("document.getElementById('size').value") == "l"
    assert a.result(a.send("select", target={"selector": "#size"}, index=1))["success"] is True
    assert a.page("document.getElementById('status').textContent") == "size=m"
    focus = a.result(a.send("focus", target={"selector": "#name"}))
    assert focus["success"] and a.page("document.activeElement.id") == "name"
    assert a.result(a.send("scroll", x=0, y=0))["success"] is True


def test_evaluate_is_refused_unless_the_bridge_allows_it(debug):
    a = debug()
    a.wait("navigation")
    refused = a.result(a.send("evaluate", code="1 + 1"))
    assert refused["success"] is False and refused["error"]["code"] == "EVAL_DISABLED"

    b = debug(**{"security.allowEvaluate": True})
    assert "eval" in b.wait("capabilities")["capabilities"]
    ok = b.result(b.send("evaluate", code="document.title + ' ' + (1 + 1)"))
    assert ok["success"] is True and ok["result"] == "Debug App 2"
    bad = b.result(b.send("evaluate", code="nope.nothing"))
    assert bad["success"] is False and bad["error"]["code"] == "EVAL_ERROR" and "nope" in bad["error"]["message"]


def test_request_state_reads_the_apps_state_and_the_standard_scopes(debug, site):
    a = debug()
    a.wait("navigation")
    cart = a.reply("state_update", a.send("request_state", scope="cart"))
    assert cart["scope"] == "cart" and cart["state"] == {"items": 2, "total": 19.5}
    rid = a.send("request_state")
    wait_until(lambda: len(a.of("state_update", lambda m: m.get("requestId") == rid)) >= 9)
    scopes = {m["scope"]: m["state"] for m in a.of("state_update", lambda m: m.get("requestId") == rid)}
    assert scopes["location"]["href"] == site.url("debug_app.html")
    assert scopes["user"] == {"name": "ada"} and scopes["viewport"]["innerWidth"] > 0
    assert {"cookies", "localStorage", "sessionStorage", "navigator", "screen"} <= set(scopes)


def test_screenshots_and_dom_snapshots_answer_with_their_data(debug):
    a = debug()
    a.wait("navigation")
    shot = a.reply("screenshot", a.send("request_screenshot"))
    png = base64.b64decode(shot["data"])
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and shot["width"] > 100 and shot["height"] > 100
    part = a.reply("screenshot", a.send("request_screenshot", selector="#save"))
    assert 0 < part["width"] < shot["width"]
    dom = a.reply("dom_snapshot", a.send("request_dom_snapshot"))
    assert "<h1>Debug app</h1>" in dom["html"]


def test_a_cross_site_frame_reports_and_obeys_like_the_page(debug, site2):
    frame_site = f"http://localhost:{site2.port}"  # another site: Chrome runs it out of process
    a = debug("debug_frame.html?frame=" + frame_site)
    a.wait("navigation")

    def pay_button() -> Any:
        items = a.reply("ui_tree", a.send("request_ui_tree"))["items"]
        return next((i for i in items if i.get("text") == "Pay"), None)

    pay = wait_until(pay_button)
    assert a.result(a.send("click", target={"stableId": pay["stableId"]}))["success"] is True
    logged = a.wait("console", lambda m: m["args"][:1] == ["paid in frame"])
    assert logged["level"] == "warn" and logged["args"] == ["paid in frame", "7"]
    thrown = a.wait("error", lambda m: "frame boom" in m["message"])
    assert thrown["filename"] == f"{frame_site}/debug_inner.html" and thrown["lineno"] == 4


def test_a_new_document_says_hello_again(debug, site):
    a = debug()
    a.wait("navigation")
    nav = a.result(a.send("navigate", url=site.url("form.html")))
    assert nav["success"] is True
    hello = a.wait("hello", lambda m: m["url"] == site.url("form.html"))
    assert hello["appName"] == "E2E Test - Form"
    initial = a.wait("navigation", lambda m: m["url"] == site.url("form.html"))
    assert initial["trigger"] == "initial" and initial["previousUrl"] == site.url("debug_app.html")
    assert a.page(f"typeof window.{BINDING}") == "undefined"
    a.page("document.body.appendChild(document.createElement('hr'))")  # the observer follows the new page
    a.wait("dom_mutations", lambda m: any(n.get("tagName") == "hr" for x in m["mutations"]
                                          for n in x.get("addedNodes", [])))
    bad = a.result(a.send("navigate", url="javascript:alert(1)"))
    assert bad["success"] is False and bad["error"]["code"] == "INVALID_COMMAND"
    broken = a.result(a.send("navigate", url="http://[::1"))   # a URL the parser itself refuses
    assert broken["success"] is False and broken["error"]["code"] == "INVALID_COMMAND"


def test_detaching_leaves_the_tab_as_it_was(debug):
    a = debug(own_session=True)
    assert a.wait("hello") and a.wait("capabilities")  # replayed to an agent that joins late
    assert a.observer() == "object"
    r = a.client.delete(f"/tabs/{a.tab_id}/debug")
    assert r.status_code == 200 and r.json == {"detached": True, "tabId": a.tab_id}
    count = len(a.messages)
    a.page("console.log('after'); addItems(2); history.pushState({}, '', '/later')")
    # The same console line reaches the tab's own log, so it has been processed: nothing was emitted.
    wait_until(lambda: any(e["message"] == "after" for e in a.client.get(f"/tabs/{a.tab_id}/console").json["console"]))
    a.page("new Promise(r => setTimeout(r, 150))")  # past a mutation batch's 100 ms
    assert a.client.get(f"/tabs/{a.tab_id}/snapshot").status_code == 200
    assert len(a.messages) == count
    assert a.hub.get(a.session_id) is None
    assert a.client.delete(f"/tabs/{a.tab_id}/debug").status_code == 404
    assert a.page(f"typeof window.{BINDING}") == "undefined"
    assert a.observer() == "undefined"  # disconnected and dropped from its world

    # Attached again to the same document: one observer, as fresh as the first.
    sid = a.client.post("/debug/sessions").json["sessionId"]
    again = Agent(a.app, a.client, a.tab_id, sid, a.tab_browser)
    assert a.client.post(f"/tabs/{a.tab_id}/debug", json={"sessionId": sid}).status_code == 201
    again.wait("navigation")
    again.page("addItems(1)")
    again.wait("dom_mutations")
    again.page("new Promise(r => setTimeout(r, 150))")  # a second observer's batch would be in by now
    assert len(again.of("dom_mutations")) == 1 and not again.invalid
    a.client.delete(f"/tabs/{a.tab_id}/debug")


def test_closing_the_tab_ends_its_session(debug, browser):
    a = debug(own_session=True)
    a.wait("capabilities")
    browser.close_tab(a.tab_id)
    wait_until(lambda: a.hub.get(a.session_id) is None)


def test_console_previews_read_like_the_sdks_strings():
    from app.debug.previews import console_args, describe

    assert describe({"type": "number", "unserializableValue": "NaN"}) == "NaN"
    assert describe({"type": "bigint", "unserializableValue": "12n"}) == "12n"
    assert describe({"type": "number", "value": 1.5}) == "1.5"
    assert describe({"type": "function", "description": "function f() {}"}) == "function f() {}"
    err = {"type": "object", "subtype": "error", "description": "Error: no\n    at f (x.js:1:2)"}
    assert describe(err).startswith("Error: no\n    at f")
    cut = {"type": "object", "preview": {"type": "object", "overflow": True, "properties": [
        {"name": "s", "type": "string", "value": 'say "hi"'}, {"name": "n", "type": "object", "subtype": "null",
                                                              "value": "null"}]}}
    assert describe(cut) == '{"s":"say \\"hi\\"","n":null,…}'
    long = console_args([{"type": "string", "value": "x" * 1500}] * 12)
    assert len(long) == 10 and long[0] == "x" * 1000 + "..."
