"""A popup's first snapshot, taken right after the click that opened it, hands out refs that act.

The popup is still on about:blank when the click answers; its page commits while the snapshot
walks it. The walk then read the new document under the old one's refs, which the commit retired a
moment later: acting on them at once answered 409 stale_ref in about half the tries on Chromium 156.
Played as a user would: a real bridge, its default stealth, one HTTP call per step.
"""
from __future__ import annotations

from typing import Any

import requests


def test_the_refs_of_a_popups_first_snapshot_act_at_once(bridge_process: Any, site: Any) -> None:
    bridge = bridge_process()
    bridge.wait_healthy(60)
    api, base = requests.Session(), bridge.base
    refused = []
    for attempt in range(6):
        opener = api.post(f"{base}/navigate", json={"url": site.url("popup_opener.html") + "?open=/form.html"},
                          timeout=30).json()["tabId"]
        clicked = api.post(f"{base}/action", json={"kind": "click", "selector": "#open", "tabId": opener}, timeout=30)
        popup = clicked.json()["result"]["switchedToTab"]
        snap = api.get(f"{base}/snapshot", params={"tabId": popup, "filter": "interactive", "format": "compact"},
                       timeout=30).text
        ref = next(line.split()[0] for line in snap.splitlines() if line.split()[1:2] == ["textbox"])
        filled = api.post(f"{base}/action", json={"kind": "fill", "ref": ref, "text": f"try {attempt}", "tabId": popup},
                          timeout=30)
        if filled.status_code != 200:
            refused.append((attempt, filled.status_code, filled.json().get("code")))
        else:
            value = api.get(f"{base}/value", params={"tabId": popup, "ref": ref}, timeout=30)
            assert f"try {attempt}" in value.text, value.text
        for tab in (popup, opener):
            api.post(f"{base}/tabs/{tab}/close", timeout=30)
    assert not refused, refused
