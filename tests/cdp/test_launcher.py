"""The launcher against a real Chromium: what a throwaway profile starts with, and that a profile a
person keeps is left as it is."""
from __future__ import annotations

import json
from pathlib import Path

import websocket
from support.waits import wait_until

from cdp.launcher import ChromeProcess, find_browser


def close_gracefully(chrome: ChromeProcess) -> None:
    """Browser.close, then wait for the exit: Chrome writes its Preferences back as it closes."""
    ws = websocket.create_connection(chrome.ws_url, suppress_origin=True, timeout=10)
    ws.send(json.dumps({"id": 1, "method": "Browser.close"}))
    assert chrome.proc is not None
    wait_until(lambda: chrome.proc.poll() is not None or not chrome.alive(), 15, 0.05)
    ws.close()


def prefs(data_dir: str | Path) -> dict:
    return json.loads((Path(data_dir) / "Default" / "Preferences").read_text())


def test_a_throwaway_profile_runs_without_autofill_or_the_password_manager():
    chrome = ChromeProcess(find_browser())
    chrome.start()
    data_dir = chrome._temp_dir
    assert data_dir
    try:
        # Chrome keeps them through a run: the file it rewrites at exit still has them off.
        close_gracefully(chrome)
        p = prefs(data_dir)
        assert p["autofill"]["profile_enabled"] is False and p["autofill"]["credit_card_enabled"] is False
        assert p["credentials_enable_service"] is False and p["profile"]["password_manager_enabled"] is False
        assert "extensions" in p and "sessions" in p  # Chrome's own keys: it did rewrite the file
    finally:
        chrome.stop()


def test_a_given_profile_is_not_touched(tmp_path):
    chrome = ChromeProcess(find_browser(), user_data_dir=str(tmp_path / "kept"))
    chrome.start()
    try:
        close_gracefully(chrome)
        p = prefs(tmp_path / "kept")
        assert "credentials_enable_service" not in p and "password_manager_enabled" not in p.get("profile", {})
    finally:
        chrome.stop()
