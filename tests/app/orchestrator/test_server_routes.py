"""Server mode's own routes as a user calls them: a real ``pinchtab server`` with its manager, real
bridges and Chromium. Instances (their extensions, their metrics), attach-bridge (a real standalone
``pinchtab bridge``), the log stream, the config API, agents, strategy status, the task queue (in
our form and the original's, batches, cancelling) and shutdown."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import requests
from support.servers import BridgeProcess, ServerProcess
from support.waits import wait_until

pytestmark = pytest.mark.e2e

BRIDGE_TOKEN = "lone-bridge-t0ken"


@pytest.fixture
def server(shared_server: ServerProcess) -> ServerProcess:
    return shared_server


def sse_events(resp: requests.Response, until: str, limit: int = 2000) -> list[tuple[str, dict[str, Any]]]:
    """(event, data) pairs read from a stream until an event named ``until`` (or ``limit`` events)."""
    out: list[tuple[str, dict[str, Any]]] = []
    event = ""
    for raw in resp.iter_lines(decode_unicode=True):
        if raw.startswith("event: "):
            event = raw[7:]
        elif raw.startswith("data: "):
            out.append((event, json.loads(raw[6:])))
            if event == until or len(out) >= limit:
                break
    return out


# --- /health ----------------------------------------------------------------------------------------
def test_health_has_the_originals_fields_and_the_security_summary_only_for_callers_it_knows(server):
    anonymous = requests.get(server.base + "/health", timeout=5).json()
    assert anonymous["profiles"] >= 1 and isinstance(anonymous["restartRequired"], bool)
    assert "agents" in anonymous and "security" not in anonymous
    assert "id" not in anonymous["defaultInstance"] and "version" not in anonymous  # counts and status only
    known = server.get("/health").json()
    assert known["defaultInstance"]["id"].startswith("inst_") and known["version"]
    sec = known["security"]
    assert sec["bind"] == "127.0.0.1" and "attach" in sec["enabledSensitiveEndpoints"]
    assert sec["idpiEnabled"] is True and sec["guardsDown"] is False and isinstance(sec["allowedDomains"], list)
    wrong = requests.get(server.base + "/health", headers={"Authorization": "Bearer nope"}, timeout=5).json()
    assert "security" not in wrong


# --- instances --------------------------------------------------------------------------------------
def test_the_log_stream_and_metrics_show_a_running_instance(server):
    default = server.health()["defaultInstance"]["id"]
    # The stream opens with the recent lines, then follows what the bridge prints.
    with server.get(f"/instances/{default}/logs/stream?lines=5", stream=True, timeout=30) as resp:
        assert resp.headers["Content-Type"].startswith("text/event-stream")
        first = sse_events(resp, until="log", limit=1)
        assert first and first[0][0] == "log" and isinstance(first[0][1]["line"], str)
    mine = {m["id"]: m for m in server.get("/instances/metrics").json()}[default]
    assert mine["status"] == "running" and mine["processes"] >= 2 and mine["rssBytes"] > 10_000_000
    assert server.post(f"/instances/{default}/start").json()["status"] == "running"  # left as it is
    overall = server.get("/api/metrics").json()
    assert overall["server"]["instancesByStatus"]["running"] >= 1 and overall["server"]["threads"] > 1
    assert default in {m["id"] for m in overall["instances"]}
    assert server.get("/instances/inst_00000000/logs/stream").json()["code"] == "instance_not_found"


def test_the_default_instance_loads_the_configured_extensions_and_callers_cannot_add_any(server):
    default = server.health()["defaultInstance"]["id"]
    folder = str(server.home / "blank-extension")  # the one the shared server's config names (conftest)

    def logged() -> str | None:
        text = server.get(f"/instances/{default}/logs").text
        return text if "browser initialized successfully" in text else None

    assert f"loading extensions paths={folder}" in wait_until(logged, 30, 0.1)
    for path in ("/instances/start", "/instances/launch", "/profiles/default/start"):
        r = server.post(path, json={"extensionPaths": [folder]})
        assert r.status_code == 400 and r.json()["details"]["field"] == "extensionPaths", (path, r.text)
        assert "extensionPaths are not supported on instance start requests" in r.json()["error"]


def test_metrics_carry_the_originals_instance_id_and_js_heap(server, site):
    tab = server.post("/navigate", json={"url": site.url("table.html")}).json()["tabId"]
    try:
        default = server.health()["defaultInstance"]["id"]
        mine = {m["instanceId"]: m for m in server.get("/instances/metrics").json()}[default]
        assert mine["id"] == default and mine["profileName"] == "default"
        assert mine["jsHeapUsedMB"] > 0 and mine["jsHeapTotalMB"] >= mine["jsHeapUsedMB"]
    finally:
        server.post("/close", json={"tabId": tab})


def test_a_browser_the_server_does_not_run_is_a_conflict_through_the_proxy(server, site):
    tab = server.post("/navigate", json={"url": site.url("table.html")}).json()["tabId"]
    try:
        for path in ("/text", "/snapshot", f"/tabs/{tab}/text"):
            for engine in ("ghost-chrome", "cloak"):
                r = server.get(f"{path}?browser={engine}")
                assert r.status_code == 409 and r.json()["code"] == "browser_conflict", (path, engine, r.text)
        assert server.get(f"/tabs/{tab}/text?browser=chrome").status_code == 200
    finally:
        server.post("/close", json={"tabId": tab})


def test_a_bad_port_or_unknown_instance_is_a_clear_4xx(server):
    for port in ("nine", 1.5, True, "80"):
        r = server.post("/instances/start", json={"port": port})
        assert r.status_code == 400 and "port" in r.text, (port, r.text)
    assert server.post("/instances/inst_00000000/start").status_code == 404
    r = server.post("/instances/start", json={"port": server.port})
    assert r.status_code == 409 and "server's own port" in r.json()["error"]
    # A port given as a string is read as the number (here: a profile in use, so nothing starts).
    in_use = server.get("/instances").json()[0]
    r = server.post("/instances/start", json={"profileId": in_use["profileName"], "port": str(in_use["port"] + 9)})
    assert r.status_code == 409 and r.json()["code"] == "profile_in_use", r.text


def test_a_standalone_bridge_attaches_by_url_and_token_and_routes_like_an_instance(server, site):
    # On the server's own state dir, as a person running both on one machine would.
    bridge = BridgeProcess(server.home, env={"PINCHTAB_TOKEN": BRIDGE_TOKEN}, args=("--profile", "lone"))
    try:
        bridge.wait_healthy(30)
        url = f"http://127.0.0.1:{bridge.port}"
        # Its own calls go to its own activity log, not to the server's dashboard.
        agent = {"Authorization": f"Bearer {BRIDGE_TOKEN}", "X-Agent-Id": "lone-agent"}
        assert requests.get(url + "/tabs", headers=agent, timeout=10).status_code == 200
        own = server.state_dir / "activity"
        wait_until(lambda: any("lone-agent" in p.read_text() for p in own.glob("events-*.jsonl")), 10)
        assert server.get("/api/activity?agentId=lone-agent").json()["count"] == 0
        bad = server.post("/instances/attach-bridge", json={"baseUrl": url, "token": "wrong"})
        assert bad.status_code == 400 and bad.json()["code"] == "attach_bad_token"
        far = server.post("/instances/attach-bridge", json={"baseUrl": "http://10.9.9.9:9867", "token": "x"})
        assert far.status_code == 403 and far.json()["details"]["setting"] == "security.attach.allowHosts"
        r = server.post("/instances/attach-bridge", json={"baseUrl": url, "token": BRIDGE_TOKEN})
        assert r.status_code == 201, r.text
        inst = r.json()
        assert inst["attachType"] == "bridge" and inst["profileName"].startswith("bridge-")
        assert inst["status"] == "running" and BRIDGE_TOKEN not in r.text
        again = server.post("/instances/attach-bridge", json={"baseUrl": url + "/", "token": BRIDGE_TOKEN})
        assert again.status_code == 200 and again.json()["id"] == inst["id"]
        opened = server.post(f"/instances/{inst['id']}/tabs/open", json={"url": site.url("table.html")}).json()
        # The bridge's own tab list has it: the server reached the real bridge with its token.
        tabs = requests.get(url + "/tabs", headers={"Authorization": f"Bearer {BRIDGE_TOKEN}"}, timeout=10).json()
        assert opened["tabId"] in {t["id"] for t in tabs["tabs"]}
        assert server.get(f"/tabs/{opened['tabId']}/title").json()["title"] == "Orders"
        stopped = server.post(f"/instances/{inst['id']}/stop").json()
        assert stopped == {"status": "stopped", "id": inst["id"]}
        wait_until(lambda: bridge.proc.poll() is not None, 20)  # asked to shut down, as the original does
    finally:
        bridge.stop()


def test_attach_without_a_name_makes_one(server, browser):
    cdp = f"http://127.0.0.1:{browser.process.port}"
    r = server.post("/instances/attach", json={"cdpUrl": cdp})
    assert r.status_code == 201, r.text
    inst = r.json()
    try:
        assert inst["profileName"].startswith("cdp-")
        again = server.post("/instances/attach", json={"cdpUrl": cdp})
        assert again.status_code == 200 and again.json()["id"] == inst["id"]
    finally:
        server.post(f"/instances/{inst['id']}/stop")
    assert browser.alive()


def test_the_server_documents_its_own_routes(server):
    paths = server.get("/openapi.json").json()["paths"]
    for path in ("/sessions", "/sessions/{sessionId}", "/api/config", "/api/auth/login", "/tasks",
                 "/scheduler/stats", "/instances/attach-bridge", "/instances/{instanceId}/logs/stream",
                 "/instances/metrics", "/api/metrics", "/health/background", "/always-on/status", "/shutdown",
                 "/api/agents"):
        assert path in paths, path


# --- status, agents, config --------------------------------------------------------------------------
def test_strategy_status_and_background_health(server):
    for name in ("always-on", "simple-autorestart"):
        s = server.get(f"/{name}/status").json()
        assert s["strategy"] == "always-on" and s["autoRestart"] is True and s["autoLaunch"] is True
        assert s["allocationPolicy"] == "fcfs" and s["defaultInstance"]["status"] == "running"
    bg = server.get("/health/background").json()
    assert bg["status"] == "ok" and bg["manager"]["reachable"] is True and bg["manager"]["pid"] > 0
    assert requests.get(server.base + "/health/background", timeout=5).status_code == 401


def test_agents_are_listed_from_the_activity_log(server, site):
    r = server.post("/navigate", json={"url": site.url("counter.html")}, headers={"X-Agent-Id": "agent-zed"})
    assert r.status_code == 200, r.text

    def zed() -> dict[str, Any] | None:
        return next((a for a in server.get("/api/agents").json() if a["agentId"] == "agent-zed"), None)

    found = wait_until(zed, 10, 0.1)
    assert found["requests"] >= 1 and found["lastPath"] == "/navigate" and found["instances"]
    one = server.get("/api/agents/agent-zed").json()
    assert one["recent"][0]["path"] == "/navigate"
    assert server.get("/api/agents/nobody").json()["code"] == "agent_not_found"


def test_config_is_redacted_changed_live_or_saved_for_a_restart(server, shared_token):
    got = server.get("/api/config").json()
    assert got["config"]["server"]["token"] == "***" and shared_token not in json.dumps(got)
    assert got["restartRequired"] is False
    # Live: the proxy reads the allocation policy on each request.
    r = server.request("PUT", "/api/config", json={"multiInstance": {"allocationPolicy": "round_robin"}})
    assert r.status_code == 200, r.text
    assert r.json()["applied"] == ["multiInstance.allocationPolicy"]
    assert server.get("/always-on/status").json()["allocationPolicy"] == "round_robin"
    # Bad input names the key; nothing changes.
    for change, key in (({"multiInstance": {"allocationPolicy": "lottery"}}, "allocationPolicy"),
                        ({"server": {"nope": 1}}, "server.nope"),
                        ({"server": {"token": "stolen"}}, "server.token"),
                        ({"timeouts": {"actionSec": -1}}, "actionSec")):
        r = server.request("PUT", "/api/config", json=change)
        assert r.status_code == 400 and key in r.json()["error"], r.text
    # A key the running server cannot switch: saved to the file, 409 naming it, /health says so.
    r = server.request("PUT", "/api/config", json={"timeouts": {"actionSec": 45},
                                                   "multiInstance": {"allocationPolicy": "fcfs"}})
    assert r.status_code == 409 and r.json()["code"] == "restart_required", r.text
    assert r.json()["details"]["keys"] == ["timeouts.actionSec"]
    saved = json.loads(Path(server.config_path).read_text())
    assert saved["timeouts"]["actionSec"] == 45 and "token" not in saved.get("server", {})
    h = server.get("/health").json()
    assert h["restartRequired"] is True and h["restartReasons"] == ["timeouts.actionSec"]
    public = requests.get(server.base + "/health", timeout=5).json()
    assert public["restartRequired"] is True and "restartReasons" not in public  # no config keys for anyone


# --- the task queue ----------------------------------------------------------------------------------
def test_a_queued_task_runs_as_its_agent_and_only_browser_routes_queue(server, site):
    r = server.post("/tasks", json={"path": "/navigate", "body": {"url": site.url("form.html")}},
                    headers={"X-Agent-Id": "agent-q"})
    assert r.status_code == 202, r.text
    task = r.json()
    assert task["agentId"] == "agent-q" and task["status"] in ("queued", "running")

    def finished() -> dict[str, Any] | None:
        t = server.get(f"/tasks/{task['taskId']}").json()
        return t if t["status"] in ("done", "failed") else None

    done = wait_until(finished, 30, 0.1)
    assert done["status"] == "done" and done["result"]["status"] == 200
    tab = done["result"]["body"]["tabId"]
    # The agent's current tab is the one its task opened.
    title = server.get("/title", headers={"X-Agent-Id": "agent-q"}).json()
    assert title["tabId"] == tab if "tabId" in title else title["title"]
    stats = server.get("/scheduler/stats").json()
    assert stats["done"] >= 1 and stats["maxPerAgent"] == 50 and stats["workers"] == 2
    for path in ("/shutdown", "/api/config", "/sessions", "/nowhere"):
        r = server.post("/tasks", json={"path": path})
        assert r.status_code == 400 and r.json()["code"] == "task_path_not_allowed", (path, r.text)
    assert server.request("DELETE", f"/tasks/{task['taskId']}").json()["code"] == "task_not_queued"
    assert server.get("/tasks?agentId=agent-q").json()["tasks"][0]["taskId"] == task["taskId"]


def finished_task(server: ServerProcess, task_id: str) -> dict[str, Any]:
    """The task's record once it has run (done or failed)."""
    def ended() -> dict[str, Any] | None:
        t = server.get(f"/tasks/{task_id}").json()
        return t if t["state"] in ("done", "failed") else None

    return wait_until(ended, 30, 0.05)


def test_tasks_in_the_originals_form_run_as_actions_on_a_tab(server, site):
    agent = "agent-orig"
    tab = server.post("/navigate", json={"url": site.url("form.html")}).json()["tabId"]
    try:
        r = server.post("/tasks", json={"agentId": agent, "action": "snapshot", "tabId": tab,
                                        "params": {"filter": "interactive"}})
        assert r.status_code == 202, r.text
        assert r.json()["state"] in ("queued", "running") and r.json()["position"] >= 1
        snap = finished_task(server, r.json()["taskId"])
        assert (snap["agentId"], snap["action"], snap["tabId"], snap["state"]) == (agent, "snapshot", tab, "done")
        assert snap["path"] == f"/tabs/{tab}/snapshot?filter=interactive" and snap["result"]["body"]["nodes"]
        # Any other action is the tab's /action with that kind.
        typed = server.post("/tasks", json={"agentId": agent, "action": "type", "tabId": tab, "selector": "#username",
                                            "params": {"text": "ada", "kind": "click"}}).json()
        done = finished_task(server, typed["taskId"])
        assert done["state"] == "done" and done["result"]["body"]["success"] is True, done
        assert server.get(f"/tabs/{tab}/value?selector=%23username").json()["value"] == "ada"
        missing = server.post("/tasks", json={"agentId": agent, "action": "click", "tabId": tab, "selector": "#nope"})
        failed = finished_task(server, missing.json()["taskId"])
        assert failed["state"] == "failed" and failed["error"] and failed["result"]["status"] == 404
        listed = server.get(f"/tasks?agentId={agent}").json()
        assert listed["count"] == 3 and {t["taskId"] for t in listed["tasks"]} >= {typed["taskId"]}
        ended = server.get(f"/tasks?agentId={agent}&state=done,failed").json()
        assert ended["count"] == 3 and server.get("/tasks?state=done,lost").status_code == 400
        # A task that has run cannot be cancelled; an unknown one is 404.
        assert server.post(f"/tasks/{typed['taskId']}/cancel").status_code == 409
        assert server.post("/tasks/task_nonexistent/cancel").json()["code"] == "task_not_found"
        for body, field in (({"action": "snapshot"}, "agentId"), ({"agentId": agent}, "action"),
                            ({"agentId": agent, "action": "snapshot", "deadline": "2020-01-01T00:00:00Z"}, "deadline"),
                            ({"agentId": agent, "path": "/text", "tabId": tab}, "tabId")):
            r = server.post("/tasks", json=body)
            assert r.status_code == 400 and r.json()["details"]["field"] == field, (body, r.text)
    finally:
        server.post("/close", json={"tabId": tab})


def test_a_queued_task_is_cancelled_by_the_originals_route(server, site):
    agent = "agent-slow"
    slow = {"path": "/navigate", "body": {"url": site.url("slow?ms=2500")}}
    first = [server.post("/tasks", json={**slow, "agentId": agent}).json() for _ in range(2)]  # both workers busy
    waiting = server.post("/tasks", json={**slow, "agentId": agent}).json()
    r = server.post(f"/tasks/{waiting['taskId']}/cancel")
    assert r.status_code == 200 and r.json()["status"] == "cancelled" and r.json()["taskId"] == waiting["taskId"]
    for task in first:
        tab = finished_task(server, task["taskId"])["result"]["body"].get("tabId")
        if tab:
            server.post("/close", json={"tabId": tab})


def test_a_batch_queues_an_agents_tasks_and_is_bounded(server, site):
    tab = server.post("/navigate", json={"url": site.url("table.html")}).json()["tabId"]
    try:
        specs = [{"action": a, "tabId": tab} for a in ("snapshot", "text", "screenshot")]
        r = server.post("/tasks/batch", json={"agentId": "agent-batch", "tasks": specs})
        assert r.status_code == 202 and r.json()["submitted"] == 3 and r.json()["rejected"] == 0, r.text
        for item in r.json()["tasks"]:
            assert item["state"] in ("queued", "running") and finished_task(server, item["taskId"])["state"] == "done"
        for body, field in (({"agentId": "agent-batch", "tasks": []}, "tasks"),
                            ({"tasks": [{"action": "snapshot"}]}, "agentId"),
                            ({"agentId": "a", "tasks": [{"action": "snapshot", "path": "/text"}]}, "tasks.0.action")):
            r = server.post("/tasks/batch", json=body)
            assert r.status_code == 400 and r.json()["details"]["field"] == field, (body, r.text)
        big = server.post("/tasks/batch", json={"agentId": "a", "tasks": [{"action": "text", "tabId": tab}] * 51})
        assert big.status_code == 400 and big.json()["code"] == "batch_too_large"
        assert big.json()["details"] == {"field": "tasks", "submitted": 51, "max": 50}
        stats = server.get("/scheduler/stats").json()
        assert stats["config"]["strategy"] == "fair-fifo" and stats["config"]["maxQueueSize"] == 1000
        assert stats["config"]["maxBatchSize"] == 50 and stats["config"]["workerCount"] == 2
        assert stats["metrics"]["agents"]["agent-batch"]["completed"] == 3
        assert stats["metrics"]["tasksSubmitted"] >= 3 and "totalQueued" in stats["queue"]
    finally:
        server.post("/close", json={"tabId": tab})


# --- bugs: the server's own port, shutdown ------------------------------------------------------------
def test_the_servers_own_port_is_skipped_and_shutdown_ends_streams(server_process, shared_token):
    from bench.processes import free_port

    port = free_port()
    sp = server_process(config={"multiInstance": {"instancePortStart": port, "instancePortEnd": port + 20}},
                        token=shared_token, args=("server", "--port", str(port)))
    sp.port, sp.base = port, f"http://127.0.0.1:{port}"  # `pinchtab server --port` wins over PINCHTAB_PORT
    default = sp.wait_ready()["defaultInstance"]["id"]
    assert port < sp.get(f"/instances/{default}").json()["port"] <= port + 20
    r = sp.post("/instances/start", json={"port": str(port)})  # a string, as the original's clients send
    assert r.status_code == 409 and "server's own port" in r.json()["error"], r.text
    with sp.get(f"/instances/{default}/logs/stream?lines=0", stream=True, timeout=30) as stream:
        assert sp.post("/shutdown").json() == {"status": "shutting down"}
        events = sse_events(stream, until="end")
    assert events[-1][0] == "end"
    wait_until(lambda: sp.proc.poll() is not None, 40, 0.1)
