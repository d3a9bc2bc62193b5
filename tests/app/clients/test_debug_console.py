"""The debug console's wording: protocol messages to the original's ``--json`` lines, stdin lines
(JSON or REPL words) to commands, the local ``find``, and the text people see."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest

from app.clients.debug_console import Cache, Local, find, json_line, parse_input, render
from app.debug import protocol

S = "sess"
PNG = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
ITEMS = [
    {"stableId": "login-btn", "selector": "[data-testid=login-btn]", "role": "button", "text": "Sign in",
     "disabled": False, "visible": True, "meta": {"tagName": "BUTTON"}},
    {"stableId": "email", "selector": "#email", "role": "textbox", "label": "Email address",
     "disabled": False, "visible": True, "meta": {"tagName": "INPUT", "placeholder": "you@example.com"}},
    {"stableId": "gen-3", "selector": "nav > a:nth-child(2)", "role": "link", "text": "Orders",
     "disabled": True, "visible": False, "meta": {"tagName": "A", "href": "/orders"}},
]


def msg(type: str, **fields: Any) -> dict[str, Any]:
    return protocol.envelope(S, type, **fields)


# --- json_line: each line the original prints, and ours


@pytest.mark.parametrize("message, line", [
    (msg("hello", appName="Shop", appVersion="1.2", url="http://x/", userAgent="UA",
         viewport={"width": 1, "height": 2}),
     {"event": "app_connected", "appName": "Shop", "appVersion": "1.2", "url": "http://x/"}),
    (msg("hello", url="http://x/", userAgent="UA"), {"event": "app_connected", "url": "http://x/"}),
    (protocol.connection_event(S, "app_disconnected", appId="a1", connectedApps=[], connectedAgents=1),
     {"event": "app_disconnected"}),
    (protocol.connection_event(S, "agent_connected", agentId="agent-2", connectedApps=[], connectedAgents=2),
     {"event": "agent_connected", "agentId": "agent-2", "connectedAgents": 2}),
    (protocol.connection_event(S, "agent_disconnected", agentId="agent-2", connectedApps=[], connectedAgents=1),
     {"event": "agent_disconnected", "agentId": "agent-2", "connectedAgents": 1}),
    (msg("command_result", requestId="r1", requestType="click", success=True, duration=3),
     {"event": "command_result", "requestId": "r1", "success": True, "duration": 3}),
    (msg("command_result", requestId="r2", requestType="evaluate", success=True, duration=1, result=42),
     {"event": "command_result", "requestId": "r2", "success": True, "duration": 1, "result": 42}),
    (msg("command_result", requestId="r3", requestType="click", success=False, duration=0,
         error={"code": "TARGET_NOT_FOUND", "message": "no such element"}),
     {"event": "command_result", "requestId": "r3", "success": False, "duration": 0,
      "error": {"code": "TARGET_NOT_FOUND", "message": "no such element"}}),
    (msg("console", level="warn", args=["a", "1"]), {"event": "telemetry", "type": "console", "level": "warn",
                                                     "args": ["a", "1"]}),
    (msg("error", errorType="runtime", message="boom", stack="Error: boom\n  at f", filename="a.js", lineno=3),
     {"event": "telemetry", "type": "error", "message": "boom", "stack": "Error: boom\n  at f"}),
    (msg("ui_tree", items=ITEMS[:1], requestId="q"),
     {"event": "telemetry", "type": "ui_tree", "itemCount": 1, "items": ITEMS[:1]}),
    (msg("state_update", scope="store", state={"n": 1}),
     {"event": "telemetry", "type": "state_update", "scope": "store", "state": {"n": 1}}),
    (msg("capabilities", capabilities=["console", "ui_tree"]),
     {"event": "telemetry", "type": "capabilities", "capabilities": ["console", "ui_tree"]}),
    (msg("dom_snapshot", html="<p>é😀</p>"), {"event": "telemetry", "type": "dom_snapshot", "length": 10}),
    (msg("network_request", requestId="n1", method="GET", url="http://x/api", headers={}, initiator="fetch"),
     {"event": "telemetry", "type": "network_request", "requestId": "n1", "method": "GET", "url": "http://x/api",
      "initiator": "fetch"}),
    (msg("network_response", requestId="n1", status=404, statusText="Not Found", duration=12, ok=False, body="nope"),
     {"event": "telemetry", "type": "network_response", "requestId": "n1", "status": 404, "statusText": "Not Found",
      "duration": 12, "ok": False, "bodyLength": 4}),
    (msg("network_response", requestId="n2", status=204, ok=True),
     {"event": "telemetry", "type": "network_response", "requestId": "n2", "status": 204, "ok": True,
      "bodyLength": 0}),
    (msg("navigation", url="http://x/b", previousUrl="http://x/a", trigger="pushstate"),
     {"event": "telemetry", "type": "navigation", "url": "http://x/b", "previousUrl": "http://x/a",
      "trigger": "pushstate"}),
    (msg("dom_mutations", batchId=7, mutations=[{"mutationType": "attributes", "targetSelector": "#a",
                                                  "attributeName": "class"}]),
     {"event": "telemetry", "type": "dom_mutations", "batchId": 7,
      "mutations": [{"mutationType": "attributes", "targetSelector": "#a", "attributeName": "class"}]}),
    (msg("dropped", origin="server", count=5, total=9), {"event": "dropped", "count": 5, "total": 9}),
])
def test_each_message_prints_the_originals_line(message: dict[str, Any], line: dict[str, Any], tmp_path: Path) -> None:
    got = json_line(message, str(tmp_path))
    assert got == line
    assert list(got) == list(line)   # the keys in the original's order, too


def test_a_command_no_app_received_is_an_error_line() -> None:
    answer = protocol.command_result(S, "cmd-1", "click", success=False, duration_ms=0, error_code="UNKNOWN_ERROR",
                                     message="no app is connected to session sess")
    answer["noApp"] = True
    assert json_line(answer) == {"event": "error", "requestId": "cmd-1", "type": "click",
                                 "error": "no app is connected"}


def test_the_apps_arrival_is_said_by_its_hello_not_by_the_connection_event() -> None:
    assert json_line(protocol.connection_event(S, "app_connected", appId="a", connectedAgents=1)) is None
    assert json_line(msg("some_future_type", x=1)) is None


def test_a_screenshot_is_written_and_the_line_names_the_file(tmp_path: Path) -> None:
    data = base64.b64encode(PNG).decode()
    first = json_line(msg("screenshot", data=data, width=800, height=600), str(tmp_path))
    second = json_line(msg("screenshot", data="data:image/png;base64," + data, width=800, height=600), str(tmp_path))
    assert first is not None and second is not None
    assert [k for k in first] == ["event", "type", "width", "height", "file"]
    assert first["file"] != second["file"]   # the same millisecond never overwrites
    for line in (first, second):
        assert Path(line["file"]).parent == tmp_path and Path(line["file"]).name.startswith("screenshot-")
        assert Path(line["file"]).read_bytes() == PNG
    empty = json_line(msg("screenshot", data="", width=1, height=1), str(tmp_path))
    assert empty == {"event": "telemetry", "type": "screenshot", "width": 1, "height": 1, "file": None}


# --- parse_input: JSON objects and REPL words


def test_a_json_command_gets_the_envelope_and_a_request_id() -> None:
    cmd = parse_input('{"type": "click", "target": {"stableId": "b"}}', S, Cache())
    assert isinstance(cmd, dict)
    assert cmd["protocolVersion"] == 1 and cmd["sessionId"] == S and isinstance(cmd["timestamp"], int)
    assert cmd["requestId"].startswith("cmd-") and cmd["type"] == "click" and cmd["target"] == {"stableId": "b"}
    kept = parse_input('{"type": "ui", "requestId": "mine", "sessionId": "other"}', S, Cache())
    assert isinstance(kept, dict) and kept["requestId"] == "mine" and kept["sessionId"] == "other"


def test_request_ids_are_unique_even_in_one_millisecond() -> None:
    cache = Cache()
    ids = [cache.request_id() for _ in range(500)]
    assert len(set(ids)) == 500 and all(i.startswith("cmd-") and i[4:].isdigit() for i in ids)


@pytest.mark.parametrize("line, fields", [
    ("ui", {"type": "request_ui_tree"}),
    ("tree", {"type": "request_ui_tree"}),
    ("click login-btn", {"type": "click", "target": {"stableId": "login-btn"}}),
    ('click "Sign in"', {"type": "click", "target": {"text": "Sign in"}}),
    ("CLICK login-btn", {"type": "click", "target": {"stableId": "login-btn"}}),
    ("type email a@b.c", {"type": "type", "target": {"stableId": "email"}, "text": "a@b.c"}),
    ('type email "hello  world"', {"type": "type", "target": {"stableId": "email"}, "text": "hello  world"}),
    ("type q it's fine", {"type": "type", "target": {"stableId": "q"}, "text": "it's fine"}),
    ("eval document.title + ' x'", {"type": "evaluate", "code": "document.title + ' x'"}),
    ("js 1+1", {"type": "evaluate", "code": "1+1"}),
    ("snapshot", {"type": "request_dom_snapshot"}),
    ("dom", {"type": "request_dom_snapshot"}),
    ("screenshot", {"type": "request_screenshot"}),
    ("ss", {"type": "request_screenshot"}),
    ("state", {"type": "request_state"}),
    ("state cookies", {"type": "request_state", "scope": "cookies"}),
    ("navigate http://x/a", {"type": "navigate", "url": "http://x/a"}),
    ("go http://x/a", {"type": "navigate", "url": "http://x/a"}),
    ("goto http://x/a", {"type": "navigate", "url": "http://x/a"}),
    ("focus email", {"type": "focus", "target": {"stableId": "email"}}),
    ("scroll 0 400", {"type": "scroll", "x": 0, "y": 400}),
    ("scroll 10.5 -3", {"type": "scroll", "x": 10.5, "y": -3}),
])
def test_each_repl_word_and_alias_makes_its_command(line: str, fields: dict[str, Any]) -> None:
    cmd = parse_input(line, S, Cache())
    assert isinstance(cmd, dict)
    envelope = ("protocolVersion", "sessionId", "timestamp", "requestId")
    assert {k: v for k, v in cmd.items() if k not in envelope} == fields
    assert cmd["requestId"].startswith("cmd-") and cmd["sessionId"] == S
    assert protocol.validate_message(cmd) == {}   # what the words make is a valid command


@pytest.mark.parametrize("line, usage", [
    ("click", "usage: click <id>"), ("focus", "usage: focus <id>"), ("click a b", "usage: click <id>"),
    ("type email", "usage: type <id> <text>"), ("eval", "usage: eval <code>"), ("js", "usage: eval <code>"),
    ("navigate", "usage: navigate <url>"), ("scroll 1", "usage: scroll <x> <y>"),
    ("scroll a b", "usage: scroll <x> <y>"), ("scroll 1 nan", "usage: scroll <x> <y>"), ("find", "usage: find <query>"),
    ('click "unclosed', "usage: click <id>"),
])
def test_a_word_without_what_it_needs_says_its_usage(line: str, usage: str) -> None:
    got = parse_input(line, S, Cache())
    assert isinstance(got, Local) and got.action == "usage"
    assert got.line is not None and got.line["event"] == "error" and got.line["error"].startswith(usage)


def test_local_words_help_clear_unknown_and_blank() -> None:
    for word in ("help", "?"):
        got = parse_input(word, S, Cache())
        assert isinstance(got, Local) and got.action == "help" and "find <query>" in got.line["message"]
    for word in ("clear", "cls"):
        assert parse_input(word, S, Cache()) == Local("clear")
    unknown = parse_input("fly away", S, Cache())
    assert isinstance(unknown, Local) and unknown.action == "unknown" and "'fly'" in unknown.line["error"]
    assert parse_input("   \n", S, Cache()) is None
    assert isinstance(parse_input("{not json", S, Cache()), Local)      # not JSON: read as a word
    assert isinstance(parse_input("[1, 2]", S, Cache()), Local)         # JSON, but not a command object


def test_find_searches_the_cached_ui_tree_locally() -> None:
    cache = Cache()
    cache.remember(msg("console", level="log", args=[]))    # not a tree: nothing changes
    assert cache.items == []
    cache.remember(msg("ui_tree", items=ITEMS))
    got = parse_input("find sign", S, cache)
    assert isinstance(got, Local) and got.action == "find"
    assert got.line == {"event": "find_results", "query": "sign", "count": 1, "items": [ITEMS[0]]}
    assert find(ITEMS, "EMAIL") == [ITEMS[1]]            # label, any case
    assert find(ITEMS, "example.com") == [ITEMS[1]]      # placeholder
    assert find(ITEMS, "link orders") == [ITEMS[2]]      # every word, across fields
    assert find(ITEMS, "nth-child") == [ITEMS[2]]        # selector
    assert find(ITEMS, "gen-3") == [ITEMS[2]]            # stableId
    assert find(ITEMS, "button") == [ITEMS[0]]           # role
    assert find(ITEMS, "checkout") == [] and find(ITEMS, "  ") == []
    assert find([{"oops": 1}, "junk"], "oops") == []     # odd items do not break it


# --- render: for people


def test_render_is_plain_without_colour_and_coloured_with_it() -> None:
    line = json_line(msg("console", level="error", args=["bad", "thing"]))
    assert line is not None
    assert render(line, colour=False) == "[error] bad thing"
    assert render(line, colour=True) == "\x1b[31m[error]\x1b[0m bad thing"


@pytest.mark.parametrize("line, expected", [
    ({"event": "server_started", "url": "ws://localhost:4000/debug", "session": "s"}, "ws://localhost:4000/debug"),
    ({"event": "app_connected", "appName": "Shop", "appVersion": "1.2", "url": "http://x/"}, "connected: Shop 1.2"),
    ({"event": "app_disconnected"}, "disconnected"),
    ({"event": "agent_connected", "agentId": "agent-2", "connectedAgents": 2}, "agent agent-2 joined (2 agents"),
    ({"event": "command_sent", "requestId": "cmd-1", "type": "click"}, "→ click cmd-1"),
    ({"event": "command_result", "requestId": "cmd-1", "success": True, "duration": 3, "result": {"a": 1}},
     '✓ cmd-1 (3 ms)  {"a":1}'),
    ({"event": "command_result", "requestId": "cmd-1", "success": False, "duration": 0,
      "error": {"code": "TARGET_NOT_FOUND", "message": "gone"}}, "✗ cmd-1 TARGET_NOT_FOUND: gone"),
    ({"event": "error", "requestId": "cmd-1", "type": "click", "error": "no app is connected"},
     "click cmd-1: no app is connected"),
    ({"event": "dropped", "count": 5}, "5 messages dropped"),
    ({"event": "telemetry", "type": "ui_tree", "itemCount": 3, "items": ITEMS},
     "gen-3  link  'Orders'  disabled,hidden"),
    ({"event": "telemetry", "type": "error", "message": "boom", "stack": "Error: boom\n    at f (a.js:1:2)"},
     "[error] boom\n    at f (a.js:1:2)"),
    ({"event": "telemetry", "type": "state_update", "scope": "store", "state": {"n": 1}}, '[state] store: {"n":1}'),
    ({"event": "telemetry", "type": "dom_snapshot", "length": 12345}, "12,345 characters"),
    ({"event": "telemetry", "type": "screenshot", "width": 800, "height": 600, "file": "screenshot-1.png"},
     "800x600 saved to screenshot-1.png"),
    ({"event": "telemetry", "type": "network_response", "requestId": "n", "status": 500, "statusText": "Oops",
      "duration": 7, "ok": False, "bodyLength": 3}, "← 500 Oops (7 ms, 3 chars)"),
    ({"event": "telemetry", "type": "navigation", "url": "http://x/b", "trigger": "popstate"}, "[popstate] http://x/b"),
    ({"event": "telemetry", "type": "dom_mutations", "batchId": 1,
      "mutations": [{"mutationType": "childList"}, {"mutationType": "attributes"}]},
     "2 mutation(s) (attributes, childList)"),
    ({"event": "find_results", "query": "sign", "count": 1, "items": ITEMS[:1]}, "1 match(es) for 'sign'\n  login-btn"),
])
def test_render_says_each_line_readably(line: dict[str, Any], expected: str) -> None:
    text = render(line, colour=False)
    assert expected in text and "\x1b[" not in text
    json.dumps(line)   # the same line is what --json prints
