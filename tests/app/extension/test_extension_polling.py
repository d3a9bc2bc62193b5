"""Our extension's polling side: the original commands, taken from a Pinchtab's /poll, on a real Chromium.

The commands go into the queue of ``pinchtab bridge --extension``'s extension port (the daemon's
blueprint, paired); the extension polls it with its pairing token and posts the results.
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support.extension_browser import ExtensionBridge, ExtensionBrowser
from support.waits import wait_until

_ids = itertools.count(1)


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ExtensionBridge]:
    chrome = ExtensionBrowser().start()
    b = ExtensionBridge(tmp_path_factory.mktemp("ext-poll"), chrome).connect()
    yield b
    b.stop()
    chrome.stop()


def run(bridge: ExtensionBridge, type_: str, timeout_s: float = 15.0, **data: Any) -> dict[str, Any]:
    """Queue one command for the extension and wait for its answer."""
    command = {"type": type_, "data": data, "requestId": f"t{next(_ids)}"}
    answer = bridge.relay.commands.submit(command, timeout_s=timeout_s).wait()
    assert answer["requestId"] == command["requestId"]
    return answer


def test_polls_need_the_pairing_token(bridge):
    r = requests.get(f"{bridge.url}/poll", timeout=5)
    assert r.status_code == 401
    r = requests.get(f"{bridge.url}/poll", headers={"Authorization": "Bearer wrong"}, timeout=5)
    assert r.status_code == 401


def test_open_navigate_query_type_and_click(bridge, site):
    opened = run(bridge, "open_tab", url=site.url("form.html"), active=True)
    assert opened["success"] is True, opened
    tab = opened["data"]["tabId"]
    group = bridge.chrome.evaluate(f"chrome.tabs.get({tab}).then(t => chrome.tabGroups.get(t.groupId))"
                                   ".then(g => g.title)")
    assert group == "Pinchtab"  # agent tabs live in a group of their own
    tabs = run(bridge, "get_tabs")["data"]
    assert tab in [t["id"] for t in tabs] and {"id", "url", "title", "active", "windowId"} <= set(tabs[0])
    nav = run(bridge, "navigate", url=site.url("login.html"), tabId=tab)
    assert nav["success"] is True and nav["data"] == {"tabId": tab, "url": site.url("login.html")}
    assert run(bridge, "query", selector="input", mode="exists", tabId=tab)["data"] == {"exists": True, "count": 2}
    listed = run(bridge, "query", selector="button", tabId=tab)["data"]
    assert listed[0]["tagName"] == "button" and listed[0]["text"] == "Sign in"
    typed = run(bridge, "type", selector="#u", text="agent", tabId=tab)
    assert typed["data"] == {"typed": True, "selector": "#u", "text": "agent"}
    run(bridge, "type", selector="#p", text="s3cret", tabId=tab)
    assert run(bridge, "click", selector="button", tabId=tab)["data"] == {"clicked": True, "selector": "button",
                                                                          "index": 0}
    # The form posts; the welcome page loads.
    wait_until(lambda: "Welcome, agent" in (run(bridge, "query", selector="h1", mode="text", tabId=tab)["data"] or ""))
    # Chrome's captureVisibleTab fails its readback while the page it just loaded has no frame yet
    # (seen once on a busy machine): the capture is asked again, as a person would.
    shots: list[dict[str, Any]] = []
    wait_until(lambda: shots.append(run(bridge, "screenshot", tabId=tab)) or shots[-1]["success"], 10)
    shot = shots[-1]
    assert shot["success"] is True and shot["data"]["dataUrl"].startswith("data:image/png;base64,"), shot
    session = run(bridge, "get_session")["data"]
    assert tab in [t["id"] for t in session["tabs"]] and session["activeTabId"] is not None
    assert run(bridge, "close_tab", tabId=tab)["data"] == {"closed": True, "tabId": tab}


def test_a_click_on_nothing_fails_with_the_reason(bridge, site):
    tab = run(bridge, "open_tab", url=site.url("form.html"))["data"]["tabId"]
    # No tabId: the active tab, which open_tab made the new one.
    assert run(bridge, "navigate", url=site.url("form.html"))["data"]["tabId"] == tab
    missing = run(bridge, "click", selector="#nope")
    assert missing["success"] is False and missing["error"] == "Element not found: #nope at index 0"
    bad = run(bridge, "click", selector="##", tabId=tab)
    assert bad["success"] is False and "Invalid selector" in bad["error"]
    bad = run(bridge, "type", selector="##", text="x", tabId=tab)
    assert bad["success"] is False and "Invalid selector" in bad["error"]
    assert run(bridge, "query", selector="##", mode="exists", tabId=tab)["data"] is None
    unknown = run(bridge, "frobnicate")
    assert unknown["success"] is False and "frobnicate" in unknown["error"]
