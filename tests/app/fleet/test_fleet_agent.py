"""An agent's side of a fleet: its saved state follows it to a remote browser (``POST /instances/start
{"state"}``), ``pinchtab mcp`` drives an instance on Browserless, and the dashboard shows the providers
with their room and health and never the engine's token. One Browserless and one server for the module
(each costs seconds to start): a provider on this machine (``here``) and the Browserless (``east``)."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.agent import ref_of
from support.browser_page import Page
from support.mcp_client import Session, run_session
from support.servers import ServerProcess
from support.waits import wait_until

from bench.engines import BrowserlessProcess

pytestmark = pytest.mark.e2e

TOKEN = "fleet-agent-t0ken"
ENGINE_TOKEN = "engine-s3cret-9f2c"   # distinctive: it must appear nowhere a person or agent reads


@pytest.fixture(scope="module")
def east(browserless_engines: Any) -> BrowserlessProcess:
    [engine] = browserless_engines("east", token=ENGINE_TOKEN)
    return engine


@pytest.fixture(scope="module")
def server(east: BrowserlessProcess, fleet_servers: Any) -> Iterator[Any]:
    config = {"multiInstance": {"strategy": "explicit"}, "instanceDefaults": {"stealthLevel": "off"},
              "security": {"allowStateExport": True},
              "browsers": {"providers": [
                  {"name": "here", "kind": "local", "capacity": 1},
                  {"name": "east", "kind": "cdp", "capacity": 2,
                   "url": f"ws://127.0.0.1:{east.port}/chromium?token=${{ENGINE_TOKEN}}"}]}}
    [sp] = fleet_servers(config, env={"ENGINE_TOKEN": ENGINE_TOKEN}, token=TOKEN)
    yield sp
    sp.stop()
    assert ENGINE_TOKEN not in sp.output()


def start(server: Any, **body: Any) -> dict[str, Any]:
    [inst] = server.start_instances(body)
    return inst


def stop(server: Any, *instances: dict[str, Any]) -> None:
    server.stop_instances(*instances)


def open_tab(server: ServerProcess, inst: dict[str, Any], url: str) -> str:
    r = server.post(f"/instances/{inst['id']}/tabs/open", json={"url": url})
    assert r.status_code == 200, r.text
    return str(r.json()["tabId"])


def page_text(server: ServerProcess, tab: str) -> str:
    r = server.get(f"/text?tabId={tab}")
    assert r.status_code == 200, r.text
    return str(r.json()["text"])


def running(server: ServerProcess) -> list[dict[str, Any]]:
    return [i for i in server.get("/instances").json() if i["status"] in ("starting", "running")]


# --- saved state follows the agent -----------------------------------------------------------------
def test_a_state_saved_here_is_loaded_into_a_new_remote_instance_on_start(server, east, site):
    here = start(server, provider="here")
    tab = open_tab(server, here, site.url("storage.html?set=1"))   # the page sets cookies and storage
    saved = server.post("/state/save", json={"tabId": tab, "name": "shop-login"})
    assert saved.status_code == 200 and saved.json()["cookies"] == 2, saved.text
    stop(server, here)

    r = server.post("/instances/start", json={"provider": "east", "state": "shop-login"})
    assert r.status_code == 201, r.text
    remote = r.json()
    # It answers once the instance runs and the state is in it: cookies, and the origin's storage.
    assert remote["status"] == "running" and remote["provider"] == "east"
    assert remote["state"]["cookiesRestored"] == 2 and remote["state"]["skippedOrigins"] == []
    assert remote["state"]["storageItemsRestored"] >= 1
    assert len(east.browsers()) == 1

    # An agent's first visit finds what it saved (sessionStorage is a tab's own: it does not travel).
    shown = page_text(server, open_tab(server, remote, site.url("storage.html")))
    assert "visitor=agent-7" in shown and "theme=dark" in shown and "cart=apples,pears" in shown, shown
    # The tab the load used is closed again: the instance shows only the agent's.
    assert [t["url"] for t in server.get(f"/instances/{remote['id']}/tabs").json()
            if t["url"].startswith("http")] == [site.url("storage.html")]
    stop(server, remote)
    wait_until(lambda: east.browsers() == set(), 15)


def test_a_bad_or_missing_state_name_launches_nothing(server, east):
    before = len(running(server))
    for name, status, code in [("../config", 400, "bad_state_name"), (".hidden", 400, "bad_state_name"),
                               ("never-saved", 404, "state_not_found")]:
        r = server.post("/instances/start", json={"provider": "east", "state": name})
        assert (r.status_code, r.json()["code"]) == (status, code), r.text
    assert len(running(server)) == before and not east.browsers()


def test_a_state_the_instance_cannot_load_stops_it_and_says_why(server, east):
    sessions = server.state_dir / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / "broken.json").write_text("{not json")
    r = server.post("/instances/start", json={"provider": "east", "state": "broken"})
    assert r.status_code == 422 and r.json()["code"] == "state_corrupt", r.text
    details = r.json()["details"]
    assert details["stopped"] is True
    # Stopped (and, on a throwaway profile, gone), not left holding the engine's browser for nobody.
    assert details["instanceId"] not in [i["id"] for i in running(server)]
    wait_until(lambda: east.browsers() == set(), 15)


# --- an agent through MCP on a remote instance ------------------------------------------------------
def test_an_agent_drives_a_remote_instance_through_mcp(server, east, site, tmp_path: Path):
    remote = start(server, provider="east")
    tab = open_tab(server, remote, "about:blank")

    async def scenario(s: Session) -> None:
        navigated = json.loads(await s.ok("pinchtab_navigate", url=site.url("mcp_tools.html"), tabId=tab))
        assert navigated["tabId"] == tab
        snap = await s.ok("pinchtab_snapshot", tabId=tab)
        await s.ok("pinchtab_fill", ref=ref_of(snap, "textbox", "Name"), value="Ada", tabId=tab)
        await s.ok("pinchtab_click", ref=ref_of(snap, "button", "Increment"), tabId=tab)
        text = await s.ok("pinchtab_get_text", tabId=tab, raw=True)
        assert "name=Ada|pick=a|count=1" in text, text

    run_session(server.base, tmp_path, scenario, env={"PINCHTAB_TOKEN": TOKEN})
    assert len(east.browsers()) == 1   # the pages were the engine's browser's, not one of ours
    stop(server, remote)


# --- the dashboard's providers table ----------------------------------------------------------------
def test_the_dashboard_shows_each_provider_its_room_and_health_never_the_token(server, east, browser):
    remote = start(server, provider="east")
    page = Page(browser)
    try:
        page.run(lambda t: t.call("Network.clearBrowserCookies", {}))
        page.go(server.base + "/login")
        wait_until(lambda: page.dom("!document.getElementById('token-panel').hidden"), 10)
        page.fill("#token-input", TOKEN)
        page.click("#token-save")

        def table() -> list[list[str]] | None:
            rows = page.dom("document.getElementById('providers').hidden ? null : "
                            "[...document.querySelectorAll('#providers tbody tr')]"
                            ".map(tr => [...tr.cells].map(td => td.textContent))")
            return rows if rows and any(r[2] == "1 / 2" for r in rows) else None

        rows = wait_until(table, 15)
        assert rows[0] == ["here", "local", "0 / 1", "up", ""]
        name, kind, used, health, endpoint = rows[1]
        assert (name, kind, used, health) == ("east", "cdp", "1 / 2", "up")
        assert endpoint == f"ws://127.0.0.1:{east.port}/chromium?token=***"
        # Nowhere on the page, in its text or its markup, is the engine's token.
        assert ENGINE_TOKEN not in page.dom("document.documentElement.outerHTML")
    finally:
        page.close()
        stop(server, remote)


def test_an_instance_folder_of_states_from_before_moves_into_the_shared_one(tmp_path: Path):
    from types import SimpleNamespace

    from app.orchestrator.launch.local import LocalLauncher

    server_dir, child = tmp_path / "server", tmp_path / "server" / "instances" / "work"
    (child / "sessions").mkdir(parents=True)
    (child / "sessions" / "mine.json").write_text("{}")
    (server_dir / "sessions").mkdir()
    (server_dir / "sessions" / "taken.json").write_text('{"first": 1}')
    (child / "sessions" / "taken.json").write_text('{"second": 2}')
    host = SimpleNamespace(http=None, config=SimpleNamespace(server=SimpleNamespace(state_dir=server_dir),
                                                             to_dict=dict))
    launcher = LocalLauncher(host)  # type: ignore[arg-type]
    launcher._share_states(child)
    # A name the server has already keeps the instance's folder (and its state) where it was.
    assert not (child / "sessions").is_symlink() and (server_dir / "sessions" / "mine.json").exists()
    (child / "sessions" / "taken.json").unlink()
    launcher._share_states(child)
    assert (child / "sessions").resolve() == (server_dir / "sessions").resolve()
    assert json.loads((child / "sessions" / "taken.json").read_text()) == {"first": 1}
