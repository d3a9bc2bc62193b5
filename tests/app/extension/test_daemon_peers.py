"""``pinchtab ext daemon`` and the bridge's extension port serve their own user only.

The other user is real: a Python subprocess run as ``nobody`` (uid 65534), which needs this test to
run as root (as in CI); elsewhere these tests are skipped. The other user's client is stdlib
``http.client`` (its interpreter need not see our packages) and prints what it got as JSON: a status,
or the error that ended the connection. The same client run as ourselves is the control: it works.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from flask import Flask
from support.config import make_config
from support.waits import wait_until

from app.extension.bridge import ExtensionServer
from app.extension.daemon import Daemon
from bench.bench_extension import socket_command

NOBODY = 65534
SECRET = "correct horse battery staple"
EXTENSION = {"Origin": "chrome-extension://abc", "Content-Type": "application/json", "Sec-Fetch-Site": "none"}
POLL = {"Accept": "application/json", "Sec-Fetch-Site": "none"}

CLIENT = r"""
import http.client, json, sys
host, port, method, path, headers, body = sys.argv[1:7]
try:
    conn = http.client.HTTPConnection(host, int(port), timeout=5)
    conn.request(method, path, body=body.encode() or None, headers=json.loads(headers))
    response = conn.getresponse()
    print(json.dumps({"status": response.status, "body": response.read().decode("utf-8", "replace")}))
except (OSError, http.client.HTTPException) as exc:
    print(json.dumps({"error": type(exc).__name__}))
"""

@pytest.fixture(scope="module")
def python_for_anyone() -> str:
    """An interpreter the other user may run (a virtualenv's may sit in a folder only we can enter)."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        pytest.skip("playing another user needs Linux and root")
    candidates = [sys.executable, os.path.realpath(sys.executable), getattr(sys, "_base_executable", ""),
                  shutil.which("python3", path=os.defpath) or ""]
    for exe in dict.fromkeys(c for c in candidates if c):
        try:
            done = subprocess.run([exe, "-I", "-c", "import http.client"], user=NOBODY, group=NOBODY,
                                  extra_groups=[], cwd="/", env={}, capture_output=True, timeout=30)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return exe
    pytest.skip("no Python interpreter that another user may run")


def request_as(python: str, uid: int | None, url: str, method: str, path: str,
               headers: dict[str, str], body: str = "") -> dict[str, Any]:
    """One HTTP request by a process of ``uid`` (None: ours); what it got: {status, body} or {error}."""
    host, _, port = url.removeprefix("http://").rpartition(":")
    as_user: dict[str, Any] = {"user": uid, "group": uid, "extra_groups": []} if uid is not None else {}
    done = subprocess.run([python, "-I", "-c", CLIENT, host, port, method, path, json.dumps(headers), body],
                          cwd="/", env={}, capture_output=True, text=True, timeout=30, **as_user)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture
def daemon(tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(make_config(tmp_path), socket_path=tmp_path / "sak" / "browser.sock", port=0).start()
    yield d
    d.stop()


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(2) as p:
        yield p


def health(daemon: Daemon) -> dict[str, Any]:
    return requests.get(f"{daemon.url}/health", timeout=5).json()


def take(daemon: Daemon) -> dict[str, Any]:
    """The next command, polled as the owner's extension polls."""
    def polled() -> dict[str, Any] | None:
        r = requests.get(f"{daemon.url}/poll", headers=POLL, timeout=5)
        assert r.status_code in (200, 204), r.text
        return r.json() if r.status_code == 200 else None
    return wait_until(polled, 5)


def test_another_users_poll_gets_nothing_and_the_command_waits_for_the_owner(
        daemon: Daemon, pool: ThreadPoolExecutor, python_for_anyone: str, caplog: pytest.LogCaptureFixture) -> None:
    typed: Future = pool.submit(socket_command, daemon.sockets.path,
                                {"type": "type", "requestId": "pw",
                                 "data": {"selector": "input#password", "text": SECRET, "tabId": None}})
    # The owner's poll, by the same client the other user runs: it works, and takes the selector check.
    wait_until(lambda: health(daemon)["queued"] == 1, 5)
    mine = request_as(python_for_anyone, None, daemon.url, "GET", "/poll", POLL)
    assert mine["status"] == 200
    check = json.loads(mine["body"])
    assert (check["type"], check["data"]["selector"]) == ("query", "input#password")
    requests.post(f"{daemon.url}/response", headers=EXTENSION, timeout=5, data=json.dumps(
        {"requestId": check["requestId"], "success": True, "data": {"exists": True, "count": 1}}))
    wait_until(lambda: health(daemon)["queued"] == 1, 5)   # now the type itself, with the password

    theirs = request_as(python_for_anyone, NOBODY, daemon.url, "GET", "/poll", POLL)
    assert "status" not in theirs, theirs   # closed unanswered: not even a 403
    assert theirs["error"] in {"RemoteDisconnected", "ConnectionResetError", "BrokenPipeError"}
    assert {k: health(daemon)[k] for k in ("queued", "pending")} == {"queued": 1, "pending": 1}
    refusals = [r.getMessage() for r in caplog.records if r.name == "app.access.peer_uid" and r.levelname == "WARNING"]
    assert len(refusals) == 1 and f"uid {NOBODY}, another user" in refusals[0]
    assert SECRET not in caplog.text

    command = take(daemon)   # the owner's extension still gets it
    assert command["type"] == "type" and command["data"]["text"] == SECRET
    requests.post(f"{daemon.url}/response", headers=EXTENSION, timeout=5,
                  data=json.dumps({"requestId": "pw", "success": True, "data": {"typed": True}}))
    assert typed.result(10) == {"requestId": "pw", "success": True, "data": {"typed": True}}


def test_another_users_forged_response_does_not_reach_the_waiting_client(
        daemon: Daemon, pool: ThreadPoolExecutor, python_for_anyone: str) -> None:
    answer: Future = pool.submit(socket_command, daemon.sockets.path, {"type": "get_tabs", "data": {}, "requestId": 9})
    assert take(daemon)["requestId"] == 9
    forged = json.dumps({"requestId": 9, "success": True, "data": [{"id": 1, "url": "https://evil.example/"}]})
    theirs = request_as(python_for_anyone, NOBODY, daemon.url, "POST", "/response", EXTENSION, forged)
    assert "status" not in theirs, theirs
    state = health(daemon)
    assert (state["pending"], state["unknownResponses"]) == (1, 0)   # never read, so not even counted
    assert not answer.done()
    requests.post(f"{daemon.url}/response", headers=EXTENSION, timeout=5,
                  data=json.dumps({"requestId": 9, "success": True, "data": []}))
    assert answer.result(10) == {"requestId": 9, "success": True, "data": []}


def test_the_bridges_extension_port_serves_its_own_user_only(python_for_anyone: str) -> None:
    app = Flask("port")
    app.add_url_rule("/ping", "ping", lambda: "pong")
    with ExtensionServer(app, 0) as server:
        assert server.same_user_only
        url = f"http://127.0.0.1:{server.port}"
        assert request_as(python_for_anyone, None, url, "GET", "/ping", {}) == {"status": 200, "body": "pong"}
        assert "status" not in request_as(python_for_anyone, NOBODY, url, "GET", "/ping", {})
        assert requests.get(f"{url}/ping", timeout=5).text == "pong"   # and keeps serving its owner

