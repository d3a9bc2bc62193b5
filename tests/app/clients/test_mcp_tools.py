"""``pinchtab mcp`` takes what the original PinchTab's MCP clients send: its tool names, its argument
names (``value`` on fill, boolean ``snap``, ``selector``/``ref``/``query``/``element``/``target``,
``tabId`` on every tab tool), through a real MCP session against a real bridge and Chromium."""
from __future__ import annotations

import base64
import json

import pytest
from support.agent import ref_of
from support.mcp_client import Session, run_session

pytestmark = pytest.mark.e2e


def state_of(page_text: str) -> dict[str, str]:
    """The page's `name=...|pick=...` state line (tests/pages/mcp_tools.html) as a dict."""
    line = next(ln for ln in page_text.splitlines() if ln.startswith("name="))
    return dict(part.split("=", 1) for part in line.split("|"))


async def tab_text(s: Session, tab: str) -> str:
    return await s.ok("pinchtab_get_text", tabId=tab, raw=True)


def test_element_tools_take_the_originals_argument_names_and_tab_id(mcp, site):
    async def scenario(s: Session) -> None:
        navigated = await s.ok("pinchtab_navigate", url=site.url("mcp_tools.html"), snap=True)  # the original's bool
        head, _, snap = navigated.partition("\n\n")
        tab = json.loads(head)["tabId"]
        assert snap.startswith("# MCP tools |") and ref_of(snap, "button", "Increment")
        other = json.loads(await s.ok("pinchtab_navigate", url=site.url("form.html"), newTab=True))["tabId"]

        # Every call names the first tab, the way the original's clients do.
        await s.ok("pinchtab_fill", selector="#name", value="Ada", tabId=tab)
        await s.ok("pinchtab_type", element="#name", text=" L", tabId=tab)
        assert json.loads(await s.ok("pinchtab_select", target="#pick", value="b", tabId=tab))["selected"] == "b"
        await s.ok("pinchtab_click", query="Increment button", tabId=tab)  # words: matched like pinchtab_find
        clicked = await s.ok("pinchtab_click", ref=ref_of(snap, "button", "Increment"), tabId=tab, snap=True)
        assert json.loads(clicked.partition("\n\n")[0]) == {"clicked": True} and "# MCP tools |" in clicked
        await s.ok("pinchtab_hover", selector="#hover", tabId=tab)
        await s.ok("pinchtab_focus", selector="#focus", tabId=tab)
        await s.ok("pinchtab_focus", query="#name", tabId=tab)  # a query that is already a selector
        await s.ok("pinchtab_keyboard_type", text="!", tabId=tab)
        await s.ok("pinchtab_keyboard_inserttext", text="??", tabId=tab)
        await s.ok("pinchtab_press", key="Backspace", tabId=tab)
        await s.ok("pinchtab_keydown", key="Shift", tabId=tab)
        await s.ok("pinchtab_keyup", key="Shift", tabId=tab)
        page = await tab_text(s, tab)
        assert state_of(page) == {"name": "Ada L!?", "pick": "b", "count": "2", "hovered": "true",
                                  "focused": "true", "answer": ""}
        assert "keys=keydown:Shift,keyup:Shift" in page

        # A call with tabId also makes that tab the agent's current one, as a lookup does in the original.
        await s.ok("pinchtab_switch_tab", tabId=other)
        assert "Form Test" in await s.ok("pinchtab_get_text")
        assert "name=Ada L!?" in await tab_text(s, tab)
        assert "Every tool" in await s.ok("pinchtab_get_text")

    mcp(scenario)


def test_scroll_takes_direction_steps_deltas_and_scrolls_elements_into_view(mcp, site):
    async def scenario(s: Session) -> None:
        tab = json.loads(await s.ok("pinchtab_navigate", url=site.url("mcp_tools.html"), newTab=True))["tabId"]
        down = json.loads(await s.ok("pinchtab_scroll", direction="down", pixels=100, steps=2, tabId=tab))
        assert down["scrolled"] is True and down["y"] == 200, down
        wheel = json.loads(await s.ok("pinchtab_scroll", deltaY=150, tabId=tab))  # the original's mouse-wheel
        assert wheel["wheel"] is True and wheel["deltaY"] == 150, wheel
        up = json.loads(await s.ok("pinchtab_scroll", direction="up", steps=1, tabId=tab))  # 120 px a step
        assert up["y"] == 230, up
        box = json.loads(await s.ok("pinchtab_scroll_into_view", selector="#far", tabId=tab))
        assert {"x", "y", "width", "height"} <= set(box) and 0 <= box["y"] < 1000, box
        into_view = json.loads(await s.ok("pinchtab_scroll", target="#inc", tabId=tab))
        assert into_view["scrolled"] is True and into_view["y"] < 230

    mcp(scenario)


def test_waits_and_dialogs_with_the_originals_arguments(mcp, site):
    async def scenario(s: Session) -> None:
        tab = json.loads(await s.ok("pinchtab_navigate", url=site.url("mcp_tools.html"), newTab=True))["tabId"]
        await s.ok("pinchtab_click", selector="#later", tabId=tab)
        assert json.loads(await s.ok("pinchtab_wait_for_selector", selector="#arrived", timeout=5000,
                                     tabId=tab))["waited"] is True
        await s.ok("pinchtab_wait_for_text", text="Arrived", tabId=tab, timeout=60000)  # clamped, not refused
        await s.ok("pinchtab_click", selector="#go", tabId=tab)
        assert json.loads(await s.ok("pinchtab_wait_for_url", url="**step=done", tabId=tab))["waited"] is True
        assert json.loads(await s.ok("pinchtab_wait_for_load", load="ready-state", tabId=tab))["waited"] is True
        assert "timeout after" in await s.error("pinchtab_wait_for_url", url="**never*", timeout=200, tabId=tab)
        assert "evaluate_disabled" in await s.error("pinchtab_wait_for_function", fn="true", tabId=tab)
        assert json.loads(await s.ok("pinchtab_wait", ms=5)) == {"waited": 5}

        # A click that opens a confirm: answered in the same call, or blocked until pinchtab_dialog.
        await s.ok("pinchtab_click", selector="#ask", dialogAction="dismiss", tabId=tab)
        assert state_of(await tab_text(s, tab))["answer"] == "no"
        assert "dialog" in await s.error("pinchtab_click", selector="#ask", tabId=tab)
        handled = json.loads(await s.ok("pinchtab_dialog", action="accept", tabId=tab))
        assert handled["type"] == "confirm" and handled["message"] == "Sure?"
        assert state_of(await tab_text(s, tab))["answer"] == "yes"

    mcp(scenario)


def test_reads_take_tab_id_and_the_originals_options(mcp, site):
    async def scenario(s: Session) -> None:
        tab = json.loads(await s.ok("pinchtab_navigate", url=site.url("reads_logs.html"), newTab=True))["tabId"]
        front = json.loads(await s.ok("pinchtab_navigate", url=site.url("mcp_tools.html"), newTab=True))["tabId"]
        text_snap = await s.ok("pinchtab_snapshot", tabId=tab, format="text", interactive=False)
        assert text_snap.startswith("# ") and site.url("reads_logs.html") in text_snap
        cut = json.loads(await s.ok("pinchtab_get_text", tabId=tab, raw=True, maxChars=5, format="json"))
        assert len(cut["text"]) == 5 and cut["truncated"] is True
        # (Chrome paints no frames for a tab in the background, so the picture is of the front one.)
        shot = await s.call("pinchtab_screenshot", tabId=front, format="png", scale=0.5)
        assert not shot.is_error and shot.content[0].mime_type == "image/png"
        assert base64.b64decode(shot.content[0].data)[:4] == b"\x89PNG"
        doc = await s.call("pinchtab_pdf", tabId=tab, scale=0.5, landscape=True)
        assert not doc.is_error and base64.b64decode(doc.content[0].resource.blob)[:5] == b"%PDF-"
        assert doc.content[0].resource.uri == f"pinchtab://tabs/{tab}/page.pdf"
        assert any("careful now" in e["message"] for e in json.loads(await s.ok("pinchtab_console", tabId=tab)))
        assert isinstance(json.loads(await s.ok("pinchtab_errors", tabId=tab)), list)
        assert "cookies_disabled" in await s.error("pinchtab_cookies", tabId=tab)
        assert "tab_not_found" in await s.error("pinchtab_snapshot", tabId="NOPE")
        assert json.loads(await s.ok("pinchtab_close_tab", tabId=tab)) == {"closed": True, "tabId": tab}

        found = json.loads(await s.ok("pinchtab_find", query="Increment button", tabId=front))
        assert found["best"] and found["matches"][0] == {**found["matches"][0], "ref": found["best"], "role": "button"}
        moved = json.loads(await s.ok("pinchtab_navigate", url=site.url("form.html"), tabId=front))
        assert moved["tabId"] == front and moved["title"] == "E2E Test - Form"  # that tab, not a new one
        back = json.loads(await s.ok("pinchtab_back", tabId=front))
        assert back["url"] == site.url("mcp_tools.html"), back

    mcp(scenario)


def test_unknown_and_conflicting_arguments_are_named(mcp, site):
    async def scenario(s: Session) -> None:
        await s.ok("pinchtab_navigate", url=site.url("mcp_tools.html"))
        err = await s.error("pinchtab_click", selector="#inc", tabid="X", frobnicate=1)
        assert "'tabid' (did you mean 'tabId'?)" in err and "'frobnicate'" in err, err
        assert "properties" not in err and "{" not in err  # a sentence, not a schema dump
        assert "give one" in await s.error("pinchtab_fill", selector="#name", value="a", text="b")
        assert "give one" in await s.error("pinchtab_click", selector="#inc", ref="e1")
        assert "x and y go together" in await s.error("pinchtab_click", x=5)
        assert "must be a list of strings" in await s.error("pinchtab_scrape", url="http://x/", include=[1])
        # The same value under both spellings is fine.
        await s.ok("pinchtab_fill", selector="#name", value="same", text="same")
        # A tool whose route this server lacks says so, not "not found".
        missing = await s.error("pinchtab_connect_profile", profile="work")
        assert "needs GET /profiles/{id}/instance" in missing and "does not have" in missing, missing

    mcp(scenario)


def test_scrape_sends_lists_from_comma_separated_patterns(mcp, site):
    async def scenario(s: Session) -> None:
        # (Rendered: the HTTP fetches refuse a host on this machine, and the test server is one.)
        report = json.loads(await s.ok("pinchtab_scrape", url=site.url("site_shop/index.html"), maxPages=5,
                                       exclude="/site_shop/products/*"))
        names = sorted(p["url"].rsplit("/", 1)[1] for p in report["pages"])
        assert names == ["about.html", "index.html"], names

    mcp(scenario)


def test_connect_profile_asks_the_server_where_a_profile_runs(server_process, tmp_path):
    token = "mcp-t0ken"
    server = server_process({"multiInstance": {"strategy": "explicit"}}, token=token)  # no instance: starts fast
    server.wait_ready(default_instance=False)
    created = server.post("/profiles", json={"name": "work"})
    assert created.status_code == 201, created.text

    async def scenario(s: Session) -> None:
        found = json.loads(await s.ok("pinchtab_connect_profile", profile="work"))
        assert found["profile"] == "work" and found["running"] is False and found["status"] == "stopped", found
        assert "profile_not_found" in await s.error("pinchtab_connect_profile", profile="nobody")

    run_session(server.base, tmp_path, scenario, env={"PINCHTAB_TOKEN": token})
