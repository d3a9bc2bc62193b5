"""Stealth configuration (human.stealth): levels, flags, user agents and setup commands. Pure."""
from __future__ import annotations

import json

import pytest

from human import stealth
from human.stealth import (
    LEVELS,
    grease_brand,
    launch_flags,
    patches,
    script_source,
    setup_commands,
    status,
    ua_for,
    ua_metadata,
)

VERSION = {
    "protocolVersion": "1.3",
    "product": "Chrome/156.0.8078.79",
    "userAgent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 "
                 "Safari/537.36",
}
REAL_UA = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"


def test_ua_for_drops_headless_from_the_browsers_own_user_agent() -> None:
    assert ua_for(VERSION) == REAL_UA
    assert ua_for(VERSION["userAgent"]) == REAL_UA


def test_ua_for_builds_the_reduced_user_agent_from_a_product() -> None:
    assert ua_for("Chrome/156.0.8078.79") == REAL_UA
    assert ua_for("HeadlessChrome/120.0.6099.5", "Windows") == (
        "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
        "Chrome/120.0.0.0 Safari/537.36")
    with pytest.raises(ValueError):
        ua_for("Firefox/120.0")


def test_launch_flags_per_level() -> None:
    assert launch_flags("off", product="Chrome/156.0.8078.79") == []
    for level in ("light", "medium", "full"):
        flags = launch_flags(level, product="Chrome/156.0.8078.79")
        assert "--disable-blink-features=AutomationControlled" in flags
        assert "--window-size=1920,1080" in flags
        assert f"--user-agent={REAL_UA}" in flags
    assert not any(f.startswith("--user-agent") for f in launch_flags("light"))  # version unknown
    assert "--window-size=1366,768" in launch_flags("light", window=(1366, 768))
    with pytest.raises(ValueError):
        launch_flags("max")


def test_grease_brand_matches_chromium() -> None:
    assert grease_brand(156) == ("Not:A-Brand", "8", "8.0.0.0")  # what Chromium 156 reports


def test_metadata_describes_the_real_browser_without_headless() -> None:
    meta = ua_metadata(VERSION)
    assert [b["brand"] for b in meta["brands"]] == ["Not:A-Brand", "Chromium"]
    assert {"brand": "Chromium", "version": "156"} in meta["brands"]
    assert {"brand": "Chromium", "version": "156.0.8078.79"} in meta["fullVersionList"]
    assert meta["platform"] == "Linux" and meta["mobile"] is False and meta["model"] == ""
    assert meta["architecture"] in ("x86", "arm") and meta["fullVersion"] == "156.0.8078.79"
    assert "Headless" not in json.dumps(meta)


def test_setup_commands_per_level() -> None:
    assert setup_commands("off", VERSION) == []
    for level in ("light", "medium", "full"):
        cmds = dict(setup_commands(level, VERSION))
        assert list(cmds) == list(stealth.SETUP_METHODS)
        ua = cmds["Emulation.setUserAgentOverride"]
        assert ua["userAgent"] == REAL_UA and ua["acceptLanguage"] == "en-US,en"
        assert ua["userAgentMetadata"] == ua_metadata(VERSION)
        script = cmds["Page.addScriptToEvaluateOnNewDocument"]
        assert script["runImmediately"] is True and "worldName" not in script  # the page's own world
        assert f'"level":"{level}"' in script["source"] and "/*@config*/" not in script["source"]
        screen = cmds["Emulation.setDeviceMetricsOverride"]
        assert (screen["width"], screen["height"], screen["screenWidth"], screen["screenHeight"]) == (0, 0, 1920, 1080)
    # An out-of-process iframe's session: no screen override (Chrome refuses it there).
    assert [m for m, _ in setup_commands("light", VERSION, frame=True)] == [
        "Emulation.setUserAgentOverride", "Page.addScriptToEvaluateOnNewDocument"]
    custom = dict(setup_commands("light", VERSION, user_agent="MyAgent/1.0"))
    assert custom["Emulation.setUserAgentOverride"]["userAgent"] == "MyAgent/1.0"


def test_only_full_names_its_frames_for_stack_cleaning() -> None:
    assert f"sourceURL={stealth.TOKEN}" in script_source("full", VERSION)
    assert "//# sourceURL" not in script_source("medium", VERSION)
    assert script_source("off", VERSION) == ""


def test_patches_accumulate_by_level_and_status_reports_them() -> None:
    assert patches("off") == []
    assert "navigator.webdriver" in patches("light") and "navigator.userAgentData" not in patches("light")
    assert set(patches("light")) < set(patches("medium")) < set(patches("full"))
    assert "WebGLRenderingContext.getParameter" in patches("full")
    s = status("medium", VERSION, product="Chrome/156.0.8078.79")
    assert s["level"] == "medium" and s["levels"] == list(LEVELS)
    assert s["launchFlags"] == launch_flags("medium", product="Chrome/156.0.8078.79")
    assert s["patches"] == patches("medium") and s["userAgent"] == REAL_UA
    off = status("off", VERSION)
    assert off["launchFlags"] == [] and off["patches"] == [] and off["commands"] == [] and off["userAgent"] == ""
