"""POST /navigate's options against real Chromium (timeout clamped, waitTitle, resource blocking
from the request or the config, dismissBanners, browser), the engine check /action shares, and
POST /wait's load states (network-idle counts the tab's own requests in flight)."""
from __future__ import annotations

import time
from typing import Any

import pytest

from app.api.engines import check_engine
from app.web.errors import BadRequest, Conflict
from tests.support.config import make_config
from tests.support.waits import wait_until


def _entries(client: Any, tab_id: str, part: str) -> list[dict[str, Any]]:
    return client.get(f"/network?tabId={tab_id}&filter={part}").json["entries"]


def _blocked(client: Any, tab_id: str, part: str) -> bool:
    """Whether the page's request for ``part`` was refused by the tab's blocking (waits for it to end)."""
    entry = wait_until(lambda: next((e for e in _entries(client, tab_id, part) if e["finished"] or e["failed"]),
                                    None), 10)
    return entry["failed"] and "BLOCKED_BY_CLIENT" in entry["error"]


def test_a_timeout_above_the_cap_is_taken_as_the_cap(client: Any, site: Any) -> None:
    r = client.post("/navigate", json={"url": site.url("network_title.html"), "timeout": 500})
    assert r.status_code == 200, r.json
    assert client.post("/navigate", json={"url": site.url("network_title.html"), "timeout": -1}).status_code == 400


def test_wait_title_waits_for_a_real_title(client: Any, site: Any) -> None:
    r = client.post("/navigate", json={"url": site.url("network_title.html"), "waitTitle": 5})
    assert r.json["title"] == "Late title"
    r = client.get("/navigate", query_string={"url": site.url("network_title.html"), "waitTitle": "0"})
    assert r.json["title"] == ""  # not waited: the page has not named itself yet


def test_block_images_and_media_for_the_tab(client: Any, site: Any) -> None:
    r = client.post("/navigate", json={"url": site.url("network_assets.html"), "blockImages": True,
                                       "blockMedia": True})
    tab_id = r.json["tabId"]
    assert _blocked(client, tab_id, "network_dot.svg") and _blocked(client, tab_id, "network_clip.webm")
    assert not _blocked(client, tab_id, "network_data.json")  # the page's own fetches go through
    client.post("/navigate", json={"url": site.url("network_assets.html"), "tabId": tab_id})
    again = wait_until(lambda: [e for e in _entries(client, tab_id, "network_dot.svg") if e["finished"]], 10)
    assert again[-1]["status"] == 200  # a navigation that does not ask: unblocked


def test_block_ads_refuses_ad_hosts_only(client: Any, site: Any) -> None:
    tab_id = client.post("/navigate", json={"url": site.url("network_ads.html"), "blockAds": True}).json["tabId"]
    assert _blocked(client, tab_id, "doubleclick.net")
    assert not _blocked(client, tab_id, "network_dot.svg")


def test_blocking_defaults_come_from_the_config(app_factory: Any, site: Any) -> None:
    client = app_factory(**{"instanceDefaults.blockImages": True}).test_client()
    tab_id = client.post("/navigate", json={"url": site.url("network_assets.html")}).json["tabId"]
    assert _blocked(client, tab_id, "network_dot.svg")
    tab_id = client.post("/navigate", json={"url": site.url("network_assets.html"), "blockImages": False}).json["tabId"]
    assert not _blocked(client, tab_id, "network_dot.svg")


def test_dismiss_banners_accepts_the_consent_banner_only(client: Any, site: Any) -> None:
    r = client.post("/navigate", json={"url": site.url("network_banner.html"), "dismissBanners": True})
    assert r.status_code == 200 and r.json["title"] == "Consent given"
    text = client.get(f"/text?tabId={r.json['tabId']}&mode=raw").json["text"]
    assert "We use cookies" not in text and "Some content." in text
    kept = client.post("/navigate", json={"url": site.url("network_banner.html")}).json
    assert kept["title"] == "Network banner"  # not asked: the banner stays
    assert "We use cookies" in client.get(f"/text?tabId={kept['tabId']}&mode=raw").json["text"]


def test_the_page_s_other_ok_button_is_not_clicked(app_factory: Any, site: Any) -> None:
    client = app_factory(**{"security.allowEvaluate": True}).test_client()
    tab_id = client.post("/navigate", json={"url": site.url("network_banner.html"),
                                            "dismissBanners": True}).json["tabId"]
    r = client.post("/evaluate", json={"tabId": tab_id, "expression": "document.body.dataset.wrong || 'untouched'"})
    assert r.json["result"] == "untouched"


def _title(client: Any, tab_id: str) -> str:
    return client.get(f"/title?tabId={tab_id}").json["title"]


def test_reload_back_and_forward_dismiss_banners_when_asked(client: Any, site: Any) -> None:
    banner, plain = site.url("network_banner.html"), site.url("links.html")
    tab_id = client.post("/navigate", json={"url": banner, "dismissBanners": True}).json["tabId"]
    assert _title(client, tab_id) == "Consent given"
    r = client.post(f"/reload?tabId={tab_id}")
    assert r.status_code == 200 and r.json["title"] == "Network banner"   # the banner is back
    r = client.post(f"/reload?tabId={tab_id}&dismissBanners=true")
    assert r.status_code == 200 and r.json["title"] == "Consent given", r.json
    # forward onto the banner page, then back onto it
    client.post("/navigate", json={"url": plain, "tabId": tab_id})
    client.post("/navigate", json={"url": banner, "tabId": tab_id})
    assert client.post(f"/back?tabId={tab_id}").json["url"] == plain
    r = client.post(f"/tabs/{tab_id}/forward?dismissBanners=true")
    assert r.json["url"] == banner and r.json["title"] == "Consent given", r.json
    client.post("/navigate", json={"url": plain, "tabId": tab_id})
    client.post("/navigate", json={"url": banner, "tabId": tab_id})   # banner up again: not asked
    client.post("/navigate", json={"url": plain, "tabId": tab_id})
    r = client.post(f"/back?tabId={tab_id}&dismissBanners=1")
    assert r.json["url"] == banner and r.json["title"] == "Consent given", r.json
    assert client.post(f"/reload?tabId={tab_id}&dismissBanners=maybe").status_code == 400


def test_a_click_that_navigates_dismisses_the_landing_page_s_banner(client: Any, site: Any) -> None:
    tab_id = client.post("/navigate", json={"url": site.url("banner_link.html")}).json["tabId"]
    r = client.post("/action", json={"tabId": tab_id, "kind": "click", "selector": "#to-banner", "waitNav": True,
                                     "dismissBanners": True})
    assert r.status_code == 200 and r.json["result"]["navigated"] is True, r.json
    assert _title(client, tab_id) == "Consent given"
    assert "We use cookies" not in client.get(f"/text?tabId={tab_id}&mode=raw").json["text"]
    # Without the flag the landing page keeps its banner.
    client.post("/navigate", json={"url": site.url("banner_link.html"), "tabId": tab_id})
    client.post("/action", json={"tabId": tab_id, "kind": "click", "selector": "#to-banner", "waitNav": True})
    assert _title(client, tab_id) == "Network banner"


def test_browser_names_are_checked(client: Any, site: Any) -> None:
    url = site.url("network_title.html")
    assert client.post("/navigate", json={"url": url, "browser": "chrome"}).status_code == 200
    r = client.post("/navigate", json={"url": url, "browser": "netscape"})
    assert r.status_code == 400 and r.json["code"] == "bad_browser"
    r = client.post("/navigate", json={"url": url, "browser": "cloak"})
    assert r.status_code == 409 and r.json["code"] == "browser_conflict"
    assert r.json["details"]["available"] == ["chrome"]


def test_check_engine(tmp_path: Any) -> None:
    config = make_config(tmp_path)
    assert check_engine(config, None) == check_engine(config, "") == "chrome"
    assert check_engine(config, "Chrome") == "chrome"
    with pytest.raises(BadRequest):
        check_engine(config, "lynx")
    with pytest.raises(Conflict):
        check_engine(config, "ghost-chrome")
    both = make_config(tmp_path, **{"browsers.available": ["chrome", "cloak"]})
    assert check_engine(both, "cloak") == "cloak"


def test_an_unknown_wait_for_is_bad_wait_for(client: Any, site: Any) -> None:
    r = client.post("/navigate", json={"url": site.url("network_title.html"), "waitFor": "idle"})
    assert r.status_code == 400 and r.json["code"] == "bad_wait_for"


def test_a_selector_the_page_cannot_read_is_refused_at_once(client: Any, site: Any) -> None:
    """Not waited on until the timeout: no page will ever match ``div[[``."""
    started = time.monotonic()
    r = client.post("/navigate", json={"url": site.url("network_title.html"), "waitFor": "selector",
                                       "waitSelector": "div[[", "timeout": 60})
    assert r.status_code == 400 and r.json["code"] == "bad_selector", r.json
    r = client.post("/wait", json={"selector": "div[[", "timeout": 30000})
    assert r.status_code == 400 and r.json["code"] == "bad_selector", r.json
    assert time.monotonic() - started < 10


# --- POST /wait load states ----------------------------------------------------------------------------------
def test_wait_load_states_are_the_originals(client: Any, site: Any) -> None:
    tab_id = client.post("/navigate", json={"url": site.url("network_title.html")}).json["tabId"]
    for name in ("ready-state", "content-loaded", "network-idle"):
        r = client.post("/wait", json={"tabId": tab_id, "load": name, "timeout": 5000})
        assert r.json == {"waited": True, "elapsed": r.json["elapsed"], "match": name}
    r = client.post("/wait", json={"tabId": tab_id, "load": "networkidle", "timeout": 5000})
    assert r.json["match"] == "network-idle"
    for name in ("load", "domcontentloaded", "idle"):
        r = client.post("/wait", json={"tabId": tab_id, "load": name})
        assert r.status_code == 400 and r.json["details"]["field"] == "load", name


def test_network_idle_waits_for_requests_in_flight(client: Any, site: Any) -> None:
    tab_id = client.post("/navigate", json={"url": site.url("network_slow.html")}).json["tabId"]
    r = client.post("/wait", json={"tabId": tab_id, "load": "network-idle", "timeout": 300})
    assert r.json["waited"] is False  # the page's slow fetch is still out
    r = client.post("/wait", json={"tabId": tab_id, "load": "network-idle", "idleFor": 200, "timeout": 5000})
    assert r.json["waited"] is True and r.json["elapsed"] >= 200
    assert "slow done" in client.get(f"/text?tabId={tab_id}&mode=raw").json["text"]


def test_a_page_that_replaces_itself_while_loading_lands_on_its_successor(client: Any, site: Any) -> None:
    # location.replace() during load swaps the document the navigation waits for: the wait follows it.
    r = client.post("/navigate", json={"url": site.url("nav_replace.html"), "timeout": 10})
    assert r.status_code == 200, r.json
    assert r.json["url"].endswith("/form.html") and r.json["title"] != "Moving on"
    assert client.post("/navigate", json={"url": site.url("nav_replace.html"), "waitFor": "load",
                                          "timeout": 10}).json["url"].endswith("/form.html")
