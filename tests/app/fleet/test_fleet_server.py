"""Server mode on browsers from a fleet: instances placed on two Browserless engines and on a
chromedriver, the whole API on them, full engines skipped, a dead engine's instances lost and placed
again, and every browser given back on stop."""
from __future__ import annotations

import requests
from support.waits import wait_until

from bench.engines import BrowserlessProcess

TOKEN = "fleet-s3cret-token"


def fleet_config(*providers: dict) -> dict:
    return {"multiInstance": {"strategy": "explicit"}, "browsers": {"providers": list(providers)},
            "instanceDefaults": {"stealthLevel": "off"}}


def browserless_entry(name: str, engine: BrowserlessProcess, capacity: int = 2) -> dict:
    return {"name": name, "kind": "cdp", "capacity": capacity,
            "url": f"ws://127.0.0.1:{engine.port}/chromium?token=${{ENGINE_TOKEN}}"}


def start_instance(server, **body) -> dict:  # type: ignore[no-untyped-def]
    r = server.post("/instances/start", json=body)
    assert r.status_code == 201, r.text
    return server.wait_status(r.json()["id"], "running", 60)


def open_tab(server, inst: dict, url: str) -> str:  # type: ignore[no-untyped-def]
    r = server.post(f"/instances/{inst['id']}/tabs/open", json={"url": url})
    assert r.status_code in (200, 201), r.text
    return r.json()["tabId"]


def test_instances_spread_over_two_engines_the_fifth_waits_for_room(server_process, site, tmp_path, monkeypatch):
    east = BrowserlessProcess(tmp_path / "east", concurrent=2, token=TOKEN)
    west = BrowserlessProcess(tmp_path / "west", concurrent=2, token=TOKEN)
    try:
        east.wait_healthy(60)
        west.wait_healthy(60)
        monkeypatch.setenv("ENGINE_TOKEN", east.token)
        server = server_process(fleet_config(browserless_entry("east", east), browserless_entry("west", west)))
        server.wait_ready(default_instance=False)
        placed = [start_instance(server) for _ in range(4)]
        assert sorted(p["provider"] for p in placed) == ["east", "east", "west", "west"]
        for record in placed:   # the engine's address is shown, its token never
            assert record["endpoint"].endswith("token=***") and east.token not in str(record)
        assert len(east.browsers()) == 2 and len(west.browsers()) == 2

        full = server.post("/instances/start", json={})
        assert full.status_code == 503 and full.json()["code"] == "no_capacity", full.text
        assert full.headers["Retry-After"].isdigit()
        providers = {p["name"]: p for p in server.get("/providers").json()}
        assert providers["east"]["inUse"] == 2 and providers["east"]["healthy"] is True

        # An agent flow on a remote instance, through the server: navigate, snapshot, act by ref, text.
        tab = open_tab(server, placed[0], site.url("counter.html"))
        snap = server.get(f"/snapshot?tabId={tab}&filter=interactive&format=compact").text
        ref = next(line.split()[0] for line in snap.splitlines() if "button Increment" in line)
        assert server.post("/action", json={"tabId": tab, "kind": "click", "ref": ref}).status_code == 200
        assert "1" in server.get(f"/text?tabId={tab}").json()["text"]

        # Stopping gives the browser back; a start that waits for room gets it.
        assert server.post(f"/instances/{placed[0]['id']}/stop").status_code == 200
        wait_until(lambda: len(east.browsers() or "..") < 2 or len(west.browsers() or "..") < 2, 15)
        later = server.post("/instances/start", json={"waitSec": 10})
        assert later.status_code == 201, later.text
        for record in placed[1:] + [later.json()]:
            assert server.post(f"/instances/{record['id']}/stop").status_code == 200
        wait_until(lambda: east.browsers() == set() and west.browsers() == set(), 15)
    finally:
        east.stop()
        west.stop()


def test_a_dead_engine_loses_its_instances_and_a_restart_lands_on_the_live_one(server_process, site, tmp_path,
                                                                              monkeypatch):
    east = BrowserlessProcess(tmp_path / "east", concurrent=2, token=TOKEN)
    west = BrowserlessProcess(tmp_path / "west", concurrent=2, token=TOKEN)
    try:
        east.wait_healthy(60)
        west.wait_healthy(60)
        monkeypatch.setenv("ENGINE_TOKEN", east.token)
        server = server_process(fleet_config(browserless_entry("east", east), browserless_entry("west", west)))
        server.wait_ready(default_instance=False)
        doomed = start_instance(server, provider="east")
        living = start_instance(server, provider="west")
        tab = open_tab(server, living, site.url("form.html"))
        east.stop()
        lost = server.wait_status(doomed["id"], "lost", 8)   # within a few seconds of the engine's death
        assert "east" in lost["error"]
        r = server.post("/navigate", json={"tabId": tab, "url": site.url("counter.html")})
        assert r.status_code == 200, r.text   # the other engine's instance carries on
        r = server.post(f"/instances/{doomed['id']}/tabs/open", json={"url": site.url("form.html")})
        assert r.status_code == 503 and r.json()["code"] == "instance_lost", r.text
        events = requests.get(server.base + "/api/events?lastEventId=0", stream=True, timeout=10)
        seen = ""
        for chunk in events.iter_content(chunk_size=None, decode_unicode=True):
            seen += chunk
            if "instance.lost" in seen and "provider.down" in seen:
                break
        events.close()
        again = server.post(f"/instances/{doomed['id']}/restart")
        assert again.status_code == 200, again.text
        moved = server.wait_status(doomed["id"], "running", 60)
        assert moved["provider"] == "west"
    finally:
        east.stop()
        west.stop()


def test_a_webdriver_instance_runs_the_api_and_its_session_ends_on_stop(server_process, site, chromedriver):
    server = server_process(fleet_config({"name": "wd", "kind": "webdriver", "capacity": 2,
                                          "url": chromedriver.base, "capabilities": chromedriver.capabilities()}))
    server.wait_ready(default_instance=False)
    inst = start_instance(server)
    assert inst["provider"] == "wd"
    tab = open_tab(server, inst, site.url("form.html"))
    assert "Username" in server.get(f"/snapshot?tabId={tab}&format=compact").text
    port = int(inst["endpoint"].rsplit(":", 1)[1].split("/")[0]) if ":" in inst["endpoint"] else 0
    assert server.post(f"/instances/{inst['id']}/stop").status_code == 200
    # chromedriver ended the browser with its session: its debugging port no longer answers.
    wait_until(lambda: not _answers(f"http://127.0.0.1:{port}/json/version"), 15)


def _answers(url: str) -> bool:
    try:
        return requests.get(url, timeout=1).status_code == 200
    except requests.RequestException:
        return False
