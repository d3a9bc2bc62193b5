"""The orchestrator's pieces on their own: ports, backoff, attach policy, rings, the manager's socket,
pidfile identity, and the server app's routing table. No browser and no bridge."""
from __future__ import annotations

import os
import socket
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.config import make_config

from app.config import AttachConfig, RestartConfig
from app.orchestrator import children
from app.orchestrator.client import ManagerClient
from app.orchestrator.control import ControlServer
from app.orchestrator.errors import AttachDisabled, AttachNotAllowed, ManagerUnavailable, PortUnavailable
from app.orchestrator.instances import Backoff, EventRing, Instance, check_attach
from app.orchestrator.manager import Manager
from app.orchestrator.ports import PortAllocator, can_bind


# --- ports ------------------------------------------------------------------------------------------
def test_allocator_skips_reserved_and_foreign_ports_and_rotates():
    foreign = {9001}
    ports = PortAllocator(9000, 9003, probe=lambda p: p not in foreign)
    assert [ports.allocate(), ports.allocate()] == [9000, 9002]
    ports.release(9000)
    assert ports.allocate() == 9003  # the cursor moves on: a just-freed port is not reused at once
    assert ports.allocate() == 9000
    with pytest.raises(PortUnavailable) as exc:
        ports.allocate()
    assert exc.value.code == "no_free_port" and "instancePortStart" in exc.value.details["setting"]


def listening_beside_a_free_port() -> socket.socket:
    """A listener on a port whose next port is free now (other tests' servers take ports too)."""
    for _ in range(50):
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        if can_bind(listener.getsockname()[1] + 1):
            listener.listen()
            return listener
        listener.close()
    raise AssertionError("no free port next to a listener in 50 tries")


def test_allocator_test_binds_to_find_a_real_listener():
    with listening_beside_a_free_port() as listener:
        taken = listener.getsockname()[1]
        ports = PortAllocator(taken, taken + 1)
        got = ports.allocate()
        assert got != taken
        with pytest.raises(PortUnavailable) as exc:
            ports.reserve(taken)
        assert exc.value.code == "port_in_use"
        with pytest.raises(PortUnavailable):
            ports.reserve(got)  # ours already


# --- restart policy -------------------------------------------------------------------------------
def test_backoff_doubles_up_to_the_cap_gives_up_and_forgets_after_a_stable_run():
    b = Backoff(RestartConfig(max_restarts=5, init_backoff_sec=2, max_backoff_sec=60, stable_after_sec=300))
    delays, n = [], 0
    for _ in range(5):
        n, d = b.next_delay(n, up_for_s=1.0)
        delays.append(d)
    assert delays == [2, 4, 8, 16, 32]
    assert b.next_delay(n, up_for_s=1.0) == (5, None)  # maxRestarts reached
    assert b.next_delay(n, up_for_s=301.0) == (1, 2)  # it ran long enough: a fresh count
    big = Backoff(RestartConfig(max_restarts=20, init_backoff_sec=2, max_backoff_sec=60, stable_after_sec=300))
    assert big.next_delay(10, None) == (11, 60)


# --- attach policy --------------------------------------------------------------------------------
def test_attach_policy_names_the_setting_that_refuses():
    off = AttachConfig(enabled=False, allow_hosts=("127.0.0.1",), allow_schemes=("ws",))
    with pytest.raises(AttachDisabled) as exc:
        check_attach(off, "ws://127.0.0.1:9222")
    assert exc.value.status == 403 and exc.value.details["setting"] == "security.attach.enabled"
    on = AttachConfig(enabled=True, allow_hosts=("127.0.0.1", "localhost", "::1"), allow_schemes=("ws", "http"))
    check_attach(on, "ws://127.0.0.1:9222/devtools/browser/abc")
    check_attach(on, "http://[::1]:9222")
    check_attach(on, "http://LOCALHOST:9222")
    with pytest.raises(AttachNotAllowed) as exc:
        check_attach(on, "ws://192.168.1.5:9222")
    assert exc.value.details["setting"] == "security.attach.allowHosts"
    with pytest.raises(AttachNotAllowed) as exc:
        check_attach(on, "wss://127.0.0.1:9222")
    assert exc.value.details["setting"] == "security.attach.allowSchemes"


# --- records and rings ----------------------------------------------------------------------------
def test_record_has_the_reference_shape_and_never_the_token():
    inst = Instance(id="inst_0123abcd", profile_id="prof_1", profile_name="work", port=9868, mode="headless")
    rec = inst.record()
    assert list(rec) == ["id", "profileId", "profileName", "port", "url", "mode", "headless", "status",
                         "startTime", "attached"]
    assert rec["url"] == "http://127.0.0.1:9868" and rec["headless"] is True and rec["status"] == "starting"
    assert inst.token not in repr(rec) and inst.token not in repr(inst)
    attached = Instance(id="inst_1", profile_id="", profile_name="x", port=1, mode="headless", attached=True,
                        cdp_url="ws://u:secret@127.0.0.1:9222/devtools/browser/a?token=abc")
    assert "secret" not in attached.record()["cdpUrl"] and "abc" not in attached.record()["cdpUrl"]


def test_event_ring_resumes_waits_and_reports_missed_events():
    ring = EventRing(max_events=3)
    assert ring.since(None) == {"events": [], "last": 0, "missed": False}
    for n in range(5):
        ring.publish("instance.started", {"id": f"inst_{n}"})
    res = ring.since(0)
    assert [e["id"] for e in res["events"]] == [3, 4, 5] and res["missed"] is True
    assert ring.since(4)["events"][0]["instance"] == {"id": "inst_4"}
    threading.Timer(0.05, ring.publish, args=("instance.stopped", {"id": "late"})).start()
    t0 = time.monotonic()
    res = ring.since(5, wait_s=5)
    assert res["events"][0]["type"] == "instance.stopped" and time.monotonic() - t0 < 4
    t0 = time.monotonic()
    assert ring.since(None, wait_s=0.05)["events"] == [] and time.monotonic() - t0 >= 0.05


# --- the manager's socket -------------------------------------------------------------------------
def test_socket_round_trip_errors_and_deadlines(tmp_path):
    from app.web.errors import Conflict

    # Deeper than sun_path allows: the client and server go through a directory descriptor.
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True, mode=0o700)
    release = threading.Event()

    def handle(op: str, args: dict[str, Any]) -> Any:
        if op == "get":
            raise Conflict("busy", code="profile_in_use", details={"profile": "work"})
        if op == "logs":
            release.wait(5)
        return {"op": op, "args": args}

    server = ControlServer(deep / "manager.sock", handle)
    server.start()
    try:
        assert oct(os.stat(deep / "manager.sock").st_mode & 0o777) == "0o600"
        client = ManagerClient(deep / "manager.sock")
        assert client.call("list", {"after": 3}) == {"op": "list", "args": {"after": 3}}
        with pytest.raises(Exception) as exc:
            client.get("inst_1")
        assert (exc.value.status, exc.value.code, exc.value.details) == (409, "profile_in_use", {"profile": "work"})
        with pytest.raises(Exception) as exc:
            client.call("reboot")
        assert exc.value.status == 400
        t0 = time.monotonic()
        with pytest.raises(ManagerUnavailable):
            client.call("logs", timeout_s=0.2)
        assert time.monotonic() - t0 < 2
        release.set()
    finally:
        server.stop()
    with pytest.raises(ManagerUnavailable):
        ManagerClient(deep / "manager.sock").call("list")


# --- pidfiles and orphans -------------------------------------------------------------------------
def test_a_pidfile_names_our_process_only_while_its_start_time_matches():
    me = os.getpid()
    ticks = children.proc_start_ticks(me)
    assert ticks is not None
    group = os.getpgid(me)
    assert children.orphan_group({"pid": me, "pgid": group, "startTicks": ticks}) == group
    assert children.orphan_group({"pid": me, "pgid": group, "startTicks": ticks + 1}) is None  # a reused pid
    assert children.orphan_group({"pid": 2 ** 22 + 7, "pgid": 2 ** 22 + 7, "startTicks": 1}) is None  # gone


def test_clean_orphans_kills_a_live_group_and_drops_its_pidfile(tmp_path):
    import json
    import subprocess
    import sys

    proc = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"], start_new_session=True)
    try:
        (tmp_path / "inst_x.json").write_text(json.dumps({"pid": proc.pid, "pgid": proc.pid,
                                                          "startTicks": children.proc_start_ticks(proc.pid)}))
        assert children.clean_orphans(tmp_path) == [proc.pid]
        assert proc.wait(5) is not None and not list(tmp_path.glob("*.json"))
    finally:
        proc.kill()
        proc.wait(5)


# --- the manager's bookkeeping and the server app, without processes --------------------------------
def test_child_config_is_ours_with_port_profile_state_dir_and_no_token(tmp_path):
    cfg = make_config(tmp_path, **{"server.token": "server-secret", "security.allowEvaluate": True})
    manager = Manager(cfg, os.getppid())
    inst = Instance(id="inst_1", profile_id="prof_1", profile_name="work", port=9870, mode="headed")
    data = manager.launcher.child_config(inst, tmp_path / "state")
    assert data["server"]["port"] == 9870 and data["server"]["bind"] == "127.0.0.1"
    assert data["server"]["token"] == "" and data["server"]["stateDir"] == str(tmp_path / "state")
    assert data["instanceDefaults"] == {**data["instanceDefaults"], "profile": "work", "mode": "headed"}
    assert data["security"]["allowEvaluate"] is True  # everything else is the server's own config


class _NoManager:
    """A client whose manager is gone."""

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise ManagerUnavailable("the instance manager is not running")

        return fail


def _server_app(tmp_path: Path, **overrides: Any) -> Any:
    from app.serving.apps import server_app as create_server_app

    app = create_server_app(make_config(tmp_path, **overrides), client=_NoManager(), start_watch=False)
    app.testing = True
    return app


def test_every_bridge_route_but_the_meta_ones_is_forwarded(tmp_path):
    from app.api import create_app

    bridge = create_app(make_config(tmp_path), start_browser=False)
    server = _server_app(tmp_path)

    def routes(app: Any, endpoint_prefix: str = "") -> set[tuple[str, str]]:
        return {(r.rule, m) for r in app.url_map.iter_rules() if r.endpoint.startswith(endpoint_prefix)
                for m in (r.methods or set()) - {"HEAD", "OPTIONS"}}

    # The WebSockets (debug sessions, the screencast) are relayed frame for frame.
    forwarded = routes(server, "proxy.") | routes(server, "debug_relay.") | routes(server, "screencast_relay.")
    # The server answers these itself: its health, document, shutdown and agent sessions.
    own = ("/health", "/openapi.json", "/help", "/shutdown", "/sessions", "/sessions/me", "/sessions/<session_id>",
           "/sessions/<session_id>/revoke", "/static/<path:filename>")
    wanted = {(rule, m) for rule, m in routes(bridge) if rule not in own}
    # Plus the original's path to one instance's screencast, which only the server has.
    wanted.add(("/instances/<instance_id>/proxy/screencast", "GET"))
    assert forwarded == wanted and ("/tabs/<tab_id>/snapshot", "GET") in forwarded
    assert {("/sessions/me", "GET"), ("/sessions/<session_id>/revoke", "POST")} <= routes(server, "sessions.")
    paths = server.test_client().get("/openapi.json").json["paths"]
    assert "/navigate" in paths and "/instances/start" in paths
    assert ("/shutdown", "POST") in routes(server, "server.") and ("/sessions", "POST") in routes(server, "sessions.")


def test_health_says_error_when_the_manager_is_gone(tmp_path):
    r = _server_app(tmp_path).test_client().get("/health")
    assert r.status_code == 503 and r.json["status"] == "error" and r.json["mode"] == "dashboard"
    assert r.json["defaultInstance"] is None


def test_a_query_token_opens_nothing_and_the_dashboard_needs_none(tmp_path):
    c = _server_app(tmp_path, **{"server.token": "tok"}).test_client()
    # As in the original, a token in a URL is no credential (URLs end up in logs): the event stream too.
    assert c.get("/api/events?token=tok").json["code"] == "missing_token"
    r = c.get("/api/events", headers={"Authorization": "Bearer tok"})
    assert r.status_code == 503 and r.json["code"] == "manager_unavailable"  # past the token check
    assert c.get("/instances?token=tok").json["code"] == "missing_token"
    page = c.get("/dashboard")
    assert page.status_code == 200 and b"Start instance" in page.data
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    assert c.get("/dashboard/dashboard.js").headers["Content-Type"].startswith("text/javascript")
    assert c.get("/dashboard/config.json").status_code == 404
    assert c.get("/navigate?url=x").status_code == 401


def test_server_mode_refuses_more_than_one_worker(tmp_path):
    from app.config import ConfigError
    from app.serving.gunicorn_apps import ServerApplication

    with pytest.raises(ConfigError) as exc:
        ServerApplication(make_config(tmp_path), {"workers": 2})
    assert exc.value.key == "workers" and "exactly one worker" in exc.value.reason


def test_manager_exits_when_its_parent_is_gone(tmp_path):
    import json
    import subprocess
    import sys

    from support import ROOT
    from support.waits import wait_until

    cfg = make_config(tmp_path, **{"multiInstance.strategy": "explicit"}).to_dict()
    (tmp_path / "server.json").write_text(json.dumps(cfg))
    parent = subprocess.Popen([sys.executable, "-c", "import signal; signal.pause()"])
    manager = subprocess.Popen([sys.executable, "-m", "app.orchestrator.manager", "--config",
                                str(tmp_path / "server.json"), "--parent", str(parent.pid)], cwd=str(ROOT),
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        client = ManagerClient.for_state_dir(cfg_state_dir(cfg))

        def answers() -> bool:
            try:
                return client.list()["instances"] == []
            except ManagerUnavailable:
                return False

        wait_until(answers, 20, 0.05)
        parent.kill()
        parent.wait(5)
        assert manager.wait(10) == 0
        err = manager.stderr.read().decode() if manager.stderr else ""
        assert f"parent process {parent.pid} is gone" in err
        assert not (Path(cfg_state_dir(cfg)) / "run" / "manager.sock").exists()
    finally:
        for p in (parent, manager):
            if p.poll() is None:
                p.kill()
                p.wait(5)


def cfg_state_dir(cfg: dict[str, Any]) -> Path:
    return Path(cfg["server"]["stateDir"])


class _OneInstance:
    """A client whose manager reports one instance."""

    def __init__(self, status: str, port: int) -> None:
        self.record = {"id": "inst_0000abcd", "profileId": "prof_1", "profileName": "default", "port": port,
                       "url": f"http://127.0.0.1:{port}", "mode": "headless", "headless": True, "status": status,
                       "startTime": "2026-01-01T00:00:00.000Z", "attached": False}

    def list(self, after: int | None = None, wait_s: float = 0.0) -> dict[str, Any]:
        return {"generation": 1, "default": self.record["id"],
                "instances": [{"record": self.record, "token": "internal", "restarting": False}]}


def test_a_starting_instance_answers_503_with_retry_after_and_a_dead_one_502(tmp_path, monkeypatch):
    from app.orchestrator.routes import proxy
    from app.serving.apps import server_app as create_server_app

    monkeypatch.setattr(proxy, "START_WAIT_S", 0.05)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        dead_port = s.getsockname()[1]
    for status, code, http_status in (("starting", "instance_starting", 503), ("running", "instance_unreachable", 502)):
        app = create_server_app(make_config(tmp_path), client=_OneInstance(status, dead_port), start_watch=False)
        r = app.test_client().get("/snapshot?format=compact")
        assert (r.status_code, r.json["code"]) == (http_status, code), r.json
        assert r.json["retryable"] is True
        assert (r.headers.get("Retry-After") == "2") == (status == "starting")


def test_the_servers_own_port_is_never_handed_out_or_reserved():
    ports = PortAllocator(9000, 9002, probe=lambda p: True, skip=frozenset({9000}))
    assert [ports.allocate(), ports.allocate()] == [9001, 9002]
    with pytest.raises(PortUnavailable) as info:
        ports.reserve(9000)
    assert "server's own port" in info.value.message
    with pytest.raises(PortUnavailable):
        ports.allocate()


def test_a_manager_skips_the_port_its_server_listens_on(tmp_path):
    config = make_config(tmp_path, **{"server.port": 9900, "multiInstance.instancePortStart": 9900,
                                      "multiInstance.instancePortEnd": 9901})
    manager = Manager(config, parent_pid=os.getpid())
    manager.ports._probe = lambda p: True  # type: ignore[attr-defined]
    assert manager.ports.allocate() == 9901


def test_allocation_policies_pick_among_running_instances():
    from app.orchestrator.mirror import InstanceMirror

    def record(iid: str, status: str, started: str) -> dict[str, Any]:
        return {"record": {"id": iid, "status": status, "startTime": started}, "token": "t"}

    mirror = InstanceMirror(ManagerClient(Path("/nonexistent")))
    mirror.apply({"generation": 1, "default": "a", "instances": [
        record("a", "running", "1"), record("b", "running", "2"), record("c", "starting", "0")]})
    assert {mirror.default_target("fcfs") for _ in range(5)} == {"a"}
    assert [mirror.default_target("round_robin") for _ in range(4)] == ["a", "b", "a", "b"]
    assert {mirror.default_target("random") for _ in range(50)} == {"a", "b"}
    mirror.apply({"generation": 2, "default": None, "instances": [record("c", "starting", "0")]})
    assert mirror.default_target("round_robin") == "c"  # none running: the one that is starting


@pytest.mark.parametrize(("strategy", "restarts"), [("simple", False), ("simple-autorestart", True),
                                                    ("always-on", True)])
def test_only_restarting_strategies_plan_a_restart_after_a_crash(tmp_path, strategy, restarts):
    from app.orchestrator.instances import AUTO_LAUNCH

    manager = Manager(make_config(tmp_path, **{"multiInstance.strategy": strategy}), parent_pid=os.getpid())
    inst = Instance(id="inst_0000000a", profile_id="p", profile_name="p", port=9999, mode="headless",
                    status="running", running_since=time.monotonic())
    with manager._lock:
        manager._fail(inst, "bridge exited")
    assert inst.status == "error" and (inst.restart_at is not None) == restarts
    assert ("not restarted" in inst.error) != restarts
    assert strategy in AUTO_LAUNCH  # each of these launches the default instance at start
