"""Humanized actions and stealth as an agent reaches them: through the HTTP API."""
from __future__ import annotations

import pytest
from support.agent import nav
from support.config import make_config


@pytest.fixture
def stealthy(tmp_path):
    """A bridge app with a browser of its own, launched as `pinchtab bridge` does (stealth: light)."""
    from app.api import create_app

    app = create_app(make_config(tmp_path, **{"security.allowEvaluate": True}), start_browser=False)
    app.extensions["pinchtab"].start(background=False)
    yield app.test_client()
    app.extensions["pinchtab"].stop()


def evaluate(client, expression):
    r = client.post("/evaluate", json={"expression": expression, "awaitPromise": True})
    assert r.status_code == 200, r.json
    return r.json["result"]


def test_default_stealth_passes_our_bot_detection_page(stealthy, site):
    status = stealthy.get("/stealth/status").json
    assert status["level"] == "light" and "--disable-blink-features=AutomationControlled" in status["launchFlags"]
    # The user agent this browser was launched with is pinned by a flag, as the original reports it.
    assert status["flags"]["globalUserAgent"] is True
    assert any(f.startswith("--user-agent=") for f in status["launchFlags"])
    caps = status["capabilities"]
    assert all(caps[name] for name in ("functionToStringNative", "intlLocaleCoherent", "errorPrepareStackTraceNative",
                                       "navigatorOverridesAbsent", "userAgentDataVersionCoherent"))
    assert not caps["iframeIsolation"] and not caps["errorStackSanitized"]  # medium and full only
    nav(stealthy, site.url("bot_detect.html"))
    from support.waits import wait_until

    score = wait_until(lambda: evaluate(stealthy, "window.__botScore || null"), 10)
    assert score["score"] == 0, score["failed"]
    assert "Headless" not in evaluate(stealthy, "navigator.userAgent")


def test_humanize_on_click_and_type_through_the_api(stealthy, site):
    nav(stealthy, site.url("bot_input.html"))
    r = stealthy.post("/action", json={"kind": "click", "selector": "button", "humanize": True})
    assert r.status_code == 200 and r.json["result"]["human"] is True
    moves = evaluate(stealthy, "window.__moves.length")
    assert moves >= 5
    text = "Héllo, wörld! 😀"
    r = stealthy.post("/action", json={"kind": "type", "selector": "#field", "text": text, "humanize": True,
                                       "fast": True})
    assert r.status_code == 200 and r.json["result"]["human"] is True
    assert evaluate(stealthy, "document.querySelector('#field').value") == text
    plain = stealthy.post("/action", json={"kind": "click", "selector": "button"}).json["result"]
    assert "human" not in plain


def test_humanized_input_reaches_into_a_cross_origin_frame(stealthy, site, site2):
    from support.agent import compact, ref_of
    from support.waits import wait_until

    nav(stealthy, site.url("xorigin.html") + f"?card=http://localhost:{site2.port}", waitFor="load")
    wait_until(lambda: " button Pay\n" in compact(stealthy), 10)
    snap = compact(stealthy)
    r = stealthy.post("/action", json={"kind": "type", "ref": ref_of(snap, "textbox", "Card number"),
                                       "text": "4242424242424242", "humanize": True, "fast": True})
    assert r.status_code == 200 and r.json["result"]["human"] is True
    stealthy.post("/action", json={"kind": "type", "ref": ref_of(snap, "textbox", "Expiry"), "text": "12/30",
                                   "humanize": True, "fast": True})
    r = stealthy.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Pay"), "humanize": True})
    assert r.status_code == 200 and r.json["result"]["human"] is True
    wait_until(lambda: "paid with card ending 4242" in stealthy.get("/text?mode=raw").json["text"], 10)
