"""What each stealth level shows a page, probed in real Chromium (tests/pages/stealth_probe.html):
the light level passes the checks the original's light level passes (chrome.runtime, the battery
API, navigator.connection.downlinkMax), on secure and plain-http pages alike; full adds a noise to
canvas and audio fingerprints that stays the same within a session. And ``GET /stealth/status``
says so, with the hash of the script the tabs get.
"""
from __future__ import annotations

import hashlib
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from cdp.browser import Browser
from cdp.navigation import navigate
from human.stealth import script_source, setup_commands

# A name that is not loopback, so its pages are not secure contexts (as on most plain-http sites).
PLAIN_HOST = "stealth-probe.test"
LEVELS = ("off", "light", "full")


@pytest.fixture(scope="module")
def browsers() -> Iterator[dict[str, Browser]]:
    """A browser per level, as the bridge starts them (launch flags and per-tab setup)."""
    rules = (f"--host-resolver-rules=MAP {PLAIN_HOST} 127.0.0.1",)
    made = {level: Browser(stealth_level=level, extra_flags=rules) for level in LEVELS}
    try:
        with ThreadPoolExecutor(len(made)) as pool:
            for started in [pool.submit(b.start) for b in made.values()]:
                started.result()
        yield made
    finally:
        for b in made.values():
            b.stop()


def probe(browser: Browser, url: str, setup: list[tuple[str, dict[str, Any]]] = ()) -> dict[str, Any]:
    """What the probe page found, in a fresh tab (after ``setup``, extra CDP commands)."""
    tab = browser.new_tab()
    try:
        tab.run(lambda: [tab.call(m, p) for m, p in setup], 10)
        tab.run(lambda: navigate(tab, url, timeout_s=10), 15)
        expr = "new Promise(r => { const t = setInterval(() => { if (window.__probe) { clearInterval(t); " \
               "r(window.__probe); } }, 20); setTimeout(() => r(null), 8000); })"
        res = tab.run(lambda: tab.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                                            "awaitPromise": True}), 15)
        found = res["result"].get("value")
        assert found, "the probe page published nothing"
        return found
    finally:
        browser.close_tab(tab.id)


def urls(site: Any) -> dict[str, str]:
    secure = site.url("stealth_probe.html")
    return {"secure": secure, "plain": secure.replace("127.0.0.1", PLAIN_HOST)}


def passes_light_checks(found: dict[str, Any]) -> bool:
    battery = found["battery"]
    return (found["runtime"] is True and isinstance(battery, dict) and battery["level"] == 1
            and battery["charging"] is True and battery["tag"] == "[object BatteryManager]"
            and found["downlinkMax"] == "Infinity" and found["rtt"] > 0)


def test_light_passes_the_originals_light_checks_on_secure_and_plain_pages(browsers: dict[str, Browser],
                                                                           site: Any) -> None:
    for kind, url in urls(site).items():
        found = probe(browsers["light"], url)
        assert found["secure"] is (kind == "secure")
        assert passes_light_checks(found), (kind, found)
    bare = probe(browsers["off"], urls(site)["plain"])  # without stealth the same checks fail
    assert not passes_light_checks(bare) and bare["downlinkMax"] is None and bare["battery"] is None


def test_light_script_alone_covers_a_browser_started_without_our_flags(browsers: dict[str, Browser],
                                                                       site: Any) -> None:
    # An attached browser gets our per-tab setup but not our launch flags (no downlinkMax flag).
    off = browsers["off"]
    found = probe(off, urls(site)["plain"], setup_commands("light", off.version))
    assert passes_light_checks(found), found


def test_full_noises_canvas_and_audio_stably_and_light_leaves_them(browsers: dict[str, Browser], site: Any) -> None:
    url = urls(site)["secure"]
    native, light, full = (probe(browsers[level], url) for level in LEVELS)
    again = probe(browsers["full"], url)
    for key in ("canvas", "pixels", "audio"):
        assert light[key] == native[key], key  # light changes no fingerprint
        assert full[key] != native[key], key  # full does
        assert again[key] == full[key], key  # and the same way every time in a session
    assert full["canvasStable"] is True
    assert not str(full["audio"]).startswith("error")


def test_stealth_status_reports_the_script_hash_and_capabilities(browsers: dict[str, Browser], tmp_path: Any) -> None:
    from support.config import make_config

    from app.api import create_app

    full = browsers["full"]
    app = create_app(make_config(tmp_path, **{"instanceDefaults.stealthLevel": "full"}), start_browser=False,
                     browser_factory=lambda: full)
    app.extensions["pinchtab"].start(background=False)
    status = app.test_client().get("/stealth/status").json
    expected = "sha256:" + hashlib.sha256(script_source("full", full.version).encode()).hexdigest()
    assert status["level"] == "full" and status["scriptHash"] == expected
    # The hash is of what the tabs get.
    injected = next(p["source"] for m, p in setup_commands("full", full.version)
                    if m == "Page.addScriptToEvaluateOnNewDocument")
    assert expected == "sha256:" + hashlib.sha256(injected.encode()).hexdigest()
    caps = status["capabilities"]
    assert caps["canvasNoise"] and caps["audioNoise"] and caps["batteryAPIBaseline"] and caps["downlinkMax"]
    assert caps["chromeRuntimeConnect"] and not caps["webrtcMitigation"]
    assert status["flags"]["downlinkMaxFlag"] and status["flags"]["automationControlledDisabled"]
    assert {"battery", "downlink-max", "canvas-noise", "audio-noise"} <= set(status["patchIds"])
    assert status["launchMode"] == "allocator" and status["headless"] is True
    assert "--enable-network-information-downlink-max" in status["launchFlags"]


def test_full_offers_user_agent_data_on_plain_http_pages_where_light_stays_like_chrome(browsers: dict[str, Browser],
                                                                                       site: Any) -> None:
    expr = ("navigator.userAgentData ? JSON.stringify({brands: navigator.userAgentData.brands.length, "
            "high: typeof navigator.userAgentData.getHighEntropyValues}) : null")

    def hints(level: str) -> Any:
        browser = browsers[level]
        tab = browser.new_tab()
        try:
            tab.run(lambda: navigate(tab, urls(site)["plain"], timeout_s=10), 15)
            return tab.run(lambda: tab.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}),
                           10)["result"].get("value")
        finally:
            browser.close_tab(tab.id)

    # Chrome offers Client Hints to secure contexts only; detection pages served over http still
    # look for them, so full (which accepts such trade-offs) offers them there too.
    assert hints("light") is None
    assert hints("full") == '{"brands":2,"high":"function"}'
