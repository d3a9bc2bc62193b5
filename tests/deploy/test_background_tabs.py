"""Tabs behind other tabs, in the bridge as users run it: each still draws, so reading a picture of
it answers at once (a hidden tab draws no frames, and a screenshot waited 30 s for one)."""
from __future__ import annotations

import requests


def test_screenshots_of_tabs_opened_before_others_answer_promptly(bridge_process, site):
    bp = bridge_process()
    bp.wait_healthy()
    tabs = [requests.post(bp.base + "/navigate", json={"url": site.url("form.html")}, timeout=30).json()["tabId"]
            for _ in range(3)]
    for tab in tabs:  # the first two are behind the third
        for fmt in ("jpeg", "png"):
            r = requests.get(f"{bp.base}/tabs/{tab}/screenshot", params={"format": fmt, "raw": "true"}, timeout=10)
            assert r.status_code == 200 and r.headers["Content-Type"] == f"image/{fmt}"
    timing = requests.get(f"{bp.base}/tabs/{tabs[0]}/timing", timeout=10).json()
    assert timing["fcpMs"] > 0   # it painted, as a visible page does
