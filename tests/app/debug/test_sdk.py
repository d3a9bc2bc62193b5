"""The page SDKs in a real Chromium against our servers: the npm ``debug-bridge-browser`` unchanged,
and our own ``/debug/sdk.js``, each joined to a session that an in-process agent watches and drives.

The agent connects first, then the page loads; what the agent sees is what a coding agent would.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from support.config import make_config
from support.debug_pages import Agent, AppServer, DebugPages
from support.waits import wait_until

from app.debug import protocol
from app.debug.standalone import StandaloneServer
from cdp.navigation import navigate, reload

SESSION = "sdk-test-session"
GREETING = ["hello", "capabilities", "dom_snapshot", "ui_tree", "state_update", "navigation"]
SDKS = ["npm", "ours"]


@pytest.fixture
def agents() -> Iterator[list[Agent]]:
    opened: list[Agent] = []
    yield opened
    for a in opened:
        a.close()


def page_url(pages: DebugPages, sdk: str, ws_url: str, sdk_url: str, session: str, path: str = "sdk_app.html") -> str:
    """The test page with the npm SDK (told the WebSocket URL) or ours (by script tag, it finds its way)."""
    if sdk == "npm":
        return pages.url(f"{path}?sdk=npm&url={quote(ws_url, safe='')}&session={quote(session)}")
    return pages.url(f"{path}?sdk={quote(sdk_url, safe='')}")


def standalone_urls(srv: StandaloneServer) -> tuple[str, str]:
    return (f"{srv.url}?role=app&sessionId={SESSION}",
            f"http://127.0.0.1:{srv.port}/debug/sdk.js?sessionId={SESSION}")


def page_eval(tab: Any, expression: str) -> Any:
    """Evaluate in the page's own world (where the SDK's hooks are)."""
    res = tab.call("Runtime.evaluate", {"expression": expression, "returnByValue": True})
    return (res.get("result") or {}).get("value")


def app_messages(agent: Agent) -> list[dict[str, Any]]:
    return [m for m in agent.messages if m.get("type") in protocol.APP_MESSAGES]


def check_greeting(agent: Agent) -> None:
    """hello, capabilities, dom_snapshot, ui_tree, a state_update per custom scope, navigation initial."""
    nav = agent.wait_for(lambda m: m.get("type") == "navigation", 10)
    assert nav["trigger"] == "initial" and "sdk_app.html" in nav["url"]
    greeting = app_messages(agent)[:len(GREETING)]
    assert [m["type"] for m in greeting] == GREETING
    hello, caps, snap, tree, state, _ = greeting
    assert hello["url"].startswith("http://127.0.0.1") and hello["viewport"]["width"] > 0 and hello["userAgent"]
    assert {"console", "errors", "ui_tree", "custom_state", "navigation"} <= set(caps["capabilities"])
    assert "eval" not in caps["capabilities"]
    assert 'data-testid="inc"' in snap["html"]
    inc = next(i for i in tree["items"] if i["stableId"] == "inc")
    assert inc["role"] == "button" and inc["text"] == "Add one" and inc["visible"] and not inc["disabled"]
    assert state["scope"] == "counter" and state["state"] == {"count": 0}


def drive(agent: Agent, tab: Any, sdk: str) -> None:
    """What an agent does with a live page: read, click, watch console and errors, ask for state."""
    check_greeting(agent)
    rid = agent.send("click", target={"stableId": "log"})
    result = agent.reply(rid)
    assert result["type"] == "command_result" and result["success"] and result["requestType"] == "click"
    line = agent.wait_for(lambda m: m.get("type") == "console" and m["args"][0] == "hello from the page")
    assert line["level"] == "log" and line["args"][1] == '{"count":0}'

    assert agent.reply(agent.send("click", target={"text": "Throw"}))["success"]
    err = agent.wait_for(lambda m: m.get("type") == "error")
    assert err["errorType"] == "runtime" and "boom from the page" in err["message"]

    page_eval(tab, "Promise.reject(new Error('nobody caught me')); 0")
    err = agent.wait_for(lambda m: m.get("type") == "error" and m["errorType"] == "unhandledrejection")
    assert err["message"] == "nobody caught me" and "Error" in err["stack"]

    assert agent.reply(agent.send("click", target={"selector": "button[data-testid=inc]"}))["success"]
    batch = agent.wait_for(lambda m: m.get("type") == "dom_mutations")
    assert any(x["mutationType"] == "childList" and x["targetSelector"] == "h1" for x in batch["mutations"])
    agent.send("request_state", scope="counter")
    state = agent.wait_for(lambda m: m.get("type") == "state_update" and m["scope"] == "counter" and
                           m["state"]["count"] == 1)
    # Ours names the request it answers; the npm SDK's state_update carries no requestId.
    assert state["sessionId"] == SESSION and ("requestId" in state) == (sdk == "ours")

    missing = agent.reply(agent.send("click", target={"stableId": "nope"}))
    assert not missing["success"] and missing["error"]["code"] == "TARGET_NOT_FOUND"
    refused = agent.reply(agent.send("evaluate", code="1 + 1"))
    assert not refused["success"] and refused["error"]["code"] == "EVAL_DISABLED"

    rid = agent.send("request_ui_tree")
    tree = agent.reply(rid)
    assert tree["type"] == "ui_tree" and any(i["stableId"] == "name" for i in tree["items"])

    assert agent.reply(agent.send("click", target={"stableId": "fetch"}))["success"]
    req = agent.wait_for(lambda m: m.get("type") == "network_request" and "probe=1" in m["url"])
    assert req["method"] == "GET" and req["initiator"] == "fetch"
    res = agent.wait_for(lambda m: m.get("type") == "network_response" and m["requestId"] == req["requestId"])
    assert res["status"] == 200 and res["ok"] and "SDK test app" in res["body"]

    page_eval(tab, "history.pushState({}, '', '#step-2'); 0")
    moved = agent.wait_for(lambda m: m.get("type") == "navigation" and m["trigger"] == "pushstate")
    assert moved["url"].endswith("#step-2") and "#" not in moved["previousUrl"]

    # navigate answers before the page goes; the new page says hello again.
    mark = len(agent.messages)
    target = page_eval(tab, "location.href.replace('#step-2', '') + '&again=1'")
    assert agent.reply(agent.send("navigate", url=target))["success"]
    agent.wait_for(lambda m: m.get("type") == "hello" and m["url"] == target, 10, after=mark)

    # What the SDK sent conforms to the protocol's schemas, field by field.
    bad = {m["type"]: protocol.validate_message(m) for m in app_messages(agent) if protocol.validate_message(m)}
    assert bad == {}


@pytest.mark.parametrize("sdk", SDKS)
def test_an_sdk_talks_to_the_standalone_server(sdk: str, pages: DebugPages, standalone: StandaloneServer,
                                              agents: list[Agent], tab: Any) -> None:
    agents.append(agent := Agent(f"{standalone.url}?role=agent&sessionId={SESSION}", SESSION))
    ws_url, sdk_url = standalone_urls(standalone)
    navigate(tab, page_url(pages, sdk, ws_url, sdk_url, SESSION), timeout_s=10)
    agent.wait_for(lambda m: m.get("event") == "app_connected", 10)
    drive(agent, tab, sdk)
    assert standalone.session.invalid == 0
    if sdk == "npm":   # it carries html2canvas; its picture is a data URL, not the bare base64 of the protocol page
        shot = agent.reply(agent.send("request_screenshot"), 15)
        assert shot["type"] == "screenshot" and shot["data"].startswith("data:image/png;base64,") and shot["width"] > 0


@pytest.mark.parametrize("sdk", SDKS)
def test_an_sdk_joins_a_bridge_hosted_session(sdk: str, pages: DebugPages, app_factory: Any,
                                             agents: list[Agent], tab: Any) -> None:
    server = AppServer(app_factory())
    try:
        created = requests.post(server.url("/debug/sessions"), timeout=5)
        assert created.status_code == 201, created.text
        info = created.json()
        agents.append(agent := Agent(info["agentUrl"], info["sessionId"]))
        navigate(tab, page_url(pages, sdk, info["appUrl"], info["sdkUrl"], info["sessionId"]), timeout_s=10)
        agent.wait_for(lambda m: m.get("event") == "app_connected", 10)
        check_greeting(agent)
        assert agent.reply(agent.send("click", target={"stableId": "log"}))["success"]
        agent.wait_for(lambda m: m.get("type") == "console" and m["args"][0] == "hello from the page")
        listed = requests.get(server.url(f"/debug/sessions/{info['sessionId']}"), timeout=5).json()
        assert listed["apps"] and "sdk_app.html" in listed["apps"][0]["url"]
    finally:
        server.stop()


def test_a_caller_without_a_websocket_gets_the_pages_answer(pages: DebugPages, app_factory: Any, tab: Any) -> None:
    server = AppServer(app_factory())
    try:
        info = requests.post(server.url("/debug/sessions"), timeout=5).json()
        navigate(tab, page_url(pages, "ours", info["appUrl"], info["sdkUrl"], info["sessionId"]), timeout_s=10)
        commands = server.url(f"/debug/sessions/{info['sessionId']}/commands")
        # The page may still be greeting: a command before it joined is refused with 409, not lost.
        r = wait_until(lambda: (r := requests.post(commands, json={"type": "click", "target": {"stableId": "inc"},
                                                                   "timeout": 5}, timeout=10)).status_code != 409 and r)
        assert r.status_code == 200, r.text
        assert r.json()["requestType"] == "click" and r.json()["success"] is True, r.text
        assert page_eval(tab, "count") == 1
        r = requests.post(commands, json={"type": "request_ui_tree", "timeout": 5}, timeout=10)
        assert r.json()["type"] == "ui_tree" and any(i["stableId"] == "inc" for i in r.json()["items"]), r.text
    finally:
        server.stop()


def test_our_sdk_refuses_disabled_targets_and_evaluates_when_allowed(pages: DebugPages, standalone: StandaloneServer,
                                                                     agents: list[Agent], tab: Any) -> None:
    agents.append(agent := Agent(f"{standalone.url}?role=agent&sessionId={SESSION}", SESSION))
    ws_url, sdk_url = standalone_urls(standalone)
    navigate(tab, page_url(pages, "ours", ws_url, sdk_url, SESSION), timeout_s=10)
    check_greeting(agent)
    off = agent.reply(agent.send("click", target={"stableId": "off"}))
    assert off["error"]["code"] == "TARGET_DISABLED" and page_eval(tab, "count") == 0
    typed = agent.reply(agent.send("type", target={"stableId": "name"}, text="Ada", options={"clear": True}))
    assert typed["success"] and page_eval(tab, "document.querySelector('[data-testid=name]').value") == "Ada"
    # A screenshot needs html2canvas, which our SDK does not carry: a clear error, not silence.
    shot = agent.reply(agent.send("request_screenshot"))
    assert shot["type"] == "command_result" and not shot["success"] and "html2canvas" in shot["error"]["message"]
    # Its own console use never reaches the agent, and a page that logs itself in a loop is not a loop.
    page_eval(tab, "console.log({toJSON() { console.log('inner'); return 'outer'; }})")
    agent.wait_for(lambda m: m.get("type") == "console" and m["args"] == ['"outer"'])
    assert not [m for m in agent.of_type("console") if m["args"] == ["inner"]]
    # Eval is on only when the app says so.
    page_eval(tab, "PinchtabDebug.bridge.disconnect(); window.b2 = PinchtabDebug.createDebugBridge("
                   f"{{url: {ws_url!r}, sessionId: {SESSION!r}, enableEval: true}}); b2.connect()")
    agent.wait_for(lambda m: m.get("type") == "capabilities" and "eval" in m["capabilities"])
    assert agent.reply(agent.send("evaluate", code="6 * 7"))["result"] == 42


def store_url(pages: DebugPages, sdk: str, port: int, session: str) -> str:
    extra = "&sdk=npm" if sdk == "npm" else ""
    return pages.url(f"store/index.html?session={quote(session)}&port={port}&host=127.0.0.1{extra}")


def store_state(agent: Agent, after: int, predicate: Any) -> dict[str, Any]:
    msg = agent.wait_for(lambda m: m.get("type") == "state_update" and m["scope"] == "store" and predicate(m["state"]),
                         after=after)
    return msg["state"]


@pytest.mark.parametrize("sdk", SDKS)
def test_the_example_store_is_watched_and_driven_and_comes_back_after_a_reload(
        sdk: str, pages: DebugPages, standalone: StandaloneServer, agents: list[Agent], tab: Any) -> None:
    agents.append(agent := Agent(f"{standalone.url}?role=agent&sessionId={SESSION}", SESSION))
    navigate(tab, store_url(pages, sdk, standalone.port, SESSION), timeout_s=10)
    hello = agent.wait_for(lambda m: m.get("type") == "hello", 10)
    assert hello["appName"] == "debug-store" and hello["appVersion"] == "1.0.0"
    assert store_state(agent, 0, lambda s: True)["items"] == {}

    for _ in range(2):
        assert agent.reply(agent.send("click", target={"stableId": "add-apple"}))["success"]
    state = store_state(agent, 0, lambda s: s["items"] == {"apple": 2})
    assert "add" not in state   # the store's actions are not state
    assert page_eval(tab, "document.querySelector('[data-testid=cart-total]').textContent") == "1.00"

    assert agent.reply(agent.send("type", target={"stableId": "coupon"}, text="NOPE"))["success"]
    assert agent.reply(agent.send("click", target={"text": "Apply"}))["success"]
    info = agent.wait_for(lambda m: m.get("type") == "console" and m["level"] == "info")
    assert info["args"] == ["applying coupon", "NOPE"]
    err = agent.wait_for(lambda m: m.get("type") == "error")
    assert 'unknown coupon "NOPE"' in err["message"]

    mark = len(agent.messages)
    reload(tab, 10)
    agent.wait_for(lambda m: m.get("event") == "app_disconnected", after=mark)
    agent.wait_for(lambda m: m.get("event") == "app_connected", 10, after=mark)
    agent.wait_for(lambda m: m.get("type") == "hello", after=mark)
    assert store_state(agent, mark, lambda s: True)["items"] == {"apple": 2}   # back, with its cart
    assert agent.reply(agent.send("click", target={"stableId": "remove-apple"}))["success"]
    store_state(agent, mark, lambda s: s["items"] == {"apple": 1})


@pytest.mark.parametrize("sdk", SDKS)
def test_a_page_reconnects_when_the_server_comes_back(sdk: str, pages: DebugPages, tmp_path: Path,
                                                      agents: list[Agent], tab: Any) -> None:
    first = StandaloneServer(make_config(tmp_path), "127.0.0.1", 0, SESSION).start()
    port = first.port
    ws_url, sdk_url = standalone_urls(first)
    try:
        agents.append(agent := Agent(f"{first.url}?role=agent&sessionId={SESSION}", SESSION))
        navigate(tab, page_url(pages, sdk, ws_url, sdk_url, SESSION), timeout_s=10)
        agent.wait_for(lambda m: m.get("type") == "navigation", 10)
    finally:
        first.stop()
    bridge = "window.bridge" if sdk == "npm" else "PinchtabDebug.bridge"
    wait_until(lambda: page_eval(tab, f"{bridge}.isConnected()") is False, 5)
    if sdk == "ours":   # ours keeps what happens while it is away, and sends it on return
        page_eval(tab, "console.warn('while the server was away')")
    with StandaloneServer(make_config(tmp_path), "127.0.0.1", port, SESSION) as second:
        agents.append(again := Agent(f"{second.url}?role=agent&sessionId={SESSION}", SESSION))
        # The first retry comes 1 s after the drop (the default backoff); allow for a second one.
        again.wait_for(lambda m: m.get("event") == "app_connected", 5)
        again.wait_for(lambda m: m.get("type") == "navigation" and m["trigger"] == "initial")
        assert again.reply(again.send("click", target={"stableId": "inc"}))["success"]
        assert page_eval(tab, "count") == 1
        if sdk == "ours":
            line = again.wait_for(lambda m: m.get("type") == "console")
            assert line["args"] == ["while the server was away"]


@pytest.mark.parametrize("sdk", SDKS)
def test_a_second_agent_joining_leaves_the_page_undisturbed(sdk: str, pages: DebugPages, standalone: StandaloneServer,
                                                            agents: list[Agent], tab: Any) -> None:
    agents.append(first := Agent(f"{standalone.url}?role=agent&sessionId={SESSION}", SESSION))
    ws_url, sdk_url = standalone_urls(standalone)
    navigate(tab, page_url(pages, sdk, ws_url, sdk_url, SESSION), timeout_s=10)
    first.wait_for(lambda m: m.get("type") == "navigation", 10)
    agents.append(second := Agent(f"{standalone.url}?role=agent&sessionId={SESSION}", SESSION))
    second.wait_for(lambda m: m.get("type") == "capabilities")   # a late agent learns who is there
    first.wait_for(lambda m: m.get("event") == "agent_connected")
    rid = second.send("click", target={"stableId": "inc"})
    assert second.reply(rid)["success"] and page_eval(tab, "count") == 1
    assert not [m for m in first.messages if m.get("requestId") == rid]   # a result goes to its sender only
    # The npm SDK answers the server's agent_connected notice as if it were a command: a
    # command_result with no requestId (requestType "connection_event", INVALID_COMMAND). Nobody
    # asked, so the server drops it as known noise, without counting it; ours sends nothing back.
    assert standalone.session.invalid == 0
    assert not [m for m in first.messages + second.messages if m.get("requestType") == "connection_event"]
