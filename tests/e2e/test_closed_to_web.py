"""A hostile page in the user's own browser, played in real Chromium, against each of our servers.

The page is served on another loopback port (as any local dev server or a page the user opened
would be) and uses only what any page may: no-cors ``fetch`` POSTs with a JSON body as text/plain,
``<img>`` GETs and WebSockets. DNS rebinding is played with Chromium's host-resolver rules: a page
at ``http://evil.example:<our port>/`` is same-origin with us, as it is once the attacker's DNS
answers 127.0.0.1. Each test checks that nothing happened, on the server's own state, and that the
same server still answers its real clients.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from support.config import make_config
from support.waits import wait_until

from cdp.browser import Browser
from cdp.navigation import navigate
from cdp.tab import Tab

REBIND = "evil.example"

# Runs in the attacker's page: every request it fires, each settled (a no-cors answer is opaque, so
# the page learns nothing from it; what counts is what the server did).
ATTACK_JS = """
(async ({base, posts, images, sockets, reads}) => {
  const post = ([path, body]) => fetch(base + path, {method: "POST", mode: "no-cors",
      headers: {"Content-Type": "text/plain"}, body: JSON.stringify(body)}).then(() => "sent", () => "error");
  const image = (path) => new Promise(done => { const i = new Image(); i.onload = () => done("loaded");
      i.onerror = () => done("error"); i.src = base + path; });
  const socket = (path) => new Promise(done => {
      const s = new WebSocket(base.replace(/^http/, "ws") + path);
      s.onopen = () => { done("open"); s.close(); }; s.onerror = () => done("error");
      setTimeout(() => done("no answer"), 5000); });
  const read = (path) => fetch(base + path).then(r => r.text().then(t => r.status + " " + t.slice(0, 80)),
      () => "unreadable");
  return {posts: await Promise.all(posts.map(post)), images: await Promise.all(images.map(image)),
          sockets: await Promise.all(sockets.map(socket)), reads: await Promise.all(reads.map(read))};
})
"""


@pytest.fixture(scope="module")
def attacker() -> Iterator[Browser]:
    """The user's own browser, in which ``evil.example`` resolves to this machine."""
    b = Browser(extra_flags=(f"--host-resolver-rules=MAP {REBIND} 127.0.0.1",))
    b.start()
    yield b
    b.stop()


def page_at(browser: Browser, url: str) -> Tab:
    tab = browser.new_tab()
    tab.run(lambda: navigate(tab, url, timeout_s=10), 15)
    return tab


def run_in_page(tab: Tab, expression: str) -> Any:
    res = tab.run(lambda: tab.call("Runtime.evaluate", {"expression": expression, "returnByValue": True,
                                                        "awaitPromise": True}), 30)
    assert "exceptionDetails" not in res, res
    return res["result"].get("value")


def attack(browser: Browser, page_url: str, base: str, **requests_: list[Any]) -> dict[str, list[str]]:
    """Load the attacker's page and fire ``posts`` ([path, body]), ``images``, ``sockets`` and
    ``reads`` at ``base`` from it; what the page saw of each."""
    tab = page_at(browser, page_url)
    try:
        args = {"base": base, **{k: requests_.get(k, []) for k in ("posts", "images", "sockets", "reads")}}
        return run_in_page(tab, f"{ATTACK_JS}({json.dumps(args)})")
    finally:
        browser.close_tab(tab.id)


def rebound_reads(browser: Browser, port: int, paths: list[str]) -> list[str]:
    """What a page at ``http://evil.example:<port>/`` (same-origin with us after rebinding) reads."""
    tab = page_at(browser, f"http://{REBIND}:{port}/health")
    try:
        reads = json.dumps(paths)
        return run_in_page(tab, f"Promise.all({reads}.map(p => fetch(p, {{method: 'GET'}}).then("
                                "r => r.text().then(t => r.status + ' ' + t.slice(0, 80)))))")
    finally:
        browser.close_tab(tab.id)


# --- the bridge ------------------------------------------------------------------------------------
def test_a_page_cannot_drive_or_read_the_bridge(attacker: Browser, site2: Any, site: Any, bridge_process: Any,
                                                tmp_path: Path) -> None:
    state = tmp_path / ".pinchtab"
    state.mkdir()
    config = state / "config.json"
    config.write_text(json.dumps({"instanceDefaults": {"stealthLevel": "off"}}))
    bridge = bridge_process()
    bridge.wait_healthy(60)
    api = requests.Session()
    known = api.post(f"{bridge.base}/tab", json={"action": "new", "url": site.url("form.html")}, timeout=30)
    assert known.status_code == 200, known.text
    before = {t["id"] for t in api.get(f"{bridge.base}/tabs", timeout=10).json()["tabs"]}
    marker = site.url("links.html?planted")

    seen = attack(attacker, site2.url("form.html"), bridge.base,
                  posts=[["/navigate", {"url": marker}], ["/tab", {"action": "new", "url": marker}],
                         ["/shutdown", {}]],
                  images=["/screenshot?output=file&path=config.json", "/snapshot?output=file&path=config.json",
                          "/navigate?url=" + marker],
                  sockets=["/screencast", "/debug?role=agent&sessionId=x"],
                  reads=["/tabs"])

    assert seen["sockets"] == ["error", "error"], seen
    assert all(s == "error" for s in seen["images"]), seen
    assert all(r == "unreadable" for r in seen["reads"]), seen
    tabs = api.get(f"{bridge.base}/tabs", timeout=10).json()["tabs"]
    assert {t["id"] for t in tabs} == before, tabs
    assert not any("planted" in t.get("url", "") for t in tabs)
    assert json.loads(config.read_text()) == {"instanceDefaults": {"stealthLevel": "off"}}
    assert bridge.proc.poll() is None and bridge.healthy()
    # DNS rebinding: a page on a name that now resolves to us is refused before any work.
    reads = rebound_reads(attacker, bridge.port, ["/tabs", f"/tabs/{known.json()['tabId']}/text"])
    assert [r.split(" ")[0] for r in reads] == ["403", "403"], reads
    # Real clients: curl-like (no Origin), and the bridge's own answers unchanged.
    assert api.get(f"{bridge.base}/tabs", timeout=10).status_code == 200
    log = (tmp_path / "bridge.log").read_text(errors="replace")
    assert "origin_not_allowed" in log and "host_not_allowed" in log


# --- the server ------------------------------------------------------------------------------------
def test_a_page_cannot_drive_or_read_the_server(attacker: Browser, site2: Any, server_process: Any) -> None:
    server = server_process({"multiInstance": {"strategy": "explicit"}})
    server.wait_healthy(60)
    seen = attack(attacker, site2.url("form.html"), server.base,
                  posts=[["/instances/start", {}], ["/profiles", {"name": "planted"}], ["/shutdown", {}]],
                  images=["/instances/start", "/api/activity"],
                  sockets=["/debug?role=agent&sessionId=x", "/screencast?tabId=x"],
                  reads=["/instances"])
    assert seen["sockets"] == ["error", "error"], seen
    assert all(r == "unreadable" for r in seen["reads"]), seen
    assert server.get("/instances", timeout=10).json() == []
    names = [p["name"] for p in server.get("/profiles", timeout=10).json()]
    assert "planted" not in names
    assert server.proc.poll() is None and server.healthy()
    reads = rebound_reads(attacker, server.port, ["/instances", "/profiles"])
    assert [r.split(" ")[0] for r in reads] == ["403", "403"], reads
    # The dashboard's page opens from a link anywhere (it holds no data), and its calls are same-origin.
    tab = page_at(attacker, f"{server.base}/dashboard")
    try:
        assert run_in_page(tab, "fetch('/instances').then(r => r.status)") == 200
    finally:
        attacker.close_tab(tab.id)


# --- pinchtab debug connect -----------------------------------------------------------------------
def test_a_page_cannot_join_debug_connect_as_an_agent_or_guess_its_session(attacker: Browser, site2: Any,
                                                                           tmp_path: Path) -> None:
    from app.debug.standalone import StandaloneServer

    session_id = "a" * 32
    with StandaloneServer(make_config(tmp_path), "127.0.0.1", 0, session_id) as server:
        base = f"http://127.0.0.1:{server.port}"
        seen = attack(attacker, site2.url("form.html"), base,
                      sockets=[f"/debug?role=agent&sessionId={session_id}", "/debug?role=app&sessionId=default"],
                      posts=[[f"/debug/sessions/{session_id}/commands", {"command": "navigate", "url": "x"}]])
        assert seen["sockets"][0] == "error", seen
        assert not server.session.agents
        # A guessed id: the app is let in by its loopback origin, then closed as the original did.
        wait_until(lambda: not server.session.apps, 5)
        assert [r.split(" ")[0] for r in rebound_reads(attacker, server.port, ["/debug/sessions"])] == ["403"]
