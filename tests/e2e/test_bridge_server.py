"""``pinchtab bridge`` as a user starts it: gunicorn, config, token, exit codes, clean stop."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from support import ROOT
from support.waits import wait_until

pytestmark = pytest.mark.e2e


def chrome_pids_with_home(home: Path) -> list[int]:
    """Chromium processes started with HOME=home (the bridge's browser inherits our env)."""
    from app.orchestrator.procfs import started_under_home

    return started_under_home(home)


def test_bridge_serves_the_api_and_stops_its_browser(bridge_process, site, tmp_path):
    bp = bridge_process()
    bp.wait_healthy()
    assert chrome_pids_with_home(tmp_path)  # the browser started with the server, not on a request
    r = requests.post(bp.base + "/navigate", json={"url": site.url("form.html")}, timeout=30)
    assert r.status_code == 200 and r.json()["title"] == "E2E Test - Form"
    snap = requests.get(bp.base + "/snapshot?filter=interactive&format=compact", timeout=30).text
    assert "e1 textbox Username:\n" in snap
    bp.stop()
    assert bp.proc.returncode == 0
    wait_until(lambda: not chrome_pids_with_home(tmp_path), 10)


def test_token_guards_every_route_but_health(bridge_process, site):
    bp = bridge_process(env={"PINCHTAB_TOKEN": "t0ken-secret"})
    bp.wait_healthy()
    assert requests.get(bp.base + "/health", timeout=5).status_code == 200
    r = requests.get(bp.base + "/tabs", timeout=5)
    assert r.status_code == 401 and r.json()["code"] == "missing_token"
    r = requests.get(bp.base + "/tabs", headers={"Authorization": "Bearer nope"}, timeout=5)
    assert r.status_code == 401 and r.json()["code"] == "bad_token"
    assert "Bearer" in r.headers["WWW-Authenticate"]
    r = requests.get(bp.base + "/tabs", headers={"Authorization": "Bearer t0ken-secret"}, timeout=5)
    assert r.status_code == 200
    assert "t0ken-secret" not in bp.output()  # secrets never reach a log


def test_legacy_bridge_token_is_honoured(bridge_process):
    bp = bridge_process(env={"BRIDGE_TOKEN": "legacy"})
    bp.wait_healthy()
    assert requests.get(bp.base + "/tabs", timeout=5).status_code == 401
    assert requests.get(bp.base + "/tabs", headers={"Authorization": "Bearer legacy"}, timeout=5).status_code == 200


def run_cli(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    full = {**os.environ, "HOME": str(tmp_path), **(env or {})}
    full.pop("PINCHTAB_TOKEN", None)
    return subprocess.run([sys.executable, "-m", "app.clients.cli", *args], cwd=str(ROOT), env=full,
                          capture_output=True, text=True, timeout=30)


def test_invalid_config_stops_the_start_with_key_and_reason(tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"server": {"port": "not-a-port"}}))
    res = run_cli(tmp_path, "bridge", env={"PINCHTAB_CONFIG": str(cfg)})
    assert res.returncode == 2
    assert "server.port" in res.stderr and "Traceback" not in res.stderr
    cfg.write_text("{ not json")
    res = run_cli(tmp_path, "bridge", env={"PINCHTAB_CONFIG": str(cfg)})
    assert res.returncode == 2 and str(cfg) in res.stderr and "line 1" in res.stderr


def test_exposed_bind_without_token_is_refused(tmp_path):
    res = run_cli(tmp_path, "bridge", "--bind", "0.0.0.0")
    assert res.returncode == 2 and "token" in res.stderr and "Traceback" not in res.stderr


def test_help_explains_the_commands(tmp_path):
    res = run_cli(tmp_path, "bridge", "--help")
    assert res.returncode == 0 and "--cdp-url" in res.stdout and "--port" in res.stdout


def test_attach_to_a_running_chrome_by_cdp_url_and_leave_it_running(bridge_process, browser, site):
    ws = browser.process.ws_url
    http = f"http://127.0.0.1:{browser.process.port}"
    bp = bridge_process(args=("--cdp-url", http))
    bp.wait_healthy()
    r = requests.post(bp.base + "/navigate", json={"url": site.url("table.html")}, timeout=30)
    assert r.status_code == 200 and r.json()["title"] == "Orders"
    assert r.json()["tabId"] in {p["targetId"] for p in browser.pages()}
    requests.post(bp.base + "/close", json={"tabId": r.json()["tabId"]}, timeout=10)
    bp.stop()
    assert browser.alive() and ws  # the attached browser is left running


def test_post_shutdown_stops_server_and_browser(bridge_process, tmp_path):
    bp = bridge_process()
    bp.wait_healthy()
    assert requests.post(bp.base + "/shutdown", timeout=5).json() == {"status": "shutting down"}
    bp.proc.wait(timeout=20)
    assert bp.proc.returncode == 0
    wait_until(lambda: not chrome_pids_with_home(tmp_path), 10)


def test_a_profile_keeps_cookies_and_storage_across_restarts_and_is_locked(bridge_process, site, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"security": {"allowEvaluate": True}}))
    env = {"PINCHTAB_CONFIG": str(cfg)}
    first = bridge_process(env=env, args=("--profile", "work"))
    first.wait_healthy()
    tab = requests.post(first.base + "/navigate", json={"url": site.url("form.html")}, timeout=30).json()["tabId"]
    js = "document.cookie = 'seen=yes; max-age=86400'; localStorage.setItem('note', 'kept'); 1"
    assert requests.post(first.base + "/evaluate", json={"expression": js, "tabId": tab}, timeout=10).json() == {"result": 1}
    second = run_cli(tmp_path, "bridge", "--profile", "work", "--port", "1", env=env)
    assert second.returncode == 2 and "work" in second.stderr and "Traceback" not in second.stderr
    first.stop()
    again = bridge_process(env=env, args=("--profile", "work"))
    again.wait_healthy()
    tab = requests.post(again.base + "/navigate", json={"url": site.url("form.html")}, timeout=30).json()["tabId"]
    got = requests.post(again.base + "/evaluate", json={"expression": "[document.cookie, localStorage.getItem('note')]",
                                                        "tabId": tab}, timeout=10).json()["result"]
    assert got == ["seen=yes", "kept"]
    log = "".join(p.read_text() for p in (tmp_path / ".pinchtab" / "activity").glob("events-*.jsonl"))
    assert '"path":"/evaluate"' in log.replace(" ", "") and "localStorage.setItem" not in log
