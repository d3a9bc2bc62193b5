"""The debug bridge's ``navigate`` goes through the one navigation policy: on the CDP side
(POST /tabs/{id}/debug) every URL the API would refuse is refused, and javascript:, data: and
file: URLs always; our page SDK opens only http(s) and relative URLs.

Real headless Chromium on pages served on 127.0.0.1; names resolve through a stub
(netguard.RESOLVER_EXTENSION), so a refused URL reaches neither the browser nor the network.
"""
from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import quote

import pytest
from support.debug_pages import Agent, DebugPages
from support.waits import wait_until

from app.debug import protocol
from app.debug.hub import Peer
from app.debug.standalone import StandaloneServer
from app.policy import netguard
from cdp.navigation import navigate

pytestmark = pytest.mark.timeout(60)
REFUSED_ALWAYS = ("javascript:alert(1)", "data:text/html,x", "file:///etc/passwd")
METADATA_NAMES = {"metadata.google.internal": ["169.254.169.254"], "169.254.169.254.nip.io": ["169.254.169.254"]}


class TabAgent:
    """An in-memory agent in a tab's debug session: sends commands through the hub, reads their results."""

    def __init__(self, app: Any, session_id: str) -> None:
        self.hub = app.extensions["pinchtab.debug"]
        self.session_id = session_id
        self.session = self.hub.get(session_id)
        self.results: list[dict[str, Any]] = []
        self.invalid: list[Any] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self.peer = Peer("agent", "policy-agent", self._deliver)
        self.hub.join(self.session, self.peer)

    def _deliver(self, text: str, msg: dict[str, Any] | None) -> None:
        msg = msg if msg is not None else json.loads(text)
        with self._lock:
            if protocol.validate_message(msg):
                self.invalid.append(msg)
            if msg.get("type") == "command_result":
                self.results.append(msg)

    def run(self, type: str, **fields: Any) -> dict[str, Any]:
        rid = f"n{next(self._ids)}"
        self.hub.from_agent(self.session, self.peer,
                            json.dumps(protocol.envelope(self.session_id, type, requestId=rid, **fields)))
        return wait_until(lambda: next((m for m in list(self.results) if m["requestId"] == rid), None), 30)


@pytest.fixture
def debugged(app_factory: Callable[..., Any], site: Any) -> Iterator[Callable[..., tuple[Any, TabAgent, str]]]:
    """Debug a new tab (on ``page``) of an app built with ``overrides``; names resolve through a stub."""
    made: list[tuple[Any, TabAgent, str]] = []

    def attach(page: str, **overrides: Any) -> tuple[Any, TabAgent, str]:
        app = app_factory(**overrides)
        app.extensions[netguard.RESOLVER_EXTENSION] = lambda host: METADATA_NAMES.get(host, [])
        client = app.test_client()
        tab_id = client.post("/navigate", json={"url": page}).json["tabId"]
        sid = client.post("/debug/sessions").json["sessionId"]
        agent = TabAgent(app, sid)
        r = client.post(f"/tabs/{tab_id}/debug", json={"sessionId": sid})
        assert r.status_code == 201, r.json
        made.append((client, agent, tab_id))
        return client, agent, tab_id

    yield attach
    for client, agent, tab_id in made:
        assert not agent.invalid, agent.invalid
        client.delete(f"/tabs/{tab_id}/debug")


def refused(result: dict[str, Any]) -> str:
    assert result["success"] is False and result["error"]["code"] == "INVALID_COMMAND", result
    return str(result["error"]["message"])


def test_cdp_navigate_refuses_scripts_data_files_and_the_metadata_service(debugged: Any, site: Any,
                                                                          browser: Any) -> None:
    client, agent, tab_id = debugged(site.url("debug_app.html"), **{"security.allowFileScheme": True})
    for url in REFUSED_ALWAYS:  # file: too, though the API may open it here
        assert "only http and https" in refused(agent.run("navigate", url=url))
    for url in ("http://metadata.google.internal/computeMetadata/v1/", "http://169.254.169.254.nip.io/latest/",
                "http://169.254.169.254/latest/meta-data/"):
        assert "metadata" in refused(agent.run("navigate", url=url))
    assert client.get("/url", query_string={"tabId": tab_id}).json["url"] == site.url("debug_app.html")
    assert browser.tab(tab_id).last_dialog is None  # javascript:alert(1) never ran
    moved = agent.run("navigate", url=site.url("form.html"))
    assert moved["success"] is True, moved
    wait_until(lambda: client.get("/url", query_string={"tabId": tab_id}).json["url"] == site.url("form.html"))


def test_cdp_navigate_keeps_to_the_strict_allowlist(debugged: Any, site: Any) -> None:
    start = site.url("debug_app.html").replace("127.0.0.1", "localhost")
    client, agent, tab_id = debugged(start, **{"security.idpi.strictMode": True,
                                              "security.allowedDomains": ["localhost"]})
    message = refused(agent.run("navigate", url=site.url("form.html")))
    assert message == "navigation blocked by IDPI: domain '127.0.0.1' is not in security.allowedDomains"
    assert client.get("/url", query_string={"tabId": tab_id}).json["url"] == start
    listed = site.url("form.html").replace("127.0.0.1", "localhost")
    assert agent.run("navigate", url=listed)["success"] is True
    wait_until(lambda: client.get("/url", query_string={"tabId": tab_id}).json["url"] == listed)


# --- our page SDK ------------------------------------------------------------------------------------------
SESSION = "navigate-policy-session"


def test_our_sdk_opens_only_web_and_relative_urls(pages: DebugPages, standalone: StandaloneServer, tab: Any) -> None:
    agent = Agent(f"{standalone.url}?role=agent&sessionId={SESSION}", SESSION)
    try:
        sdk_url = f"http://127.0.0.1:{standalone.port}/debug/sdk.js?sessionId={SESSION}"
        page = pages.url(f"sdk_app.html?sdk={quote(sdk_url, safe='')}")
        navigate(tab, page, timeout_s=10)
        agent.wait_for(lambda m: m.get("type") == "navigation" and m["trigger"] == "initial", 10)
        for url in (*REFUSED_ALWAYS, " JavaScript:alert(1)", "blob:http://127.0.0.1/x"):
            result = agent.reply(agent.send("navigate", url=url))
            assert result["type"] == "command_result" and result["success"] is False, result
            assert result["error"]["code"] == "INVALID_COMMAND" and "only http(s)" in result["error"]["message"]
        here = tab.call("Runtime.evaluate", {"expression": "location.href", "returnByValue": True})["result"]
        assert here["value"] == page and tab.dialog is None  # nothing ran, nothing opened
        mark = len(agent.messages)
        assert agent.reply(agent.send("navigate", url=page + "&again=1"))["success"]  # an absolute URL
        agent.wait_for(lambda m: m.get("type") == "hello" and m["url"].endswith("&again=1"), 10, after=mark)
        mark = len(agent.messages)
        relative = "?sdk=" + quote(sdk_url, safe="") + "&rel=1"
        assert agent.reply(agent.send("navigate", url=relative))["success"]
        agent.wait_for(lambda m: m.get("type") == "hello" and m["url"].endswith("&rel=1"), 10, after=mark)
    finally:
        agent.close()
