"""Server mode on browsers from a fleet: instances placed on two Browserless engines and on a
chromedriver, the whole API on them, full engines skipped, a dead engine's instances lost and placed
again, and every browser given back on stop. Two Browserless engines and a server on both for the
module: a test stops its instances and gives every browser back; the dead engine's test ends one
of them, so it comes last."""
from __future__ import annotations

import time
from typing import Any

import pytest
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


@pytest.fixture(scope="module")
def engines(browserless_engines: Any) -> list[BrowserlessProcess]:
    return browserless_engines("east", "west", token=TOKEN)


@pytest.fixture(scope="module")
def servers(engines: list[BrowserlessProcess], chromedriver: Any, fleet_servers: Any) -> list[Any]:
    """The module's two servers, started together: one on the engines east and west, one on chromedriver."""
    east, west = engines
    webdriver = {"name": "wd", "kind": "webdriver", "capacity": 2, "url": chromedriver.base,
                 "capabilities": chromedriver.capabilities()}
    return fleet_servers(fleet_config(browserless_entry("east", east), browserless_entry("west", west)),
                         fleet_config(webdriver), env={"ENGINE_TOKEN": east.token})


@pytest.fixture(scope="module")
def server(servers: list[Any]) -> Any:
    return servers[0]


@pytest.fixture()
def fleet(server: Any, engines: list[BrowserlessProcess]) -> tuple[Any, BrowserlessProcess, BrowserlessProcess]:
    """The module's server, running no instance, and its engines east and west, running no browser,
    once the server has seen them so: it places by the room each engine last reported, which lags
    a test's stops by up to one health poll."""
    east, west = engines
    wait_until(lambda: east.browsers() == set() and west.browsers() == set(), 15)
    assert not [i for i in server.get("/instances").json() if i["status"] in ("starting", "running")]
    wait_until(lambda: all(p["healthy"] and p["inUse"] == 0 and p.get("engineFree", p["capacity"]) == p["capacity"]
                           for p in server.get("/providers").json()), 15)
    return server, east, west


def open_tab(server, inst: dict, url: str) -> str:  # type: ignore[no-untyped-def]
    r = server.post(f"/instances/{inst['id']}/tabs/open", json={"url": url})
    assert r.status_code in (200, 201), r.text
    return r.json()["tabId"]


def test_instances_spread_over_two_engines_the_fifth_waits_for_room(fleet, site):
    server, east, west = fleet
    placed = server.start_instances({}, {}, {}, {})
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
    server.wait_status(later.json()["id"], "running", 60)
    server.stop_instances(*placed[1:], later.json())
    wait_until(lambda: east.browsers() == set() and west.browsers() == set(), 15)


def test_a_dead_engine_loses_its_instances_and_a_restart_lands_on_the_live_one(fleet, site):
    server, east, west = fleet
    doomed, living = server.start_instances({"provider": "east"}, {"provider": "west"})
    tab = open_tab(server, living, site.url("form.html"))
    east.stop()
    lost = server.wait_status(doomed["id"], "lost", 8)   # within a few seconds of the engine's death
    assert "east" in lost["error"]
    r = server.post("/navigate", json={"tabId": tab, "url": site.url("counter.html")})
    assert r.status_code == 200, r.text   # the other engine's instance carries on
    asked = time.monotonic()
    r = server.post(f"/instances/{doomed['id']}/tabs/open", json={"url": site.url("form.html")})
    assert r.status_code == 503 and r.json()["code"] == "instance_lost", r.text
    assert time.monotonic() - asked < 10   # at once, not after the wait for a starting instance (30 s)
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


def test_a_webdriver_instance_runs_the_api_and_its_session_ends_on_stop(servers, site):
    server = servers[1]
    [inst] = server.start_instances({})
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
