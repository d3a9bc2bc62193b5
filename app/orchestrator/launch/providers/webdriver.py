"""A ``webdriver`` provider: a W3C WebDriver endpoint (Selenium Grid 4, Moon, chromedriver).

A lease is a WebDriver session: ``POST /session`` with the configured capabilities. The browser's CDP
address comes from the answer's capabilities: ``se:cdp`` where the engine proxies CDP itself (Grid,
Moon), else ``goog:chromeOptions.debuggerAddress`` (chromedriver: ``host:port`` of the browser it
started, read through ``/json/version``). Releasing deletes the session, which ends the browser.

A session the engine cannot create is "full" (Grid answers so when every node slot is taken); the
engine's health is ``GET /status`` and its ``value.ready``.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import requests

from cdp.errors import LaunchError
from cdp.launcher import resolve_cdp_url

from . import HEALTH_TIMEOUT_S, LEASE_TIMEOUT_S, Health, Lease, Provider, ProviderDown, ProviderError, ProviderFull

RELEASE_TIMEOUT_S = 10.0


class WebDriverProvider(Provider):
    """Browsers as WebDriver sessions."""

    def _call(self, method: str, path: str, timeout_s: float, body: Any = None) -> tuple[int, Any]:
        url = self.url.rstrip("/") + path
        try:
            resp = requests.request(method, url, json=body, headers=self.headers, timeout=timeout_s)
        except requests.RequestException as exc:
            raise ProviderDown(self.name, f"no answer on {method} {path} ({type(exc).__name__})") from None
        try:
            value = resp.json().get("value")
        except (ValueError, AttributeError):
            value = None
        return resp.status_code, value

    def health(self, timeout_s: float = HEALTH_TIMEOUT_S) -> Health:
        try:
            status, value = self._call("GET", "/status", timeout_s)
        except ProviderDown as exc:
            return Health(ok=False, detail=exc.reason)
        ready = isinstance(value, dict) and value.get("ready") is True
        message = str(value.get("message") or "") if isinstance(value, dict) else ""
        return Health(ok=status == 200 and ready, detail=message or f"/status answered {status}")

    def lease(self, timeout_s: float = LEASE_TIMEOUT_S) -> Lease:
        body = {"capabilities": {"alwaysMatch": self.config.capabilities, "firstMatch": [{}]}}
        status, value = self._call("POST", "/session", timeout_s, body)
        if status != 200 or not isinstance(value, dict) or not value.get("sessionId"):
            error = value.get("error") if isinstance(value, dict) else ""
            message = str(value.get("message") or "") if isinstance(value, dict) else ""
            first_line = message.splitlines()[0][:200] if message else f"POST /session answered {status}"
            if error == "session not created":
                raise ProviderFull(self.name, first_line)
            raise ProviderDown(self.name, first_line)
        session_id = str(value["sessionId"])
        release = self._releaser(session_id)
        try:
            cdp_url = self._cdp_url(value.get("capabilities") or {})
        except ProviderError:
            release()
            raise
        return Lease(provider=self.name, cdp_url=cdp_url, release=release, session_id=session_id)

    def _cdp_url(self, caps: dict[str, Any]) -> str:
        se_cdp = caps.get("se:cdp")
        if isinstance(se_cdp, str) and se_cdp:
            return se_cdp   # Grid and Moon proxy CDP themselves (not tested here: no Grid to run)
        options = caps.get("goog:chromeOptions") or {}
        address = options.get("debuggerAddress") if isinstance(options, dict) else None
        if not isinstance(address, str) or not address:
            raise ProviderDown(self.name, "the session's capabilities carry no CDP address "
                                          "(neither se:cdp nor goog:chromeOptions.debuggerAddress)")
        # chromedriver names the browser it started from its own machine: "localhost:port" there.
        host = urlsplit(self.url).hostname or "127.0.0.1"
        _name, _, port = address.rpartition(":")
        try:
            return resolve_cdp_url(f"http://{host}:{port}", timeout_s=HEALTH_TIMEOUT_S)
        except LaunchError:
            raise ProviderDown(self.name, f"the session's browser does not answer on port {port}") from None

    def _releaser(self, session_id: str) -> Callable[[], None]:
        def release() -> None:
            try:
                self._call("DELETE", f"/session/{session_id}", RELEASE_TIMEOUT_S)
            except ProviderDown:
                pass   # the engine is gone, and the session with it
        return release

