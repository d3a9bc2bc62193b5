"""``pinchtab bridge --extension``: the whole browser API on a real Chromium, through our extension.

Chromium loads our extension (``support/extension_browser.py``); Pinchtab reaches it only through
the extension's relay, never through a debugging port.
"""
from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
import websocket
from support.agent import compact, nav, ref_of, text
from support.config import make_config
from support.extension_browser import ExtensionBridge, ExtensionBrowser
from support.servers import BridgeProcess
from support.waits import wait_until

from app.extension.bridge import ExtensionServer, create_extension_app
from app.extension.commands import CommandQueue
from app.extension.relay import Relay
from bench.processes import free_port
from cdp.errors import CDPError
from cdp.extension_transport import METHOD_NOT_FOUND


@pytest.fixture(scope="module")
def chrome() -> Iterator[ExtensionBrowser]:
    c = ExtensionBrowser().start()
    yield c
    c.stop()


@pytest.fixture(scope="module")
def bridge(chrome: ExtensionBrowser, tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtensionBridge]:
    b = ExtensionBridge(tmp_path_factory.mktemp("ext-bridge"), chrome).connect()
    yield b
    b.stop()


def log_in(client: Any, site: Any) -> str:
    """Sign in on the test site through snapshots and refs; returns the tab's id."""
    tab = nav(client, site.url("login.html"))["tabId"]
    snap = compact(client)
    r = client.post("/action", json={"kind": "fill", "ref": ref_of(snap, "textbox", "Username"), "text": "agent"})
    assert r.status_code == 200, r.json
    client.post("/action", json={"kind": "type", "ref": ref_of(snap, "textbox", "Password"), "text": "s3cret"})
    r = client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Sign in"), "waitNav": True})
    assert r.status_code == 200 and r.json["result"] == {"clicked": True, "navigated": True}, r.json
    return tab


# --- the relay's door ---------------------------------------------------------------------------
def relay_socket(bridge: ExtensionBridge, origin: str | None) -> websocket.WebSocket:
    url = bridge.url.replace("http", "ws") + "/extension/relay"
    kwargs: dict[str, Any] = {"origin": origin} if origin else {"suppress_origin": True}
    return websocket.create_connection(url, timeout=5, **kwargs)


def test_info_is_public_and_says_an_extension_is_connected(bridge):
    info = requests.get(f"{bridge.url}/extension/info", timeout=5).json()
    assert info["pinchtab"] is True and info["mode"] == "extension" and info["connected"] is True
    assert "pairing" not in json.dumps(info)


def test_the_relay_refuses_web_pages_and_wrong_pairing(bridge):
    with pytest.raises(websocket.WebSocketBadStatusException) as refused:
        relay_socket(bridge, "http://127.0.0.1:1234")
    assert refused.value.status_code == 403
    ws = relay_socket(bridge, "chrome-extension://abcdefghijklmnopabcdefghijklmnop")
    ws.send(json.dumps({"type": "hello", "pairing": "not-the-token"}))
    opcode, payload = ws.recv_data(control_frame=True)
    assert opcode == websocket.ABNF.OPCODE_CLOSE and int.from_bytes(payload[:2], "big") == 4001
    assert bridge.relay.link is not None and bridge.relay.link.closed is None  # the real extension stays


def test_the_relay_honours_extension_allowed_ids_as_the_polling_side_does(tmp_path):
    ours, stranger = "a" * 32, "b" * 32
    relay = Relay("s3cret-pairing")
    relay.commands = CommandQueue(timeout_s=5)
    config = make_config(tmp_path, **{"extension.allowedIds": [ours]})
    with ExtensionServer(create_extension_app(relay, config), 0) as server:
        base = f"127.0.0.1:{server.port}"
        for path, code in (("/extension/relay", "origin_not_allowed"), ("/commands", "origin_not_allowed")):
            with pytest.raises(websocket.WebSocketBadStatusException) as refused:
                websocket.create_connection(f"ws://{base}{path}", timeout=5, origin=f"chrome-extension://{stranger}")
            assert refused.value.status_code == 403 and json.loads(refused.value.resp_body)["code"] == code, path
        answer = requests.post(f"http://{base}/response", data="{}", timeout=5,
                               headers={"Origin": f"chrome-extension://{stranger}", "Sec-Fetch-Site": "none"})
        assert answer.status_code == 403 and answer.json()["code"] == "origin_not_allowed"   # the same policy
        ws = websocket.create_connection(f"ws://{base}/extension/relay", timeout=5, origin=f"chrome-extension://{ours}")
        try:
            ws.send(json.dumps({"type": "hello", "pairing": "s3cret-pairing", "extensionId": ours}))
            assert json.loads(ws.recv()) == {"type": "welcome"}
            wait_until(lambda: relay.link is not None and relay.link.extension_id == ours)
        finally:
            ws.close()
        wait_until(lambda: relay.link is None)


# --- the API through the relay -------------------------------------------------------------------
def test_log_in_through_the_extension_with_refs(bridge, site):
    client = bridge.client()
    tab = log_in(client, site)
    assert tab.startswith("tab-")
    assert client.get("/text").json["title"] == "Welcome"
    assert "Welcome, agent" in text(client)
    assert client.post("/action", json={"kind": "click", "ref": ref_of(compact(client), "link", "Orders"),
                                        "waitNav": True}).status_code == 200
    assert client.get("/text").json["title"] == "Orders"
    assert client.get("/screenshot").status_code == 200
    assert tab in [t["id"] for t in client.get("/tabs").json["tabs"]]


def test_two_agents_drive_two_tabs_at_once(bridge, site):
    results: dict[str, Any] = {}

    def agent(name: str) -> None:
        try:
            client = bridge.client(agent=name)
            tab = log_in(client, site)
            results[name] = (tab, text(client))
        except BaseException as exc:  # reported below, on the test's thread
            results[name] = exc

    threads = [threading.Thread(target=agent, args=(n,), name=f"agent-{n}") for n in ("a", "b")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    for name in ("a", "b"):
        assert not isinstance(results.get(name), BaseException), results.get(name)
    (tab_a, text_a), (tab_b, text_b) = results["a"], results["b"]
    assert tab_a != tab_b and "Welcome, agent" in text_a and "Welcome, agent" in text_b


def test_a_cross_site_iframe_is_driven_through_its_child_session(bridge, site, site2):
    client = bridge.client(agent="frames")
    nav(client, site.url("xorigin.html") + f"?card=http://localhost:{site2.port}", waitFor="load", newTab=True)
    wait_until(lambda: " button Pay\n" in compact(client), 10)
    snap = compact(client)
    client.post("/action", json={"kind": "type", "ref": ref_of(snap, "textbox", "Card number"),
                                 "text": "4242 4242 4242 4242"})
    client.post("/action", json={"kind": "fill", "ref": ref_of(snap, "textbox", "Expiry"), "text": "12/30"})
    assert client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Pay")}).status_code == 200
    wait_until(lambda: "paid with card ending 4242" in text(client, mode="raw"), 10)


def test_a_tab_the_person_closes_is_gone_for_the_agent(bridge, site, chrome):
    client = bridge.client(agent="closer")
    tab = nav(client, site.url("form.html"), newTab=True)["tabId"]
    chrome.evaluate(f"chrome.tabs.remove({tab.removeprefix('tab-')}).then(() => true)")
    wait_until(lambda: tab not in [t["id"] for t in client.get("/tabs").json["tabs"]], 10)
    r = client.get(f"/text?tabId={tab}")
    assert r.status_code == 404 and r.json["code"] == "tab_not_found"


def test_a_detached_debugger_answers_409_with_the_reason_and_is_not_reattached(bridge, site, chrome):
    client = bridge.client(agent="detach")
    tab = nav(client, site.url("form.html"))["tabId"]
    chrome_tab = int(tab.removeprefix("tab-"))
    # The person's side: the debugger goes away (as when the banner's Cancel is clicked).
    chrome.evaluate(f"chrome.debugger.detach({{tabId: {chrome_tab}}}).then(() => true)")
    for _ in range(2):  # the command that notices, and the next one: no silent re-attach
        r = client.get(f"/text?tabId={tab}")
        assert r.status_code == 409, r.json
        assert r.json["code"] == "debugger_detached" and "detached" in r.json["error"]
    # A new tab works.
    assert nav(client, site.url("table.html"), newTab=True)["title"] == "Orders"


def test_browser_level_methods_the_relay_lacks_answer_with_an_error_at_once(bridge):
    conn = bridge.app.extensions["pinchtab"].ensure().conn
    with pytest.raises(CDPError) as err:
        conn.call("SystemInfo.getInfo", timeout_s=5)
    assert err.value.code == METHOD_NOT_FOUND and "extension relay" in err.value.cdp_message
    with pytest.raises(CDPError, match="Session with given id not found"):
        conn.call("Runtime.evaluate", {"expression": "1"}, session_id="no-such-session", timeout_s=5)


def test_when_the_extension_goes_away_commands_fail_fast_with_503_then_recover(bridge, site, chrome):
    client = bridge.client(agent="gone")
    tab = nav(client, site.url("form.html"))["tabId"]
    in_flight: dict[str, Any] = {}

    def slow() -> None:  # a navigation the server holds for 8 s: it must not wait that long
        started = time.monotonic()
        r = bridge.client(agent="gone").post("/navigate", json={"url": site.url("slow?ms=8000"), "tabId": tab})
        in_flight.update(status=r.status_code, took_s=time.monotonic() - started)

    t = threading.Thread(target=slow, name="slow-navigate")
    t.start()
    wait_until(lambda: bridge.relay.link.in_flight > 0, 5)  # the navigation is in the extension's hands
    chrome.configure("http://127.0.0.1:9", bridge.relay.pairing_token)  # nothing there: the socket closes
    wait_until(lambda: bridge.relay.link is None, 10)
    t.join(10)
    assert in_flight["status"] in (502, 503) and in_flight["took_s"] < 6, in_flight
    r = client.get("/text")
    assert r.status_code == 503 and "extension" in r.json["error"], r.json
    health = client.get("/health")
    assert health.status_code == 503 and "waiting for the extension" in health.json["reason"]
    bridge.connect()
    assert nav(client, site.url("table.html"))["title"] == "Orders"


@pytest.mark.e2e
def test_pinchtab_bridge_extension_serves_the_api_over_the_extension(tmp_path, site):
    ext_port = free_port()
    server = BridgeProcess(tmp_path, args=("--extension", "--extension-port", str(ext_port)))
    chrome = ExtensionBrowser().start()
    try:
        wait_until(lambda: _get(f"http://127.0.0.1:{ext_port}/extension/info") is not None, 20)
        health = wait_until(lambda: (_get(f"{server.base}/health") or {}).get("reason"), 10)
        assert "waiting for the extension" in health
        token = (tmp_path / ".pinchtab" / "extension-pairing").read_text().strip()
        chrome.configure(f"http://127.0.0.1:{ext_port}", token)
        server.wait_healthy(20)
        r = requests.post(f"{server.base}/navigate", json={"url": site.url("login.html")}, timeout=30)
        assert r.status_code == 200 and r.json()["title"] == "Sign in", r.text
        snap = requests.get(f"{server.base}/snapshot?filter=interactive&format=compact", timeout=30).text
        assert ref_of(snap, "textbox", "Username")
    finally:
        chrome.stop()
        server.stop()


def _get(url: str) -> Any:
    try:
        return requests.get(url, timeout=1).json()
    except (requests.RequestException, ValueError):
        return None


def test_the_debug_bridges_cdp_side_runs_on_an_extension_tab(bridge, site):
    from app.debug.hub import Peer

    client = bridge.client()
    tab = nav(client, site.url("sdk_app.html"))["tabId"]   # no SDK in the page: the bridge is its app
    made = client.post(f"/tabs/{tab}/debug", json={})
    assert made.status_code == 201, made.json
    hub = bridge.app.extensions["pinchtab.debug"]
    session = hub.get(made.json["sessionId"])
    got: list[dict[str, Any]] = []
    agent = Peer("agent", "ext-test", lambda text, msg: got.append(json.loads(text)))
    hub.join(session, agent)

    def command(type_: str, **fields: Any) -> None:
        hub.from_agent(session, agent, json.dumps({"protocolVersion": 1, "sessionId": session.id, "type": type_,
                                                   "requestId": f"{type_}-1", **fields}))

    def first(type_: str) -> dict[str, Any]:
        return wait_until(lambda: next((m for m in got if m.get("type") == type_), None), 10)

    try:
        assert first("hello")["url"] == site.url("sdk_app.html")
        command("click", target={"stableId": "log"})   # its data-testid; the page logs
        assert first("command_result")["success"] is True
        console = first("console")
        assert console["level"] == "log" and console["args"][0] == "hello from the page"
        command("request_ui_tree")
        items = first("ui_tree")["items"]
        assert items and all(item["stableId"].startswith("e") for item in items)
    finally:
        client.delete(f"/tabs/{tab}/debug")


def test_evaluate_runs_on_an_extension_tab_when_allowed(bridge, chrome, site, tmp_path):
    allowed = ExtensionBridge(tmp_path, chrome, **{"security.allowEvaluate": True}).connect()
    try:
        client = allowed.client()
        nav(client, site.url("form.html"))
        r = client.post("/evaluate", json={"expression": "document.title + ' ' + (6 * 7)"})
        assert r.status_code == 200 and r.json["result"] == "E2E Test - Form 42", r.json
    finally:
        allowed.stop()
        bridge.connect()   # the module's bridge gets the extension back
