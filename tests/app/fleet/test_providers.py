"""Providers against real engines: a Browserless leases, fills up and says so; chromedriver's
sessions carry a CDP address and end when released; a dead engine is down, with no secret shown."""
from __future__ import annotations

import json

import pytest
import requests
import websocket

from app.config.declare import schema_for
from app.config.settings import ProviderConfig
from app.orchestrator.launch.providers import ProviderDown, ProviderFull, build
from app.orchestrator.launch.providers.placement import Room, order


def make(**entry):  # type: ignore[no-untyped-def]
    """A provider built from a ``browsers.providers`` entry, loaded as the config loads it."""
    return build(schema_for(ProviderConfig)().load(entry))


def browser_version(cdp_url: str) -> str:
    ws = websocket.create_connection(cdp_url, timeout=15)
    try:
        ws.send(json.dumps({"id": 1, "method": "Browser.getVersion"}))
        return str(json.loads(ws.recv())["result"]["product"])
    finally:
        ws.close()


def test_a_browserless_leases_until_full_and_says_so(browserless) -> None:
    provider = make(name="east", kind="cdp", capacity=2, url=browserless.ws_url)
    assert provider.health().ok and provider.health().free == 2
    lease = provider.lease()
    assert "token=***" in lease.shown and browserless.token not in lease.shown
    held = [websocket.create_connection(lease.cdp_url, timeout=15) for _ in range(2)]
    try:
        assert provider.health().free == 0
        with pytest.raises(ProviderFull):
            provider.lease()
    finally:
        for ws in held:
            ws.close()
    # Closing the connection is the give-back: the engine runs no browser for us any more.
    from support.waits import wait_until
    wait_until(lambda: browserless.browsers() == set(), 10)
    assert browser_version(provider.lease().cdp_url).startswith("Chrome/")


def test_a_wrong_token_or_a_dead_engine_is_down_and_the_token_is_never_shown(doomed_browserless) -> None:
    wrong = make(name="east", kind="cdp", capacity=2,
                               url=doomed_browserless.ws_url.replace("token=T", "token=nope"))
    with pytest.raises(ProviderDown) as refused:
        wrong.lease()
    assert "token" in refused.value.reason and "nope" not in str(refused.value)
    doomed_browserless.stop()
    dead = make(name="east", kind="cdp", capacity=2, url=doomed_browserless.ws_url)
    health = dead.health(timeout_s=1)
    assert not health.ok and "T" not in health.detail.replace("Timeout", "")
    with pytest.raises(ProviderDown):
        dead.lease(timeout_s=1)


def test_a_fixed_browser_by_its_http_address(browserless) -> None:
    # Browserless answers /json/version like a browser's own debugging port does.
    provider = make(name="fixed", kind="cdp", capacity=1,
                                  url=f"{browserless.base}?token={browserless.token}")
    assert provider.health().ok
    assert provider.lease().cdp_url.startswith("ws://")


def test_a_webdriver_session_carries_the_cdp_address_and_ends_on_release(chromedriver) -> None:
    provider = make(name="wd", kind="webdriver", capacity=2, url=chromedriver.base,
                                  capabilities=chromedriver.capabilities())
    assert provider.health().ok
    lease = provider.lease()
    assert lease.session_id and browser_version(lease.cdp_url).startswith("Chrome/")
    url = f"{chromedriver.base}/session/{lease.session_id}/url"
    assert requests.get(url, timeout=10).status_code == 200
    lease.release()
    assert requests.get(url, timeout=10).json()["value"]["error"] == "invalid session id"


def test_a_session_the_engine_cannot_create_is_full(chromedriver) -> None:
    provider = make(name="wd", kind="webdriver", capacity=1, url=chromedriver.base,
                                  capabilities={"browserName": "chrome",
                                                "goog:chromeOptions": {"binary": "/nonexistent/chrome"}})
    with pytest.raises(ProviderFull):
        provider.lease()


def test_placement_most_free_first_then_the_policy() -> None:
    rooms = [Room("a", 2, 1), Room("b", 4, 1), Room("c", 3, 0), Room("d", 5, 0, healthy=False), Room("e", 1, 1)]
    assert order(rooms) == ["b", "c", "a"]
    even = [Room("a", 2, 0), Room("b", 2, 0), Room("c", 2, 0)]
    assert order(even, "fcfs") == ["a", "b", "c"]
    assert [order(even, "round_robin", turn)[0] for turn in range(4)] == ["a", "b", "c", "a"]
    # The engine's own count wins when it is lower (someone else uses the same engine).
    assert order([Room("a", 4, 0, engine_free=1), Room("b", 2, 0)]) == ["b", "a"]
    assert order([Room("a", 1, 1), Room("b", 1, 0, engine_free=0)]) == []


def test_a_token_lives_in_the_environment_and_is_masked_wherever_shown() -> None:
    entry = schema_for(ProviderConfig)().load({"name": "east", "kind": "cdp",
                                               "url": "wss://engine.example/chromium?token=${ENGINE_TOKEN}",
                                               "headers": {"X-Api-Key": "${ENGINE_TOKEN}"}})
    east = build(entry, env={"ENGINE_TOKEN": "s3cret"})
    assert east.url.endswith("token=s3cret") and east.headers == {"X-Api-Key": "s3cret"}
    assert "s3cret" not in east.shown_endpoint and "s3cret" not in repr(entry)
    with pytest.raises(ValueError, match=r"\$\{ENGINE_TOKEN\} is not set"):
        build(entry, env={})
