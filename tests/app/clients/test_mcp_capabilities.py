"""The original PinchTab's MCP tools behind the gated and newer routes (frame, capture, network,
interception, recording, evaluate, cookies), through a real MCP session against a bridge whose
config turns those capabilities on."""
from __future__ import annotations

import base64
import json
from typing import Any

import anyio
import pytest
from support.mcp_client import Session
from support.servers import BridgeProcess

pytestmark = pytest.mark.e2e

CAPABILITIES = {"allowEvaluate": True, "allowCookies": True, "allowNetworkIntercept": True, "allowScreencast": True}


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Any:
    home = tmp_path_factory.mktemp("mcp-caps-bridge")
    config = home / "config.json"
    config.write_text(json.dumps({"security": CAPABILITIES}))
    bp = BridgeProcess(home, env={"PINCHTAB_CONFIG": str(config)})
    try:
        bp.wait_healthy()
        yield bp
    finally:
        bp.stop()


async def until(check: Any, timeout_s: float = 10.0) -> Any:
    """Poll the async ``check`` until it returns something truthy (failing at the deadline)."""
    with anyio.fail_after(timeout_s):
        while not (found := await check()):
            await anyio.sleep(0.05)  # the poll interval of a bounded wait
    return found


def test_frame_scope_capture_eval_and_cookies(mcp, site):
    async def scenario(s: Session) -> None:
        tab = json.loads(await s.ok("pinchtab_navigate", url=site.url("iframe.html"), newTab=True))["tabId"]
        assert json.loads(await s.ok("pinchtab_frame", tabId=tab))["scoped"] is False
        scoped = json.loads(await s.ok("pinchtab_frame", target="#inner", tabId=tab))
        assert scoped["scoped"] is True and scoped["current"]["frameUrl"].endswith("/inner.html"), scoped
        # Selectors now look in the iframe: #q and #go exist only there.
        await s.ok("pinchtab_fill", selector="#q", value="cats", tabId=tab)
        await s.ok("pinchtab_click", selector="#go", tabId=tab)
        assert "searched cats" in await s.ok("pinchtab_get_text", raw=True, tabId=tab)
        assert json.loads(await s.ok("pinchtab_frame", target="main", tabId=tab))["scoped"] is False

        shot = await s.call("pinchtab_capture", tabId=tab, quality=50)
        assert not shot.is_error, shot.content
        assert shot.content[0].type == "image" and base64.b64decode(shot.content[0].data)[:3] == b"\xff\xd8\xff"
        envelope = json.loads(shot.content[1].text)
        assert "base64" not in envelope["image"] and envelope["tabId"] == tab
        assert any(n["role"] == "button" and n.get("boundingBox") for n in envelope["snapshot"]["nodes"])

        assert json.loads(await s.ok("pinchtab_eval", expression="document.title", tabId=tab)) == "Frames"
        waited = json.loads(await s.ok("pinchtab_wait_for_function", fn="document.title === 'Frames'", tabId=tab))
        assert waited["waited"] is True
        assert json.loads(await s.ok("pinchtab_cookies", tabId=tab))["cookies"] == []

    mcp(scenario)


def test_network_log_detail_clear_and_interception(mcp, site):
    async def scenario(s: Session) -> None:
        tab = json.loads(await s.ok("pinchtab_navigate", url=site.url("mcp_network.html"), newTab=True))["tabId"]

        async def missing() -> list[dict[str, Any]]:
            # Listed from its request on; the 404 is recorded when its response comes.
            entries = json.loads(await s.ok("pinchtab_network", tabId=tab, filter="mcp_missing"))["entries"]
            return [e for e in entries if e.get("status")]

        (entry,) = await until(missing)
        assert "items" not in json.loads(await s.ok("pinchtab_network", tabId=tab))  # not the same list twice
        failed = json.loads(await s.ok("pinchtab_network", tabId=tab, status="4xx", limit=5))["entries"]
        assert [e["url"] for e in failed] == [entry["url"]]
        detail = json.loads(await s.ok("pinchtab_network_detail", requestId=entry["requestId"], tabId=tab))
        assert detail["entry"]["url"].endswith("/mcp_missing.png") and detail["entry"]["status"] == 404

        routed = json.loads(await s.ok("pinchtab_network_route", pattern="*mcp_api/data*", action="fulfill",
                                       body="routed!", contentType="text/plain", status=200, tabId=tab))
        assert [r["pattern"] for r in routed["rules"]] == ["*mcp_api/data*"]
        await s.ok("pinchtab_click", selector="#load", tabId=tab)
        await s.ok("pinchtab_wait_for_text", text="got 200 routed!", tabId=tab)
        assert json.loads(await s.ok("pinchtab_network_unroute", pattern="*mcp_api/data*", tabId=tab))["rules"] == []
        await s.ok("pinchtab_click", selector="#load", tabId=tab)
        await s.ok("pinchtab_wait_for_text", text="got 404", tabId=tab)

        assert json.loads(await s.ok("pinchtab_network_clear", tabId=tab))["cleared"] is True
        assert json.loads(await s.ok("pinchtab_network", tabId=tab, filter="mcp_missing"))["entries"] == []

    mcp(scenario)


def test_record_start_status_stop_writes_a_video(mcp, site):
    async def scenario(s: Session) -> None:
        tab = json.loads(await s.ok("pinchtab_navigate", url=site.url("mcp_tools.html"), newTab=True))["tabId"]
        started = json.loads(await s.ok("pinchtab_record_start", tabId=tab, file="mcp-run", fps=5, scale=0.5))
        assert started["status"] == "recording" and started["tabId"] == tab
        try:
            async def frames() -> int:
                await s.ok("pinchtab_click", selector="#inc", tabId=tab)  # something to paint
                status = json.loads(await s.ok("pinchtab_record_status", tabId=tab))
                assert status["active"] is True
                # Some of a second's worth: a recording stopped within the first second can come out empty.
                return status["frames"] >= 3 and status["durationMs"] >= 1500

            await until(frames, 20)
        finally:
            stopped = json.loads(await s.ok("pinchtab_record_stop", tabId=tab))
        assert stopped["status"] == "encoding" and stopped["path"].endswith("mcp-run.webm")

        async def written() -> bool:  # the file is made after the stop answers
            status = json.loads(await s.ok("pinchtab_record_status"))
            return status["state"] == "finished" and status["active"] is False and status["size"] > 0

        await until(written, 30)

    mcp(scenario)
