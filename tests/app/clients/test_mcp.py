"""``pinchtab mcp`` as an agent host runs it: a real MCP client (the SDK's stdio_client and
ClientSession) starts the command, which calls a real bridge (gunicorn, Chromium) over HTTP."""
from __future__ import annotations

import base64
import json
import os
import re
import select
import subprocess
import sys
import time
from typing import Any

import anyio
import pytest
from support import ROOT
from support.agent import ref_of
from support.mcp_client import Session, shared_session

from app.clients import mcp_server, mcp_tools

pytestmark = pytest.mark.e2e

# The original PinchTab's 43 tools, and ours.
ORIGINAL = {
    "pinchtab_navigate", "pinchtab_snapshot", "pinchtab_frame", "pinchtab_screenshot", "pinchtab_capture",
    "pinchtab_get_text", "pinchtab_click", "pinchtab_type", "pinchtab_press", "pinchtab_hover", "pinchtab_focus",
    "pinchtab_select", "pinchtab_scroll", "pinchtab_scroll_into_view", "pinchtab_fill", "pinchtab_keyboard_type",
    "pinchtab_keyboard_inserttext", "pinchtab_keydown", "pinchtab_keyup", "pinchtab_eval", "pinchtab_pdf",
    "pinchtab_find", "pinchtab_list_tabs", "pinchtab_close_tab", "pinchtab_health", "pinchtab_cookies",
    "pinchtab_connect_profile", "pinchtab_wait", "pinchtab_wait_for_selector", "pinchtab_wait_for_text",
    "pinchtab_wait_for_url", "pinchtab_wait_for_load", "pinchtab_wait_for_function", "pinchtab_network",
    "pinchtab_network_detail", "pinchtab_network_clear", "pinchtab_network_route", "pinchtab_network_unroute",
    "pinchtab_record_start", "pinchtab_record_stop", "pinchtab_record_status", "pinchtab_dialog", "pinchtab_scrape",
}
EXPECTED = ORIGINAL | {"pinchtab_switch_tab", "pinchtab_back", "pinchtab_console", "pinchtab_errors"}
ELEMENT_TOOLS = ("pinchtab_click", "pinchtab_type", "pinchtab_fill", "pinchtab_press", "pinchtab_hover",
                 "pinchtab_focus", "pinchtab_select", "pinchtab_scroll", "pinchtab_scroll_into_view")
# Tools that act on no tab.
TABLESS = {"pinchtab_list_tabs", "pinchtab_health", "pinchtab_connect_profile", "pinchtab_wait", "pinchtab_scrape"}
TYPES = ("string", "integer", "boolean", "number", "array")


@pytest.fixture(scope="module")
def mcp(bridge, tmp_path_factory):
    """This module's session lists every tool (``--tools all``, given here by its environment variable)."""
    with shared_session(bridge.base, tmp_path_factory.mktemp("mcp-home"), {"PINCHTAB_MCP_TOOLS": "all"}) as run:
        yield run


# --------------------------------------------------------------------------


def test_tool_list_has_the_originals_tools_typed_schemas_and_every_tool_a_handler(mcp):
    async def scenario(s: Session) -> None:
        tools = (await s.session.list_tools()).tools
        by_name = {t.name: t for t in tools}
        assert set(by_name) == EXPECTED
        for t in tools:
            schema = t.input_schema
            assert t.description and schema["type"] == "object", t.name
            assert set(schema.get("required", [])) <= set(schema["properties"]), t.name
            for key, prop in schema["properties"].items():
                kinds = prop["type"] if isinstance(prop["type"], list) else [prop["type"]]
                assert set(kinds) <= set(TYPES) and prop["description"], (t.name, key)
            # The original's clients send tabId on every call of a tool that works on a tab.
            assert ("tabId" in schema["properties"]) == (t.name not in TABLESS), t.name
        assert by_name["pinchtab_navigate"].input_schema["required"] == ["url"]
        assert by_name["pinchtab_eval"].input_schema["required"] == ["expression"]
        assert by_name["pinchtab_type"].input_schema["required"] == ["text"]
        assert by_name["pinchtab_fill"].input_schema["required"] == ["value"]  # the original's name
        for name in ELEMENT_TOOLS:
            props = by_name[name].input_schema["properties"]
            assert {"selector", "ref", "query", "tabId", "snap"} <= set(props), name
            assert props["snap"]["enum"] == [True, False, "compact", "diff"]
        snapshot = by_name["pinchtab_snapshot"].input_schema["properties"]
        assert snapshot["interactive"]["default"] is True and snapshot["compact"]["default"] is True
        # Read on every turn by the model: a budget, so the list cannot quietly bloat.
        listing = json.dumps([{"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                              for t in tools])
        assert len(listing) < 28_000, len(listing)

    mcp(scenario)
    tool_list, handlers = mcp_server.check_tools(mcp_server.TOOLS)
    assert [t.name for t in tool_list] == list(handlers) and set(handlers) == EXPECTED


def test_a_tool_without_a_handler_fails_at_start_not_at_call():
    from app.clients.rest import Client

    spec = mcp_server.TOOLS[0]
    broken = mcp_server.ToolSpec(spec.name, spec.description, spec.properties, spec.required, False,
                                 None)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="no handler"):
        mcp_server.build_server(Client("http://127.0.0.1:9"), [broken, *mcp_server.TOOLS[1:]])
    with pytest.raises(AssertionError, match="duplicate"):
        mcp_server.check_tools([*mcp_server.TOOLS, spec])


def test_navigate_snapshot_click_by_ref_then_get_text(mcp, site):
    async def scenario(s: Session) -> None:
        nav = json.loads(await s.ok("pinchtab_navigate", url=site.url("login.html")))
        assert nav["title"] == "Sign in" and nav["tabId"]
        snap = await s.ok("pinchtab_snapshot")
        assert snap.startswith("# Sign in |")
        await s.ok("pinchtab_fill", ref=ref_of(snap, "textbox", "Username"), text="agent")
        await s.ok("pinchtab_type", ref=ref_of(snap, "textbox", "Password"), text="s3cret")
        clicked = json.loads(await s.ok("pinchtab_click", ref=ref_of(snap, "button", "Sign in"), waitNav=True))
        assert clicked["clicked"] is True and clicked["navigated"] is True
        assert "Welcome, agent" in await s.ok("pinchtab_get_text")
        # The MCP agent keeps its own current tab: a second navigate reuses it.
        again = json.loads(await s.ok("pinchtab_navigate", url=site.url("counter.html")))
        assert again["tabId"] == nav["tabId"]

    mcp(scenario)


def test_snap_on_an_action_returns_the_snapshot_in_the_same_result(mcp, site):
    async def scenario(s: Session) -> None:
        first = await s.ok("pinchtab_navigate", url=site.url("counter.html"), snap="compact")
        inc = ref_of(first, "button", "Increment")
        compact = await s.ok("pinchtab_click", ref=inc, snap="compact")
        head, _, snap = compact.partition("\n\n")
        assert json.loads(head) == {"clicked": True}
        assert snap.startswith("# Counter |") and f"{inc} button Increment" in snap
        await s.ok("pinchtab_click", ref=inc, snap="diff")  # the first diff view of this document
        diff = await s.ok("pinchtab_click", ref=inc, snap="diff")
        assert re.search(r"^\+ e\d+ StaticText 3$", diff, re.M) and re.search(r"^- e\d+ StaticText 2$", diff, re.M)

    mcp(scenario)


def test_rest_and_argument_errors_are_tool_errors(mcp, site):
    async def scenario(s: Session) -> None:
        await s.ok("pinchtab_navigate", url=site.url("form.html"))
        disabled = await s.error("pinchtab_eval", expression="1+1")
        assert "security.allowEvaluate" in disabled and "evaluate_disabled" in disabled and "403" in disabled
        for url in ("javascript:alert(1)", "file:///etc/passwd", "about:blank", "example.com"):
            refused = await s.error("pinchtab_navigate", url=url)
            assert "http:// and https:// URLs only" in refused, refused  # ours: refused before any request
        assert "ref_not_found" in await s.error("pinchtab_click", ref="e999")
        assert "give selector" in await s.error("pinchtab_click")
        assert 'one of true, false, "compact", "diff"' in await s.error("pinchtab_fill", ref="e1", value="x",
                                                                          snap="full")
        assert "cookies_disabled" in await s.error("pinchtab_cookies")
        assert "timeout after" in await s.error("pinchtab_wait_for_selector", selector="#nope", timeout=200)
        assert "no_dialog" in await s.error("pinchtab_dialog", action="accept")
        # The session survives its errors.
        assert json.loads(await s.ok("pinchtab_health"))["status"] == "ok"

    mcp(scenario)


def test_screenshot_is_an_image_block_and_pdf_a_resource(mcp, site):
    async def scenario(s: Session) -> None:
        await s.ok("pinchtab_navigate", url=site.url("table.html"))
        shot = await s.call("pinchtab_screenshot", quality=50)
        assert not shot.is_error and shot.content[0].type == "image"
        assert shot.content[0].mime_type == "image/jpeg"
        assert base64.b64decode(shot.content[0].data)[:3] == b"\xff\xd8\xff"
        doc = await s.call("pinchtab_pdf")
        assert not doc.is_error and doc.content[0].type == "resource"
        res = doc.content[0].resource
        assert res.mime_type == "application/pdf" and base64.b64decode(res.blob)[:5] == b"%PDF-"

    mcp(scenario)


def test_tabs_waits_and_logs(mcp, site):
    async def scenario(s: Session) -> None:
        first = json.loads(await s.ok("pinchtab_navigate", url=site.url("reads_logs.html")))
        second = json.loads(await s.ok("pinchtab_navigate", url=site.url("form.html"), newTab=True))
        ids = [t["id"] for t in json.loads(await s.ok("pinchtab_list_tabs"))]
        assert ids[0] == second["tabId"] and first["tabId"] in ids
        assert json.loads(await s.ok("pinchtab_wait_for_text", text="Form Test"))["waited"] is True
        await s.ok("pinchtab_switch_tab", tabId=first["tabId"])
        console = json.loads(await s.ok("pinchtab_console"))
        assert any("careful now" in e["message"] for e in console)
        await s.ok("pinchtab_wait_for_selector", selector="#more")
        assert json.loads(await s.ok("pinchtab_close_tab", tabId=second["tabId"]))["closed"] is True

        async def gone() -> bool:
            return second["tabId"] not in [t["id"] for t in json.loads(await s.ok("pinchtab_list_tabs"))]

        # Bounded: the bridge can list a just-closed tab until Chrome's Target.targetDestroyed arrives.
        with anyio.fail_after(10):
            while not await gone():
                await anyio.sleep(0.05)  # the poll interval of a bounded wait

    mcp(scenario)


def _read_line(stream: Any, deadline: float) -> bytes:
    """One line from a pipe, or fail at the deadline (never a read that blocks forever)."""
    line = b""
    while not line.endswith(b"\n"):
        ready, _, _ = select.select([stream], [], [], max(0.0, deadline - time.monotonic()))
        assert ready, f"no complete line before the deadline (got {line!r})"
        chunk = os.read(stream.fileno(), 1)
        assert chunk, f"stdout closed mid-line (got {line!r})"
        line += chunk
    return line


def test_process_speaks_only_protocol_on_stdout_and_exits_when_stdin_closes(bridge, tmp_path):
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("PINCHTAB_TOKEN", None)
    proc = subprocess.Popen([sys.executable, "-m", "app.clients.cli", "mcp", "--server", bridge.base], cwd=str(ROOT),
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "0"}}}
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
    try:
        deadline = time.monotonic() + 60
        for msg in (init, {"jsonrpc": "2.0", "method": "notifications/initialized"}, listing):
            proc.stdin.write(json.dumps(msg).encode() + b"\n")
            proc.stdin.flush()
        replies = [json.loads(_read_line(proc.stdout, deadline)) for _ in range(2)]  # nothing but JSON-RPC
        slow = {"jsonrpc": "2.0", "id": 3, "method": "tools/call",
                "params": {"name": "pinchtab_wait", "arguments": {"ms": 25000}}}
        proc.stdin.write(json.dumps(slow).encode() + b"\n")
        proc.stdin.close()  # the host is done: the server goes at once, the 25 s call in flight or not
        proc.wait(timeout=10)  # its few log lines fit the stderr pipe's buffer
        rest, err = proc.stdout.read(), proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=10)
    assert proc.returncode == 0, err.decode()
    assert all(json.loads(line)["jsonrpc"] == "2.0" for line in rest.splitlines())
    assert [r.get("id") for r in replies] == [1, 2]
    assert replies[0]["result"]["serverInfo"]["name"] == "pinchtab"
    # The default list is the core one (test_mcp_lists: every tool still answers by name).
    assert [t["name"] for t in replies[1]["result"]["tools"]] == mcp_tools.listed("core")
    assert f"pinchtab mcp: {len(EXPECTED)} tools ({len(mcp_tools.CORE)} listed: core)".encode() in err
    assert b"stdin closed" in err
