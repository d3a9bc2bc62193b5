"""``pinchtab ext daemon`` against the original extension's HTTP protocol and the original CLI's socket
protocol, both played here (the real-browser test comes with our own extension).

The extension is played with ``requests`` as Chromium sends it: polls with no Origin and
``Sec-Fetch-Site: none``, results with a ``chrome-extension://`` Origin. The original CLI writes one
line, ends its side of the connection and reads the answer.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
import requests
from flask import Flask
from support.config import make_config
from support.waits import wait_until

from app.clients.cli import main
from app.extension.channel import init_channel
from app.extension.commands import STOPPING_ERROR, TIMEOUT_ERROR, CommandQueue
from app.extension.daemon import Daemon
from app.extension.errors import DaemonRunning
from app.extension.http import init_endpoints
from app.process.local_server import LocalServer
from app.web import errors
from app.web.flask_app import App
from app.web.openapi import init_api

EXTENSION_ID = "abcdefghijklmnopabcdefghijklmnop"
PAGE = {"Origin": "http://localhost:8000", "Sec-Fetch-Site": "same-site"}
REPO = Path(__file__).resolve().parents[3]


class Extension:
    """The original extension, as its requests look on the wire."""

    def __init__(self, url: str, extension_id: str = "abc") -> None:
        self.url = url
        self.origin = f"chrome-extension://{extension_id}"

    def poll(self, headers: dict[str, str] | None = None) -> requests.Response:
        return requests.get(f"{self.url}/poll", timeout=5,
                            headers=headers if headers is not None else
                            {"Accept": "application/json", "Sec-Fetch-Site": "none"})

    def take(self, timeout_s: float = 5.0) -> dict[str, Any]:
        """The next command, polling as the extension does."""
        def polled() -> dict[str, Any] | None:
            r = self.poll()
            assert r.status_code in (200, 204), r.text
            return r.json() if r.status_code == 200 else None
        return wait_until(polled, timeout_s)

    def respond(self, body: Any, headers: dict[str, str] | None = None) -> requests.Response:
        data = body if isinstance(body, (str, bytes)) else json.dumps(body)
        return requests.post(f"{self.url}/response", data=data, timeout=5,
                             headers=headers if headers is not None else
                             {"Origin": self.origin, "Content-Type": "application/json", "Sec-Fetch-Site": "none"})

    def health(self) -> dict[str, Any]:
        return requests.get(f"{self.url}/health", timeout=5).json()


def connect(path: Path) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(str(path))
    return s


def read_lines(s: socket.socket, count: int) -> list[dict[str, Any]]:
    buffer = b""
    while buffer.count(b"\n") < count:
        chunk = s.recv(65536)
        if not chunk:
            break
        buffer += chunk
    return [json.loads(line) for line in buffer.split(b"\n") if line.strip()]


def original_cli(path: Path, command: dict[str, Any]) -> dict[str, Any]:
    """One command as browser.js sends it: a line, then the end of its side; the answer line."""
    with connect(path) as s:
        s.sendall(json.dumps(command).encode() + b"\n")
        s.shutdown(socket.SHUT_WR)
        [answer] = read_lines(s, 1)
        assert s.recv(1) == b""  # and the daemon closes its side
        return answer


@pytest.fixture
def pool() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(4) as p:
        yield p


@pytest.fixture
def start(tmp_path: Path) -> Iterator[Callable[..., Daemon]]:
    made: list[Daemon] = []

    def start_daemon(**overrides: Any) -> Daemon:
        config = make_config(tmp_path, **overrides)
        daemon = Daemon(config, socket_path=tmp_path / "sak" / "browser" / "browser.sock", port=0).start()
        made.append(daemon)
        return daemon

    yield start_daemon
    for daemon in made:
        daemon.stop()


@pytest.fixture
def daemon(start: Callable[..., Daemon]) -> Daemon:
    return start()


@pytest.fixture
def extension(daemon: Daemon) -> Extension:
    return Extension(daemon.url)


def pending_is(extension: Extension, count: int) -> None:
    wait_until(lambda: extension.health()["pending"] == count, 5)


# --- the two original protocols, end to end

def test_the_original_cli_and_extension_round_trip_with_a_numeric_request_id(
        daemon: Daemon, extension: Extension, pool: ThreadPoolExecutor) -> None:
    answer: Future = pool.submit(original_cli, daemon.sockets.path,
                                 {"type": "get_tabs", "data": {}, "requestId": 1732000000123})
    command = extension.take()
    assert command == {"type": "get_tabs", "data": {}, "requestId": 1732000000123}
    result = {"requestId": 1732000000123, "success": True,
              "data": [{"id": 7, "url": "http://x/", "title": "X", "active": True, "windowId": 1}]}
    r = extension.respond(result, headers={"Origin": extension.origin, "Content-Type": "text/plain"})
    assert r.status_code == 200 and r.json() == {"ok": True, "matched": True}
    assert answer.result(10) == result
    assert "Access-Control-Allow-Origin" not in r.headers


def test_several_commands_on_one_connection_are_answered_in_the_order_they_finish(
        daemon: Daemon, extension: Extension) -> None:
    with connect(daemon.sockets.path) as s:
        page_text = {"selector": "body", "mode": "page_text"}   # a query that needs no selector check first
        s.sendall(b"".join(json.dumps({"type": "query", "data": page_text, "requestId": i}).encode() + b"\n"
                           for i in (1, 2, 3)))
        assert [extension.take()["requestId"] for _ in range(3)] == [1, 2, 3]  # first in, first out
        for rid in (3, 1, 2):
            extension.respond({"requestId": rid, "success": True, "data": rid * 10})
        assert [(a["requestId"], a["data"]) for a in read_lines(s, 3)] == [(3, 30), (1, 10), (2, 20)]


def test_answers_still_owed_when_the_client_ends_its_side_are_written_then_the_connection_closes(
        daemon: Daemon, extension: Extension) -> None:
    with connect(daemon.sockets.path) as s:
        s.sendall(b'{"type":"get_tabs","data":{},"requestId":"a"}\n{"type":"get_tabs","data":{},"requestId":"b"}\n')
        s.shutdown(socket.SHUT_WR)
        for rid in ("a", "b"):
            assert extension.take()["requestId"] == rid
        extension.respond({"requestId": "b", "success": True, "data": 2})
        extension.respond({"requestId": "a", "success": True, "data": 1})
        assert [a["requestId"] for a in read_lines(s, 2)] == ["b", "a"]
        assert s.recv(1) == b""


# --- web pages are kept out

def test_page_like_requests_are_refused_and_the_command_stays_queued(
        daemon: Daemon, extension: Extension, pool: ThreadPoolExecutor) -> None:
    answer: Future = pool.submit(original_cli, daemon.sockets.path, {"type": "get_tabs", "data": {}, "requestId": 5})
    pending_is(extension, 1)
    # The web-origin policy in front of every route refuses what a page sends; the extension's own
    # endpoints refuse even this port's own origin (it serves no pages).
    for headers, code in ((PAGE, "origin_not_allowed"), ({"Sec-Fetch-Site": "cross-site"}, "origin_not_allowed"),
                          ({"Origin": "http://127.0.0.1:19222"}, "origin_not_allowed"),
                          ({"Origin": "null", "Sec-Fetch-Site": "none"}, "origin_not_allowed"),
                          ({"Origin": extension.url}, "not_extension")):
        r = extension.poll(headers)
        assert r.status_code == 403 and r.json()["code"] == code, headers
        assert "Access-Control-Allow-Origin" not in r.headers
    forged = extension.respond({"requestId": 5, "success": True, "data": "forged"},
                               headers={**PAGE, "Content-Type": "text/plain"})
    assert forged.status_code == 403 and forged.json()["code"] == "origin_not_allowed"
    preflight = requests.options(f"{extension.url}/poll", timeout=5, headers={
        "Origin": "http://localhost:8000", "Access-Control-Request-Method": "GET"})
    assert preflight.status_code == 403
    assert not [h for h in preflight.headers if h.lower().startswith("access-control-")]
    assert requests.head(f"{extension.url}/poll", timeout=5).status_code == 405  # would take the command
    assert {k: extension.health()[k] for k in ("pending", "queued")} == {"pending": 1, "queued": 1}
    # The extension still gets it, and its result is the one the client reads.
    assert extension.take()["requestId"] == 5
    extension.respond({"requestId": 5, "success": True, "data": "real"})
    assert answer.result(10)["data"] == "real"


def test_allowed_ids_admit_that_extension_only(start: Callable[..., Daemon], pool: ThreadPoolExecutor) -> None:
    daemon = start(**{"extension.allowedIds": [EXTENSION_ID]})
    stranger, ours = Extension(daemon.url, "p" * 32), Extension(daemon.url, EXTENSION_ID)
    answer: Future = pool.submit(original_cli, daemon.sockets.path, {"type": "get_tabs", "data": {}, "requestId": 1})
    command = ours.take()  # polls carry no Origin: the id is checked where one is sent
    refused = stranger.respond({"requestId": command["requestId"], "success": True, "data": "forged"})
    assert refused.status_code == 403 and refused.json()["code"] == "origin_not_allowed"
    assert ours.respond({"requestId": 1, "success": True, "data": "ok"}).status_code == 200
    assert answer.result(10)["data"] == "ok"


def test_a_pairing_token_is_required_when_set() -> None:
    app = Flask("paired")
    errors.register(app)
    init_endpoints(app, init_api(app, "t", "t"), CommandQueue(timeout_s=5), pairing="s3cret")
    client = app.test_client()
    ext = {"Sec-Fetch-Site": "none"}
    assert client.get("/poll", headers=ext).json["code"] == "missing_pairing"
    assert client.get("/poll", headers={**ext, "Authorization": "Bearer nope"}).status_code == 401
    assert client.get("/poll", headers={**ext, "Authorization": "Bearer s3cret"}).status_code == 204
    assert client.post("/response", data="{}", headers=ext).status_code == 401
    assert client.get("/health").status_code == 200


def test_the_daemon_documents_its_endpoints(extension: Extension) -> None:
    paths = requests.get(f"{extension.url}/openapi.json", timeout=5).json()["paths"]
    assert {"/poll", "/response", "/health"} <= set(paths)
    assert set(paths["/poll"]["get"]["responses"]) >= {"200", "204"}


# --- bad input on both sides

def test_malformed_json_on_the_http_side_answers_400_and_the_daemon_keeps_serving(
        daemon: Daemon, extension: Extension) -> None:
    for body in ("{not json", "[1, 2]", ""):
        r = extension.respond(body)
        assert r.status_code == 400 and r.json()["code"] == "bad_json", body
    r = extension.respond({"requestId": "nobody-waits", "success": True})
    assert r.status_code == 200 and r.json()["matched"] is False
    assert extension.health()["unknownResponses"] == 1
    assert extension.poll().status_code == 204


def test_malformed_lines_on_the_socket_get_an_error_answer_and_the_connection_goes_on(
        daemon: Daemon, extension: Extension) -> None:
    with connect(daemon.sockets.path) as s:
        s.sendall(b'{nope\n[1]\n{"type":"get_tabs","data":{}}\n{"type":"get_tabs","data":{},"requestId":9}\n')
        parse_error, not_object, no_id = read_lines(s, 3)
        assert parse_error["success"] is False and "Expecting property name" in parse_error["error"]
        assert not_object == {"requestId": None, "success": False, "error": "a command must be a JSON object"}
        assert no_id["success"] is False and "requestId" in no_id["error"]
        assert extension.take()["requestId"] == 9
        extension.respond({"requestId": 9, "success": True, "data": []})
        assert read_lines(s, 1) == [{"requestId": 9, "success": True, "data": []}]


# --- the socket file

def test_the_socket_is_0600_in_a_0700_folder(daemon: Daemon) -> None:
    path = daemon.sockets.path
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    assert stat.S_IMODE(os.lstat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700


def test_a_stale_socket_is_replaced_and_a_live_one_refused(tmp_path: Path, start: Callable[..., Daemon]) -> None:
    path = tmp_path / "sak" / "browser" / "browser.sock"
    path.parent.mkdir(parents=True)
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(str(path))
    stale.close()  # the file stays, nothing listens: a crashed daemon's
    daemon = start()
    with connect(path):
        pass
    with pytest.raises(DaemonRunning, match="another daemon is running"):
        start()
    assert path.exists()  # the refused one left the live socket alone
    daemon.stop()
    assert not path.exists()


def test_binding_beyond_loopback_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("PINCHTAB_CONFIG", raising=False)
    status = main(["ext", "daemon", "--bind", "0.0.0.0", "--port", "0", "--socket", str(tmp_path / "s.sock")])
    assert status == 2
    assert "loopback only" in capsys.readouterr().err
    assert not (tmp_path / "s.sock").exists()


# --- deadlines and stopping

def test_a_command_nobody_answers_times_out_and_leaves_the_queue(start: Callable[..., Daemon]) -> None:
    daemon = start(**{"extension.commandTimeoutSec": 1})
    extension = Extension(daemon.url)
    answer = original_cli(daemon.sockets.path, {"type": "get_tabs", "data": {}, "requestId": 42})
    assert answer == {"requestId": 42, "success": False, "error": TIMEOUT_ERROR}
    assert extension.poll().status_code == 204  # the original would hand it out now
    health = extension.health()
    assert (health["pending"], health["queued"], health["timedOut"]) == (0, 0, 1)


def test_stopping_the_daemon_answers_a_waiting_client_with_an_error(
        daemon: Daemon, extension: Extension, pool: ThreadPoolExecutor) -> None:
    answer: Future = pool.submit(original_cli, daemon.sockets.path, {"type": "get_tabs", "data": {}, "requestId": 3})
    pending_is(extension, 1)
    daemon.stop()
    assert answer.result(10) == {"requestId": 3, "success": False, "error": STOPPING_ERROR}
    assert not daemon.sockets.path.exists()


def test_sigterm_stops_the_daemon_process_cleanly(tmp_path: Path) -> None:
    path = tmp_path / "d" / "browser.sock"
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONPATH": str(REPO)}
    env.pop("PINCHTAB_CONFIG", None)
    proc = subprocess.Popen([sys.executable, "-m", "app.clients.cli", "ext", "daemon", "--port", "0",
                             "--socket", str(path)], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_until(path.exists, 30)
        with connect(path) as s:
            s.sendall(b'{"type":"get_tabs","data":{},"requestId":1}\n')

            def pending() -> bool:
                with connect(path) as h:
                    h.sendall(b'{"type":"pinchtab.health","requestId":"h"}\n')
                    return read_lines(h, 1)[0]["data"]["pending"] == 1
            wait_until(pending, 10)
            proc.send_signal(signal.SIGTERM)
            assert read_lines(s, 1) == [{"requestId": 1, "success": False, "error": STOPPING_ERROR}]
        assert proc.wait(10) == 0
        assert not path.exists()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)


# --- pinchtab ext <command>

def test_the_cli_without_a_daemon_says_so_and_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "none" / "browser.sock"
    assert main(["ext", "--socket", str(path), "get_tabs"]) == 1
    out = capsys.readouterr()
    assert out.out == ""
    assert f"no daemon at {path}: start it with pinchtab ext daemon" in out.err


def test_the_cli_sends_the_originals_data_and_prints_the_answer(
        daemon: Daemon, extension: Extension, pool: ThreadPoolExecutor, capsys: pytest.CaptureFixture[str]) -> None:
    status: Future = pool.submit(main, ["ext", "--socket", str(daemon.sockets.path), "navigate", "http://x/", "5"])
    command = extension.take()
    assert (command["type"], command["data"]) == ("navigate", {"url": "http://x/", "tabId": 5})
    extension.respond({"requestId": command["requestId"], "success": True, "data": {"tabId": 5, "url": "http://x/"}})
    assert status.result(10) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == {"requestId": command["requestId"], "success": True, "data": {"tabId": 5, "url": "http://x/"}}


def test_a_click_on_a_missing_selector_fails_with_the_reason_and_is_not_sent(
        daemon: Daemon, extension: Extension, pool: ThreadPoolExecutor, capsys: pytest.CaptureFixture[str]) -> None:
    status: Future = pool.submit(main, ["ext", "--socket", str(daemon.sockets.path), "click", "#missing", "1"])
    check = extension.take()
    assert (check["type"], check["data"]) == ("query", {"selector": "#missing", "mode": "exists", "options": {}})
    extension.respond({"requestId": check["requestId"], "success": True, "data": {"exists": True, "count": 1}})
    assert status.result(10) == 1
    printed = json.loads(capsys.readouterr().out)
    assert (printed["success"], printed["error"]) == (False, "Element not found: #missing at index 1")
    assert extension.poll().status_code == 204  # the click never went out


def test_an_invalid_selector_fails_for_the_original_cli_too(
        daemon: Daemon, extension: Extension, pool: ThreadPoolExecutor) -> None:
    answer: Future = pool.submit(original_cli, daemon.sockets.path,
                                 {"type": "type", "data": {"selector": "a[", "text": "hi", "tabId": None},
                                  "requestId": 77})
    check = extension.take()
    extension.respond({"requestId": check["requestId"], "success": True, "data": None})
    assert answer.result(10) == {"requestId": 77, "success": False, "error": "Invalid selector: a["}


def test_a_query_with_invalid_css_fails_with_the_reason_and_a_valid_one_is_answered(
        daemon: Daemon, extension: Extension, pool: ThreadPoolExecutor) -> None:
    bad: Future = pool.submit(original_cli, daemon.sockets.path,
                              {"type": "query", "data": {"selector": "div[[", "mode": "exists", "options": {}},
                               "requestId": 31})
    check = extension.take()
    extension.respond({"requestId": check["requestId"], "success": True, "data": None})  # as the original answers
    assert bad.result(10) == {"requestId": 31, "success": False, "error": "Invalid selector: div[["}
    good: Future = pool.submit(original_cli, daemon.sockets.path,
                               {"type": "query", "data": {"selector": "h1", "mode": "text"}, "requestId": 32})
    check = extension.take()
    extension.respond({"requestId": check["requestId"], "success": True, "data": {"exists": True, "count": 1}})
    query = extension.take()
    assert query["requestId"] == 32
    extension.respond({"requestId": 32, "success": True, "data": "Title"})
    assert good.result(10) == {"requestId": 32, "success": True, "data": "Title"}


def test_a_click_whose_selector_matches_goes_out_after_the_check(
        daemon: Daemon, extension: Extension, pool: ThreadPoolExecutor) -> None:
    answer: Future = pool.submit(original_cli, daemon.sockets.path,
                                 {"type": "click", "data": {"selector": "#go", "index": 0, "tabId": None},
                                  "requestId": 8})
    check = extension.take()
    extension.respond({"requestId": check["requestId"], "success": True, "data": {"exists": True, "count": 1}})
    click = extension.take()
    assert click == {"type": "click", "data": {"selector": "#go", "index": 0, "tabId": None}, "requestId": 8}
    extension.respond({"requestId": 8, "success": True, "data": {"clicked": True, "selector": "#go", "index": 0}})
    assert answer.result(10)["data"]["clicked"] is True


def test_the_cli_says_the_extension_is_not_connected_after_the_timeout(
        start: Callable[..., Daemon], capsys: pytest.CaptureFixture[str]) -> None:
    daemon = start(**{"extension.commandTimeoutSec": 1})
    assert main(["ext", "--socket", str(daemon.sockets.path), "get_tabs"]) == 1
    out = capsys.readouterr()
    assert json.loads(out.out)["error"] == TIMEOUT_ERROR
    assert "the extension is not connected" in out.err


def test_requests_of_two_clients_do_not_cross(daemon: Daemon, extension: Extension) -> None:
    results: dict[str, Any] = {}

    def client(rid: str) -> None:
        results[rid] = original_cli(daemon.sockets.path, {"type": "get_tabs", "data": {}, "requestId": rid})

    threads = [threading.Thread(target=client, args=(rid,)) for rid in ("p", "q")]
    for t in threads:
        t.start()
    taken = [extension.take(), extension.take()]
    for command in reversed(taken):
        extension.respond({"requestId": command["requestId"], "success": True, "data": command["requestId"] * 2})
    for t in threads:
        t.join(10)
    assert results == {"p": {"requestId": "p", "success": True, "data": "pp"},
                       "q": {"requestId": "q", "success": True, "data": "qq"}}


def test_our_extensions_held_poll_gets_a_command_the_moment_it_is_sent(
        daemon: Daemon, extension: Extension, pool: ThreadPoolExecutor) -> None:
    held = pool.submit(requests.get, f"{daemon.url}/poll?wait=10", timeout=15,
                       headers={"Accept": "application/json", "Sec-Fetch-Site": "none"})
    wait_until(lambda: extension.health()["extensionSeenAt"] is not None, 5)
    answer = pool.submit(original_cli, daemon.sockets.path, {"type": "get_tabs", "data": {}, "requestId": 41})
    r = held.result(10)
    assert r.status_code == 200 and r.json()["requestId"] == 41
    extension.respond({"requestId": 41, "success": True, "data": []})
    assert answer.result(10)["success"] is True
    bad = requests.get(f"{daemon.url}/poll?wait=99", timeout=5, headers={"Sec-Fetch-Site": "none"})
    assert bad.status_code == 400 and bad.json()["code"] == "bad_wait"


# --- our extension's command channel

def channel(daemon: Daemon, origin: str | None = "chrome-extension://abc") -> Any:
    import websocket

    kwargs: dict[str, Any] = {"origin": origin} if origin else {"suppress_origin": True}
    return websocket.create_connection(daemon.url.replace("http", "ws") + "/commands", timeout=5, **kwargs)


def test_the_command_channel_carries_commands_and_results(daemon: Daemon, pool: ThreadPoolExecutor) -> None:
    ws = channel(daemon)
    ws.send(json.dumps({"type": "hello", "pairing": ""}))
    answer = pool.submit(original_cli, daemon.sockets.path, {"type": "get_tabs", "data": {}, "requestId": 7})
    command = json.loads(ws.recv())
    assert command == {"type": "get_tabs", "data": {}, "requestId": 7}
    ws.send(json.dumps({"requestId": 7, "success": True, "data": [{"id": 1}]}))
    assert answer.result(10) == {"requestId": 7, "success": True, "data": [{"id": 1}]}
    ws.close()


def test_web_pages_cannot_open_the_command_channel(daemon: Daemon) -> None:
    import websocket

    for origin in ("http://localhost:8000", None):
        with pytest.raises(websocket.WebSocketBadStatusException) as refused:
            channel(daemon, origin)
        assert refused.value.status_code == 403


def test_a_paired_channel_needs_the_token_in_its_first_frame() -> None:
    import websocket

    app = App("paired")
    errors.register(app)
    commands = CommandQueue(timeout_s=5)
    init_endpoints(app, init_api(app, "t", "t"), commands, pairing="s3cret")
    init_channel(app)
    with LocalServer(app, "127.0.0.1", 0, name="paired") as srv:
        ws = websocket.create_connection(f"ws://127.0.0.1:{srv.port}/commands", origin="chrome-extension://abc",
                                         timeout=5)
        ws.send(json.dumps({"type": "hello", "pairing": "wrong"}))
        opcode, payload = ws.recv_data(control_frame=True)
        assert opcode == websocket.ABNF.OPCODE_CLOSE and int.from_bytes(payload[:2], "big") == 4001
