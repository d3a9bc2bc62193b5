"""Config keys that change the browser are honoured by the browser a bridge launches, not only
declared: unpacked extensions (browser.extensionPaths), the time zone (instanceDefaults.timezone)
and accepting dialogs (instanceDefaults.dialogAutoAccept); a known key with a bad value stops the
start with the key and the reason."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support import ROOT

MARKER_SCRIPT = "document.documentElement.dataset.testExtension = 'loaded';\n"


def write_extension(folder: Path) -> Path:
    """A minimal MV3 extension whose content script marks every page before the page's scripts run."""
    folder.mkdir(parents=True)
    (folder / "manifest.json").write_text(json.dumps({
        "manifest_version": 3, "name": "pinchtab test marker", "version": "1.0",
        "content_scripts": [{"matches": ["<all_urls>"], "js": ["marker.js"], "run_at": "document_start"}],
    }))
    (folder / "marker.js").write_text(MARKER_SCRIPT)
    return folder


def test_the_browser_a_bridge_launches_loads_extensions_keeps_the_time_zone_and_accepts_dialogs(
        site: Any, tmp_path: Path) -> None:
    from support.config import make_config

    from app.api import create_app

    extension = write_extension(tmp_path / "marker-extension")
    config = make_config(tmp_path, **{"browser.extensionPaths": [str(extension)],
                                      "instanceDefaults.timezone": "Asia/Tokyo",
                                      "instanceDefaults.dialogAutoAccept": True})
    app = create_app(config, start_browser=False)  # the bridge's own browser, from this config
    state = app.extensions["pinchtab"]
    state.start(background=False)
    try:
        client = app.test_client()
        r = client.post("/navigate", json={"url": site.url("config_probe.html")})
        assert r.status_code == 200, r.json  # the confirm() on load was answered: the load finished
        text = client.get("/text", query_string={"tabId": r.json["tabId"], "mode": "raw"}).json["text"]
    finally:
        state.stop()
    assert "Time zone: Asia/Tokyo" in text
    assert "Extension: loaded" in text
    assert "Dialog: accepted" in text


@pytest.mark.parametrize("section,key,value,reason", [
    ("instanceDefaults", "timezone", "Mars/Olympus", "unknown time zone"),
    ("browser", "extensionPaths", ["/"], "not an unpacked extension"),
    ("security", "idpi", {"shieldThreshold": 101}, "shieldThreshold"),
])
def test_a_known_key_with_a_bad_value_stops_the_start_with_the_reason(tmp_path: Path, section: str, key: str,
                                                                      value: Any, reason: str) -> None:
    config = tmp_path / "config.json"
    config.write_text(json.dumps({section: {key: value}, "someFutureKey": True}))
    env = {"HOME": str(tmp_path), "PINCHTAB_CONFIG": str(config), "PATH": "/usr/bin:/bin"}
    res = subprocess.run([sys.executable, "-m", "app.clients.cli", "bridge"], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=60)
    assert res.returncode == 2, res.stderr[-2000:]
    assert f"{section}.{key}" in res.stderr and reason in res.stderr
    assert "Traceback" not in res.stderr
