"""``pinchtab debug connect`` and ``attach`` as an agent runs them: a subprocess whose stdout lines
are read through a pipe, commands written to its stdin, and an app on a real WebSocket (this is the
no-Chrome CLI: the page SDKs are tested elsewhere)."""
from __future__ import annotations

import base64
import json
import os
import queue
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
import websocket
from support import ROOT
from support.debug_pages import AppServer
from support.waits import wait_until

from app.debug import protocol

S = "cli-session"
TOKEN = "debug-cli-t0ken"
EXIT_DEADLINE_S = 5.0
STARTUP_S = 30.0   # a Python process importing Flask, on a busy machine


class Cli:
    """``python -m app.clients.cli ARGS`` with pipes: its stdout lines (JSON or text) arrive on a
    queue from a reader thread, so every read has a deadline."""

    def __init__(self, args: list[str], home: Path, env: dict[str, str] | None = None) -> None:
        full = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_", "NO_COLOR"))}
        full.update(HOME=str(home), PYTHONPATH=str(ROOT), **(env or {}))
        self.cwd = home
        self.proc = subprocess.Popen([sys.executable, "-m", "app.clients.cli", *args], cwd=str(home), env=full,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, encoding="utf-8")
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._stderr: list[str | None] = []
        threading.Thread(target=self._pump, args=(self.proc.stdout, self._lines.put), daemon=True).start()
        threading.Thread(target=self._pump, args=(self.proc.stderr, self._stderr.append), daemon=True).start()

    @staticmethod
    def _pump(stream: Any, put: Callable[[Any], None]) -> None:
        for line in stream:
            put(line.rstrip("\n"))
        put(None)

    @property
    def stderr(self) -> str:
        """What it wrote to stderr so far."""
        return "\n".join(line for line in self._stderr if line is not None)

    def stderr_after_exit(self) -> str:
        """All of stderr, once the process has closed it."""
        wait_until(lambda: self._stderr and self._stderr[-1] is None, EXIT_DEADLINE_S)
        return self.stderr

    def text(self, timeout_s: float = 10.0) -> str:
        """The next stdout line; fails at the deadline or when stdout ended."""
        try:
            line = self._lines.get(timeout=timeout_s)
        except queue.Empty:
            raise AssertionError(f"no line within {timeout_s} s; stderr: {self.stderr[-2000:]}") from None
        assert line is not None, f"stdout ended; stderr: {self.stderr[-2000:]}"
        return line

    def line(self, timeout_s: float = 10.0) -> dict[str, Any]:
        return json.loads(self.text(timeout_s))

    def until(self, pred: Callable[[dict[str, Any]], bool], timeout_s: float = 10.0) -> dict[str, Any]:
        """The first JSON line ``pred`` accepts (earlier ones are skipped)."""
        deadline = time.monotonic() + timeout_s
        while True:
            got = self.line(max(0.01, deadline - time.monotonic()))
            if pred(got):
                return got

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def exit_code(self, timeout_s: float = EXIT_DEADLINE_S) -> int:
        return self.proc.wait(timeout=timeout_s)

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=EXIT_DEADLINE_S)


@pytest.fixture
def cli(tmp_path: Path) -> Iterator[Callable[..., Cli]]:
    started: list[Cli] = []

    def run(*args: str, env: dict[str, str] | None = None) -> Cli:
        c = Cli(list(args), tmp_path, env)
        started.append(c)
        return c

    yield run
    for c in started:
        c.stop()


@pytest.fixture
def connected(cli: Callable[..., Cli]) -> tuple[Cli, str]:
    """``debug connect --json`` on a free port, and the URL its server_started line gave."""
    c = cli("debug", "connect", "--json", "--session", S, "--port", "0")
    started = c.line(STARTUP_S)
    assert started["event"] == "server_started" and started["session"] == S
    assert re.fullmatch(r"ws://localhost:\d+/debug", started["url"]), started
    return c, started["url"]


def join(url: str, role: str = "app", session: str = S, **kw: Any) -> websocket.WebSocket:
    return websocket.create_connection(f"{url}?role={role}&sessionId={session}", timeout=5,
                                       skip_utf8_validation=True, **kw)


def send(ws: websocket.WebSocket, type: str, session: str = S, **fields: Any) -> None:
    ws.send(json.dumps(protocol.envelope(session, type, **fields)))


def receive(ws: websocket.WebSocket, type: str, timeout_s: float = 5.0) -> dict[str, Any]:
    deadline = time.monotonic() + timeout_s
    while True:
        ws.settimeout(max(0.01, deadline - time.monotonic()))
        msg = json.loads(ws.recv())
        if msg.get("type") == type:
            return msg


def close_code(ws: websocket.WebSocket) -> int:
    ws.settimeout(5)
    while True:
        opcode, data = ws.recv_data()
        if opcode == websocket.ABNF.OPCODE_CLOSE:
            return int.from_bytes(data[:2], "big")


def say_hello(app: websocket.WebSocket, session: str = S) -> None:
    send(app, "hello", session, appName="Shop", appVersion="2.0", url="http://127.0.0.1/shop", userAgent="UA",
         viewport={"width": 800, "height": 600})


# --- connect


def test_an_apps_messages_are_the_originals_json_lines(connected: tuple[Cli, str]) -> None:
    c, url = connected
    app = join(url)
    say_hello(app)
    send(app, "capabilities", capabilities=["console", "errors", "dom_mutations"])
    send(app, "console", level="warn", args=["careful", "{\"n\":1}"])
    send(app, "error", errorType="runtime", message="boom", stack="Error: boom\n    at f (app.js:3:9)",
         filename="app.js", lineno=3, colno=9)
    send(app, "dom_mutations", batchId=1, mutations=[
        {"mutationType": "childList", "targetSelector": "#list", "addedNodes": [{"type": "element", "tagName": "LI"}]}])
    assert c.line() == {"event": "app_connected", "appName": "Shop", "appVersion": "2.0", "url": "http://127.0.0.1/shop"}
    assert c.line() == {"event": "telemetry", "type": "capabilities", "capabilities": ["console", "errors",
                                                                                       "dom_mutations"]}
    assert c.line() == {"event": "telemetry", "type": "console", "level": "warn", "args": ["careful", "{\"n\":1}"]}
    assert c.line() == {"event": "telemetry", "type": "error", "message": "boom",
                        "stack": "Error: boom\n    at f (app.js:3:9)"}
    assert c.line() == {"event": "telemetry", "type": "dom_mutations", "batchId": 1, "mutations": [
        {"mutationType": "childList", "targetSelector": "#list", "addedNodes": [{"type": "element", "tagName": "LI"}]}]}
    app.close()
    assert c.line() == {"event": "app_disconnected"}


def test_commands_from_stdin_as_json_and_as_repl_words_reach_the_app(connected: tuple[Cli, str]) -> None:
    c, url = connected
    app = join(url)
    say_hello(app)
    c.until(lambda m: m["event"] == "app_connected")

    c.send('{"type": "click", "target": {"stableId": "buy"}, "requestId": "c1"}')
    assert c.line() == {"event": "command_sent", "requestId": "c1", "type": "click"}
    cmd = receive(app, "click")
    assert cmd["requestId"] == "c1" and cmd["target"] == {"stableId": "buy"}
    assert cmd["sessionId"] == S and cmd["protocolVersion"] == 1 and isinstance(cmd["timestamp"], int)
    send(app, "command_result", requestId="c1", requestType="click", success=True, duration=4)
    assert c.line() == {"event": "command_result", "requestId": "c1", "success": True, "duration": 4}

    c.send("click btn")
    sent = c.line()
    assert sent["event"] == "command_sent" and sent["type"] == "click" and re.fullmatch(r"cmd-\d+", sent["requestId"])
    cmd = receive(app, "click")
    assert cmd["target"] == {"stableId": "btn"} and cmd["requestId"] == sent["requestId"]
    send(app, "command_result", requestId=cmd["requestId"], requestType="click", success=False, duration=1,
         error={"code": "TARGET_NOT_FOUND", "message": "no element btn"})
    assert c.line() == {"event": "command_result", "requestId": cmd["requestId"], "success": False, "duration": 1,
                        "error": {"code": "TARGET_NOT_FOUND", "message": "no element btn"}}

    c.send("type q hello world")
    c.until(lambda m: m["event"] == "command_sent")
    assert receive(app, "type")["text"] == "hello world"
    c.send('{"type": "type", "target": {"stableId": "q"}, "requestId": "bad"}')   # no text: the hub says so
    c.until(lambda m: m["event"] == "command_sent")
    bad = c.until(lambda m: m["event"] == "command_result")
    assert bad["requestId"] == "bad" and bad["success"] is False and bad["error"]["code"] == "INVALID_COMMAND"


def test_ui_find_and_screenshot_work_through_the_cache_and_the_working_directory(
        connected: tuple[Cli, str], tmp_path: Path) -> None:
    c, url = connected
    app = join(url)
    say_hello(app)
    c.until(lambda m: m["event"] == "app_connected")
    c.send("ui")
    ask = receive(app, "request_ui_tree")
    items = [{"stableId": "checkout", "selector": "#checkout", "role": "button", "text": "Check out",
              "disabled": False, "visible": True, "meta": {"tagName": "BUTTON"}}]
    send(app, "ui_tree", requestId=ask["requestId"], items=items)
    assert c.until(lambda m: m.get("type") == "ui_tree") == {"event": "telemetry", "type": "ui_tree", "itemCount": 1,
                                                             "items": items}
    c.send("find check")
    assert c.line() == {"event": "find_results", "query": "check", "count": 1, "items": items}
    c.send("ss")
    ask = receive(app, "request_screenshot")
    png = b"\x89PNG\r\n\x1a\n" + b"pixels"
    send(app, "screenshot", requestId=ask["requestId"], data=base64.b64encode(png).decode(), width=800, height=600)
    shot = c.until(lambda m: m.get("type") == "screenshot")
    assert shot["width"] == 800 and shot["height"] == 600 and re.fullmatch(r"screenshot-\d+\.png", shot["file"])
    assert (tmp_path / shot["file"]).read_bytes() == png


def test_a_command_with_no_app_gets_an_error_line(connected: tuple[Cli, str]) -> None:
    c, _ = connected
    c.send('{"type": "navigate", "url": "http://x/", "requestId": "n1"}')
    assert c.line() == {"event": "command_sent", "requestId": "n1", "type": "navigate"}
    assert c.line() == {"event": "error", "requestId": "n1", "type": "navigate", "error": "no app is connected"}
    c.send("not a command at all")            # the original ignores what is not JSON: no line
    c.send("help")
    assert c.line()["event"] == "info"        # the next line is help's, nothing came for the junk


def test_other_agents_joining_and_leaving_are_lines(connected: tuple[Cli, str]) -> None:
    c, url = connected
    other = join(url, "agent")
    joined = c.line()
    assert joined == {"event": "agent_connected", "agentId": joined["agentId"], "connectedAgents": 2}
    assert joined["agentId"].startswith("agent-")
    other.close()
    assert c.line() == {"event": "agent_disconnected", "agentId": joined["agentId"], "connectedAgents": 1}


def test_a_wrong_session_is_closed_with_4000(connected: tuple[Cli, str]) -> None:
    _, url = connected
    assert close_code(join(url, session="not-" + S)) == 4000


def test_stdin_ending_keeps_serving_and_sigint_exits_0_closing_connections(connected: tuple[Cli, str]) -> None:
    c, url = connected
    assert c.proc.stdin is not None
    c.proc.stdin.close()
    app = join(url)   # still served after stdin's end, and its lines still print
    send(app, "console", level="log", args=["after eof"])
    assert c.until(lambda m: m.get("type") == "console")["args"] == ["after eof"]
    started = time.monotonic()
    c.proc.send_signal(signal.SIGINT)
    assert close_code(app) == 1001
    assert time.monotonic() - started < 1.0   # every connection is closed within a second
    assert c.exit_code() == 0


def test_sigterm_exits_0(connected: tuple[Cli, str]) -> None:
    c, url = connected
    join(url)
    c.proc.send_signal(signal.SIGTERM)
    assert c.exit_code() == 0


def test_without_json_and_a_terminal_it_prints_lines_for_people(cli: Callable[..., Cli]) -> None:
    c = cli("debug", "connect", "--session", S, "--port", "0", env={"NO_COLOR": "1"})
    first = c.text(STARTUP_S)
    url = re.search(r"ws://localhost:\d+/debug", first)
    assert url and "session " + S in first and "debug>" not in first
    c.text()   # how apps join and where help is
    app = join(url.group(0))
    say_hello(app)
    send(app, "console", level="warn", args=["careful"])
    assert c.text() == "✓ connected: Shop 2.0  http://127.0.0.1/shop"
    assert c.text() == "[warn] careful"
    c.send("click")
    assert c.text() == "✗ usage: click <id>"


def test_without_a_session_it_makes_a_random_one_and_says_which(cli: Callable[..., Cli]) -> None:
    c = cli("debug", "connect", "--json", "--port", "0")
    started = c.line(STARTUP_S)
    sid = started["session"]
    assert started["event"] == "server_started" and re.fullmatch(r"[0-9a-f]{32}", sid), started   # 128 bits
    assert close_code(join(started["url"], session="default")) == 4000   # the original's guessable id is no door
    app = join(started["url"], session=sid)
    say_hello(app, sid)
    assert c.until(lambda m: m.get("event") == "app_connected")["appName"] == "Shop"
    people = cli("debug", "connect", "--port", "0", env={"NO_COLOR": "1"})
    first = people.text(STARTUP_S)
    shown = re.search(r"session ([0-9a-f]{32})", first)
    assert shown and shown.group(1) != sid, first   # a new one each time, in the line for people too
    assert f"sessionId={shown.group(1)}" in people.text()
    refused = cli("debug", "connect", "--port", "0", "--session=-x")
    assert refused.exit_code(STARTUP_S) == 2 and "not a session id" in refused.stderr_after_exit()


def test_beyond_loopback_without_a_token_it_refuses_to_start(cli: Callable[..., Cli]) -> None:
    c = cli("debug", "connect", "--json", "--host", "0.0.0.0", "--port", "0", "--session", "x" * 24)
    assert c.exit_code(STARTUP_S) == 2
    assert "needs a token" in c.stderr_after_exit()


# --- attach


@pytest.fixture
def bridge(app_factory: Callable[..., Any]) -> Iterator[AppServer]:
    srv = AppServer(app_factory(**{"server.token": TOKEN}))
    yield srv
    srv.stop()


def new_session(bridge: AppServer) -> str:
    r = requests.post(bridge.url("/debug/sessions"), headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
    assert r.status_code == 201
    return r.json()["sessionId"]


def agents_of(bridge: AppServer, sid: str) -> int:
    r = requests.get(bridge.url(f"/debug/sessions/{sid}"), headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
    return len(r.json()["agents"]) if r.status_code == 200 else -1


def test_attach_joins_a_bridge_session_as_an_agent(cli: Callable[..., Cli], bridge: AppServer) -> None:
    sid = new_session(bridge)
    c = cli("debug", "attach", "--json", "--session", sid, "--server", bridge.url(), env={"PINCHTAB_TOKEN": TOKEN})
    wait_until(lambda: agents_of(bridge, sid) == 1, STARTUP_S)
    app = join(f"ws://127.0.0.1:{bridge.port}/debug", session=sid)
    say_hello(app, sid)
    send(app, "console", sid, level="error", args=["broken"])
    assert c.line() == {"event": "app_connected", "appName": "Shop", "appVersion": "2.0",
                        "url": "http://127.0.0.1/shop"}
    assert c.line() == {"event": "telemetry", "type": "console", "level": "error", "args": ["broken"]}
    c.send("eval document.title")
    sent = c.line()
    assert sent["event"] == "command_sent" and sent["type"] == "evaluate"
    cmd = receive(app, "evaluate")
    assert cmd["code"] == "document.title" and cmd["sessionId"] == sid
    send(app, "command_result", sid, requestId=cmd["requestId"], requestType="evaluate", success=True, duration=2,
         result="Shop")
    assert c.line() == {"event": "command_result", "requestId": cmd["requestId"], "success": True, "duration": 2,
                        "result": "Shop"}
    c.proc.send_signal(signal.SIGINT)
    assert c.exit_code() == 0
    wait_until(lambda: agents_of(bridge, sid) == 0)


def test_attach_says_why_it_cannot_join(cli: Callable[..., Cli], bridge: AppServer) -> None:
    unknown = cli("debug", "attach", "--session", "nope", "--server", bridge.url(), env={"PINCHTAB_TOKEN": TOKEN})
    assert unknown.exit_code(STARTUP_S) == 1 and "unknown debug session 'nope'" in unknown.stderr_after_exit()
    sid = new_session(bridge)
    no_token = cli("debug", "attach", "--session", sid, "--server", bridge.url())
    assert no_token.exit_code(STARTUP_S) == 1, no_token.stderr_after_exit()
    assert "needs the token" in no_token.stderr_after_exit()


def test_attach_exits_1_when_its_session_is_deleted(cli: Callable[..., Cli], bridge: AppServer) -> None:
    sid = new_session(bridge)
    c = cli("debug", "attach", "--json", "--session", sid, "--server", bridge.url(), env={"PINCHTAB_TOKEN": TOKEN})
    wait_until(lambda: agents_of(bridge, sid) == 1, STARTUP_S)
    requests.delete(bridge.url(f"/debug/sessions/{sid}"), headers={"Authorization": f"Bearer {TOKEN}"}, timeout=5)
    assert "reconnecting" in c.line()["message"]   # stdin is open: it tries again, and the session is gone
    assert c.exit_code() == 1
    assert "unknown debug session" in c.stderr_after_exit()


def test_with_a_terminal_it_is_a_repl_with_a_prompt(tmp_path: Path) -> None:
    import pty
    import select

    master, slave = pty.openpty()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_", "NO_COLOR"))}
    env.update(HOME=str(tmp_path), PYTHONPATH=str(ROOT), TERM="xterm")
    proc = subprocess.Popen([sys.executable, "-m", "app.clients.cli", "debug", "connect", "--port", "0"],
                            stdin=slave, stdout=slave, stderr=slave, cwd=str(tmp_path), env=env, close_fds=True)
    os.close(slave)
    screen = b""

    def shows(text: str, timeout_s: float = 10.0) -> bool:
        nonlocal screen
        deadline = time.monotonic() + timeout_s
        while text.encode() not in screen and time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                try:
                    screen += os.read(master, 4096)
                except OSError:
                    break
        return text.encode() in screen

    try:
        assert shows("debug> ", STARTUP_S), screen
        assert b"\x1b[1mDebug bridge\x1b[0m" in screen   # colours on a terminal
        os.write(master, b"help\r")
        assert shows("find <query>")
        screen = b""
        os.write(master, b"click\r")
        assert shows("usage: click <id>")
        # The next prompt, so that readline holds the terminal (a Ctrl-D typed before that is the
        # terminal's own end of line, which readline's raw mode then loses).
        screen = screen[screen.index(b"usage"):]
        assert shows("debug> ")
        os.write(master, b"\x04")   # Ctrl-D ends the REPL
        try:
            assert proc.wait(timeout=EXIT_DEADLINE_S) == 0
        except subprocess.TimeoutExpired:
            shows("never", 1)
            raise AssertionError(screen) from None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=EXIT_DEADLINE_S)
        os.close(master)


def test_attach_reconnects_when_its_connection_drops_while_stdin_is_open(
        cli: Callable[..., Cli], bridge: AppServer) -> None:
    sid = new_session(bridge)
    c = cli("debug", "attach", "--json", "--session", sid, "--server", bridge.url(), env={"PINCHTAB_TOKEN": TOKEN})
    wait_until(lambda: agents_of(bridge, sid) == 1, STARTUP_S)
    session = bridge.server.app.extensions["pinchtab.debug"].get(sid)
    for agent in session.members("agent"):
        agent.close(1012, "service restart")   # what a proxy or a restarting server does to it
    assert c.line() == {"event": "info", "message": f"the connection to session '{sid}' ended "
                                                    f"(1012 service restart); reconnecting"}
    assert c.line() == {"event": "info", "message": f"reconnected to session '{sid}'"}
    app = join(f"ws://127.0.0.1:{bridge.port}/debug", session=sid)
    say_hello(app, sid)
    c.until(lambda m: m["event"] == "app_connected")
    c.send("state store")
    assert receive(app, "request_state")["scope"] == "store"
