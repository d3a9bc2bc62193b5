"""``pinchtab server`` as a user runs it: gunicorn, the instance manager, real bridges and Chromium.

One server (with a token, attach allowed for loopback, a 1 s restart backoff) is shared by most
tests; the manager-crash test runs servers of its own. Faults are real: ``kill -9`` of a bridge in
the middle of a request and of the manager itself. Nothing sleeps: every wait polls a predicate
with a deadline.
"""
from __future__ import annotations

import http.server
import json
import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from support.servers import ServerProcess
from support.waits import wait_until

pytestmark = pytest.mark.e2e

TOKEN = "srv-t0ken-for-tests"


class _HoldingHandler(http.server.BaseHTTPRequestHandler):
    """``/hold``: says it arrived, then holds the answer until released (bounded)."""

    arrived = threading.Event()
    release = threading.Event()

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        if self.path.startswith("/hold"):
            type(self).arrived.set()
            type(self).release.wait(20)
        body = b"<!doctype html><title>Held</title><p>held"
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
        except OSError:
            pass  # the browser that asked is gone (the point of the test)


@pytest.fixture(scope="module")
def holding_site() -> Iterator[str]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _HoldingHandler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="holding-site", daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    _HoldingHandler.release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    home = tmp_path_factory.mktemp("server-home")
    config = {"security": {"attach": {"enabled": True}},
              "multiInstance": {"restart": {"initBackoffSec": 1, "maxBackoffSec": 2}}}
    sp = ServerProcess(home, config, token=TOKEN)
    try:
        sp.wait_ready()
        yield sp
    finally:
        sp.stop()
    assert TOKEN not in sp.output()  # the callers' token never reaches a log


def start_instance(server: ServerProcess, **body: Any) -> dict[str, Any]:
    r = server.post("/instances/start", json=body)
    assert r.status_code == 201, r.text
    return server.wait_status(r.json()["id"], "running")


def stop_instance(server: ServerProcess, instance_id: str) -> None:
    r = server.post(f"/instances/{instance_id}/stop")
    assert r.status_code == 200 and r.json() == {"status": "stopped", "id": instance_id}, r.text


def pidfile(server: ServerProcess, instance_id: str) -> dict[str, Any]:
    return json.loads((server.state_dir / "run" / "pids" / f"{instance_id}.json").read_text())


def group_alive(pgid: int) -> bool:
    from app.orchestrator.children import group_members

    return bool(group_members(pgid))


def chrome_pids(home: Path) -> set[int]:
    """Chromium processes started under this HOME (every instance of a test server inherits it)."""
    from app.orchestrator.procfs import started_under_home

    return set(started_under_home(home))


# --- the browser API through the proxy ---------------------------------------------------------------
def test_health_has_the_server_shape_and_the_token_guards_the_rest(server):
    h = requests.get(server.base + "/health", timeout=5).json()
    assert h["status"] == "ok" and h["mode"] == "dashboard" and h["authRequired"] is True
    assert h["instances"] >= 1 and h["defaultInstance"] == {"status": "running"}
    known = server.get("/health").json()   # the version, uptime and ids: for callers with the token
    assert isinstance(known["uptime"], int) and known["version"] and known["defaultInstance"]["id"]
    r = requests.get(server.base + "/instances", timeout=5)
    assert r.status_code == 401 and r.json()["code"] == "missing_token"
    r = requests.get(server.base + "/snapshot", headers={"Authorization": "Bearer nope"}, timeout=5)
    assert r.status_code == 401 and r.json()["code"] == "bad_token"
    assert requests.get(server.base + "/dashboard", timeout=5).status_code == 200  # the page needs no token
    records = server.get("/instances").json()
    assert isinstance(records, list)
    keys = {"id", "profileId", "profileName", "port", "url", "mode", "headless", "status", "startTime", "attached"}
    assert keys <= set(records[0]) and records[0]["id"].startswith("inst_")


def test_navigate_snapshot_and_click_through_the_proxy(server, site):
    r = server.post("/navigate", json={"url": site.url("counter.html")})
    assert r.status_code == 200, r.text
    tab = r.json()["tabId"]
    default = server.health()["defaultInstance"]["id"]
    assert r.headers["X-PinchTab-Instance-Id"] == default
    snap = server.get(f"/snapshot?tabId={tab}&filter=interactive&format=compact").text
    ref = next(line.split()[0] for line in snap.splitlines() if "button Increment" in line)
    r = server.post("/action", json={"tabId": tab, "kind": "click", "ref": ref})
    assert r.status_code == 200, r.text
    r = server.post(f"/tabs/{tab}/action", json={"kind": "click", "ref": ref})
    assert r.status_code == 200, r.text
    text = server.get(f"/tabs/{tab}/text").json()["text"]
    assert "Counter" in text and "2" in text
    # A binary answer streams through unchanged: a JPEG of the page.
    shot = server.get(f"/tabs/{tab}/screenshot?raw=true&quality=50&scale=0.5")
    assert shot.status_code == 200 and shot.headers["Content-Type"] == "image/jpeg"
    assert shot.content[:3] == b"\xff\xd8\xff" and int(shot.headers["Content-Length"]) == len(shot.content)
    assert server.post(f"/tabs/{tab}/close").status_code == 200
    # Each instance writes its browser calls to the server's one activity log, under its profile.
    logged = server.get("/profiles/default/logs").json()
    assert any(e["endpoint"] == "/navigate" and e["url"] == site.url("counter.html") for e in logged)
    assert any(e["path"] == "/action" for e in server.get(f"/api/activity?tabId={tab}").json()["events"])


def test_tab_routes_reach_the_instance_that_owns_the_tab(server, site):
    default = server.health()["defaultInstance"]["id"]
    other = start_instance(server)
    try:
        assert other["profileName"].startswith("instance-") and other["mode"] == "headless"
        # A profile made for one instance is a throwaway: Chrome's autofill and password manager off.
        made = server.state_dir / "profiles" / other["profileName"]
        prefs = json.loads((made / "Default" / "Preferences").read_text())
        assert prefs["profile"]["password_manager_enabled"] is False and prefs["autofill"]["profile_enabled"] is False
        opened = server.post(f"/instances/{other['id']}/tabs/open", json={"url": site.url("table.html")})
        assert opened.status_code == 200 and opened.json()["title"] == "Orders", opened.text
        theirs = opened.json()["tabId"]
        ours = server.post("/navigate", json={"url": site.url("form.html")}).json()["tabId"]
        r = server.get(f"/tabs/{theirs}/title")
        assert r.json()["title"] == "Orders" and r.headers["X-PinchTab-Instance-Id"] == other["id"]
        r = server.get(f"/tabs/{ours}/title")
        assert r.json()["title"] == "E2E Test - Form" and r.headers["X-PinchTab-Instance-Id"] == default
        # A shorthand route naming a tab goes to that tab's instance too.
        assert server.get(f"/title?tabId={theirs}").headers["X-PinchTab-Instance-Id"] == other["id"]
        listed = {(t["id"], t["instanceId"]) for t in server.get("/instances/tabs").json()}
        assert {(theirs, other["id"]), (ours, default)} <= listed
        assert [t["id"] for t in server.get(f"/instances/{other['id']}/tabs").json()] == [theirs]
        r = server.get("/tabs/0123456789ABCDEF0123456789ABCDEF/snapshot")
        assert r.status_code == 404 and r.json()["code"] == "tab_not_found"
        server.post(f"/tabs/{ours}/close")
    finally:
        stop_instance(server, other["id"])
    r = server.get(f"/instances/{other['id']}")
    assert r.status_code == 404 and r.json()["code"] == "instance_not_found"
    # The temporary profile went with it; the instance's config file never held a token.
    assert not (server.state_dir / "profiles" / other["profileName"]).exists()
    for cfg in (server.state_dir / "instances").glob("*/config.json"):
        assert json.loads(cfg.read_text())["server"]["token"] == ""


def test_two_starts_for_one_profile_one_wins(server):
    assert server.post("/profiles", json={"name": "work"}).status_code == 201
    answers: list[requests.Response] = []
    barrier = threading.Barrier(2)

    def start() -> None:
        barrier.wait(5)
        answers.append(server.post("/instances/start", json={"profileId": "work"}))

    threads = [threading.Thread(target=start) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sorted(r.status_code for r in answers) == [201, 409], [r.text for r in answers]
    won = next(r for r in answers if r.status_code == 201).json()
    lost = next(r for r in answers if r.status_code == 409).json()
    assert lost["code"] == "profile_in_use" and "work" in lost["error"]
    assert won["profileName"] == "work" and won["profileId"] == server.get("/profiles/work").json()["id"]
    server.wait_status(won["id"], "running")
    assert server.get("/profiles/work/instance").json()["running"] is True
    stop_instance(server, won["id"])


def test_lifecycle_events_stream_as_sse_and_resume_from_last_event_id(server):
    got: list[dict[str, Any]] = []
    connected = threading.Event()

    def listen() -> None:
        with requests.get(f"{server.base}/api/events", headers={"Authorization": f"Bearer {TOKEN}"}, stream=True,
                          timeout=(5, 30)) as r:
            assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/event-stream")
            event: dict[str, Any] = {}
            for line in r.iter_lines(decode_unicode=True):
                connected.set()
                if line.startswith(("id:", "event:", "data:")):
                    key, _, value = line.partition(": ")
                    event[key] = value
                elif not line and "data" in event:
                    got.append({"id": int(event["id"]), "event": event["event"], **json.loads(event["data"])})
                    event = {}
                    if got[-1]["event"] == "instance.stopped":
                        return

    listener = threading.Thread(target=listen, daemon=True)
    listener.start()
    assert connected.wait(10)
    inst = start_instance(server)
    stop_instance(server, inst["id"])
    listener.join(30)
    mine = [e for e in got if e["instance"]["id"] == inst["id"]]
    assert [e["event"] for e in mine] == ["instance.started", "instance.stopped"], got
    assert mine[0]["type"] == "instance.started" and mine[0]["instance"]["status"] == "running"
    assert mine[1]["instance"]["status"] == "stopped" and mine[1]["id"] > mine[0]["id"]
    # Resuming after the start replays the stop from the manager's ring.
    with server.get("/api/events", headers={"Last-Event-ID": str(mine[0]["id"])}, stream=True,
                    timeout=(5, 30)) as r:
        lines = []
        for line in r.iter_lines(decode_unicode=True):
            lines.append(line)
            if line.startswith("data:"):
                break
    assert f"id: {mine[1]['id']}" in lines and "event: instance.stopped" in lines


# --- faults -------------------------------------------------------------------------------------------
def test_bridge_killed_mid_request_gives_502_then_restarts_and_serves(server, holding_site):
    inst = start_instance(server)
    try:
        tab = server.post(f"/instances/{inst['id']}/tabs/open", json={"url": "about:blank"}).json()["tabId"]
        answer: dict[str, Any] = {}

        def navigate() -> None:
            answer["r"] = server.post(f"/tabs/{tab}/navigate", json={"url": holding_site + "/hold"})

        caller = threading.Thread(target=navigate)
        _HoldingHandler.arrived.clear()
        caller.start()
        assert _HoldingHandler.arrived.wait(20)  # the request is in the bridge, waiting on the page
        os.killpg(pidfile(server, inst["id"])["pgid"], signal.SIGKILL)
        caller.join(30)
        r = answer["r"]
        assert r.status_code == 502 and r.json()["code"] == "instance_unreachable", r.text
        failed = server.wait_status(inst["id"], "error", 10)
        assert "SIGKILL" in failed["error"]
        server.wait_status(inst["id"], "running", 45)
        opened = server.post(f"/instances/{inst['id']}/tabs/open", json={"url": holding_site + "/page"})
        assert opened.status_code == 200 and opened.json()["title"] == "Held", opened.text
        assert server.get(f"/tabs/{opened.json()['tabId']}/title").json()["title"] == "Held"
        logs = server.get(f"/instances/{inst['id']}/logs")
        assert logs.headers["Content-Type"].startswith("text/plain")
        assert logs.text.count("--- pinchtab bridge on port") == 2, logs.text  # the first run's lines survive
    finally:
        stop_instance(server, inst["id"])


def test_attach_to_a_disallowed_host_or_scheme_names_the_setting(server):
    r = server.post("/instances/attach", json={"name": "far", "cdpUrl": "ws://10.1.2.3:9222/devtools/browser/x"})
    assert r.status_code == 403 and r.json()["code"] == "attach_not_allowed"
    assert r.json()["details"]["setting"] == "security.attach.allowHosts" and "allowHosts" in r.json()["error"]
    r = server.post("/instances/attach", json={"name": "far", "cdpUrl": "ftp://127.0.0.1:9222"})
    assert r.status_code == 403 and r.json()["details"]["setting"] == "security.attach.allowSchemes"


def test_attached_browser_routes_like_any_instance_and_is_left_running(server, browser, site):
    r = server.post("/instances/attach", json={"name": "mine", "cdpUrl": f"http://127.0.0.1:{browser.process.port}"})
    assert r.status_code == 201, r.text
    inst = r.json()
    assert inst["attached"] is True and inst["cdpUrl"].startswith("http://127.0.0.1:")
    server.wait_status(inst["id"], "running")
    opened = server.post(f"/instances/{inst['id']}/tabs/open", json={"url": site.url("table.html")}).json()
    assert opened["tabId"] in {p["targetId"] for p in browser.pages()}
    assert server.get(f"/tabs/{opened['tabId']}/title").json()["title"] == "Orders"
    server.post(f"/tabs/{opened['tabId']}/close")
    stop_instance(server, inst["id"])
    assert browser.alive()


def test_dashboard_in_a_real_browser_starts_an_instance(server, browser, site, tmp_path):
    from cdp import actions, navigation
    from cdp.input import Target

    before = {i["id"] for i in server.get("/instances").json()}
    tab = browser.new_tab()

    def run(fn: Any) -> Any:
        return tab.run(lambda: fn(tab), 30)

    def dom(expr: str) -> Any:
        res = run(lambda t: t.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}))
        return res["result"].get("value")

    started: set[str] = set()
    # A profile signed in as someone, there when the dashboard opens (it reads profiles when it
    # opens, then every 15 s).
    assert server.post("/profiles", json={"name": "alice"}).status_code == 201
    prefs = server.state_dir / "profiles" / "alice" / "Default" / "Preferences"
    prefs.parent.mkdir(parents=True, exist_ok=True)
    prefs.write_text(json.dumps({"account_info": [{"email": "alice@example.com", "full_name": "Alice Liddell",
                                                   "gaia": "1234"}]}))
    try:
        run(lambda t: navigation.navigate(t, server.base + "/dashboard", timeout_s=20))
        wait_until(lambda: dom("!document.getElementById('token-panel').hidden"), 10)  # it asks for the token
        run(lambda t: actions.fill(t, Target(selector="#token-input"), TOKEN))
        run(lambda t: actions.click(t, Target(selector="#token-save")))
        wait_until(lambda: dom("document.querySelectorAll('#instances [data-instance-id]').length") >= 1, 10)
        wait_until(lambda: dom("document.getElementById('events-state').textContent") == "live", 10)
        run(lambda t: actions.click(t, Target(selector="#start-instance")))
        cards = "[...document.querySelectorAll('#instances [data-instance-id]')]"

        def new_running() -> list[str]:
            states = dom(f"{cards}.map(c => [c.dataset.instanceId, c.dataset.status])") or []
            started.update(i for i, _ in states if i not in before)
            return [i for i, s in states if i not in before and s == "running"]

        new = wait_until(new_running, 45, 0.1)[0]
        assert new in {i["id"] for i in server.get("/instances").json()}
        # The start reached the page as an event too.
        wait_until(lambda: dom("[...document.querySelectorAll('#events li')].some(li => "
                               f"li.dataset.type === 'instance.started' && li.textContent.includes('{new}'))"), 10)
        card = f"document.querySelector('[data-instance-id=\"{new}\"]')"
        assert "running" in dom(f"{card}.textContent") and dom(f"!!{card}.querySelector('button[data-action=stop]')")
        # A tab of the new instance shows up with a live screenshot (fetched through the proxy).
        server.post(f"/instances/{new}/tabs/open", json={"url": site.url("counter.html")})
        wait_until(lambda: dom(f"!!{card}.querySelector('.tab img[data-loaded=true]')"), 15, 0.1)
        assert dom(f"{card}.querySelector('.tab .url').textContent") == site.url("counter.html")
        # Profiles show with the account they are signed in as, and agents' calls in the activity list.
        row = "document.querySelector('#profiles tr[data-profile=\"alice\"]')"
        wait_until(lambda: dom(f"{row} && {row}.textContent.includes('alice@example.com')"), 20, 0.2)
        assert "Alice Liddell" in dom(f"{row}.textContent")
        wait_until(lambda: dom("document.querySelectorAll('#activity li').length") >= 1, 20, 0.2)
        shot = run(lambda t: t.call("Page.captureScreenshot", {"format": "png"}))
        import base64

        png = base64.b64decode(shot["data"])
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 5000
        (tmp_path / "dashboard.png").write_bytes(png)
    finally:
        browser.close_tab(tab.id)
        for iid in started:
            server.post(f"/instances/{iid}/stop")


# --- the manager dies ---------------------------------------------------------------------------------
def test_killed_manager_shows_on_health_and_the_next_start_cleans_up_its_orphans(server_process, tmp_path):
    first = server_process()
    first.wait_ready()
    r = first.post("/instances/attach", json={"name": "x", "cdpUrl": "ws://127.0.0.1:1/devtools/browser/x"})
    assert r.status_code == 403 and r.json()["code"] == "attach_disabled"
    assert r.json()["details"]["setting"] == "security.attach.enabled"
    pidfiles = list((first.state_dir / "run" / "pids").glob("*.json"))
    groups = [json.loads(p.read_text())["pgid"] for p in pidfiles]
    chromes = chrome_pids(tmp_path)
    assert groups and chromes and all(group_alive(g) for g in groups)

    manager = first.manager_pid()
    assert manager is not None
    os.kill(manager, signal.SIGKILL)
    wait_until(lambda: first.health().get("status") == "error", 10)
    r = requests.get(first.base + "/health", timeout=5)
    assert r.status_code == 503 and r.json()["defaultInstance"] is None
    assert first.get("/instances").json()["code"] == "manager_unavailable"
    # The server goes; with no manager left to stop them, its bridges live on as orphans.
    os.killpg(first.proc.pid, signal.SIGTERM)
    first.proc.wait(30)
    assert all(group_alive(g) for g in groups)

    # Plain `pinchtab` is the server too.
    second = server_process(config={"multiInstance": {"strategy": "explicit"}}, args=())
    h = second.wait_ready(default_instance=False)
    assert h["instances"] == 0 and h["defaultInstance"] is None  # explicit: no instance at start
    assert not any(group_alive(g) for g in groups)
    wait_until(lambda: not (chromes & chrome_pids(tmp_path)), 10)  # each browser went with its bridge
    assert "orphaned" in second.output()
    r = second.get("/snapshot")
    assert r.status_code == 503 and r.json()["code"] == "no_instance"
    # A second server on the same state dir would take the first one's instances for orphans: refused.
    third = server_process()
    assert third.proc.wait(30) != 0
    assert "another pinchtab server is running on state dir" in third.output()
    assert second.health()["status"] == "ok"
