"""A ``cdp`` provider: an engine that hands out a browser as a CDP address.

Two shapes, told apart by the URL's scheme:

* ``ws(s)://.../chromium?token=...``: a fresh browser per connection (Browserless, cloud browser
  services). The lease is the URL itself; the bridge child's connection *is* the browser, so
  closing it gives the browser back and there is nothing else to release. Browserless says how
  full it is on ``/pressure`` (asked before leasing, so a full engine is skipped without starting
  a child) and answers a connection past its limit with 429.
* ``http(s)://host:port``: one browser's debugging address, read through ``/json/version``.

Health is the engine's own status route: ``/pressure`` where it has one (Browserless), else
``/json/version``. Both take the URL's query, which is where such engines keep their token.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit, urlunsplit

import requests

from . import HEALTH_TIMEOUT_S, LEASE_TIMEOUT_S, Health, Lease, Provider, ProviderDown, ProviderFull


def http_base(url: str) -> tuple[str, str]:
    """(``scheme://host:port``, query) of an engine's URL, over http(s) whatever its scheme."""
    parts = urlsplit(url)
    scheme = {"ws": "http", "wss": "https"}.get(parts.scheme, parts.scheme)
    return urlunsplit((scheme, parts.netloc, "", "", "")), parts.query


class CdpProvider(Provider):
    """Browsers from a CDP endpoint: per connection (ws) or one fixed browser (http)."""

    @property
    def per_connection(self) -> bool:
        return urlsplit(self.url).scheme in ("ws", "wss")

    def _get(self, path: str, timeout_s: float) -> requests.Response:
        base, query = http_base(self.url)
        url = base + path + (f"?{query}" if query else "")
        try:
            return requests.get(url, headers=self.headers, timeout=timeout_s)
        except requests.RequestException as exc:
            # The exception's text holds the URL, and so the token: name the kind of failure only.
            raise ProviderDown(self.name, f"no answer on {path} ({type(exc).__name__})") from None

    def _pressure(self, timeout_s: float) -> dict[str, Any] | None:
        """Browserless's own account of its load, or None where the engine has no such route."""
        resp = self._get("/pressure", timeout_s)
        if resp.status_code == 404:
            return None
        if resp.status_code in (401, 403):
            raise ProviderDown(self.name, f"/pressure answered {resp.status_code}: check the token")
        try:
            pressure = resp.json()["pressure"]
        except (ValueError, KeyError, TypeError):
            return None
        return pressure if isinstance(pressure, dict) else None

    def health(self, timeout_s: float = HEALTH_TIMEOUT_S) -> Health:
        try:
            pressure = self._pressure(timeout_s) if self.per_connection else None
            if pressure is not None:
                running = int(pressure.get("running") or 0)
                limit = int(pressure.get("maxConcurrent") or self.capacity)
                return Health(ok=True, detail=str(pressure.get("reason") or ""), free=max(0, limit - running))
            resp = self._get("/json/version", timeout_s)
        except ProviderDown as exc:
            return Health(ok=False, detail=exc.reason)
        if resp.status_code != 200:
            return Health(ok=False, detail=f"/json/version answered {resp.status_code}")
        return Health(ok=True)

    def lease(self, timeout_s: float = LEASE_TIMEOUT_S) -> Lease:
        if self.per_connection:
            pressure = self._pressure(min(timeout_s, HEALTH_TIMEOUT_S))
            if pressure is not None and pressure.get("isAvailable") is False:
                raise ProviderFull(self.name, str(pressure.get("message") or pressure.get("reason") or "full"))
            return Lease(provider=self.name, cdp_url=self.url)
        resp = self._get("/json/version", timeout_s)
        try:
            ws_url = resp.json()["webSocketDebuggerUrl"]
        except (ValueError, KeyError, TypeError):
            raise ProviderDown(self.name, f"/json/version answered {resp.status_code} without a "
                                          "webSocketDebuggerUrl") from None
        return Lease(provider=self.name, cdp_url=str(ws_url))
