"""Where an instance's browser comes from: this machine, or an engine that runs browsers elsewhere.

Pinchtab builds no cluster of its own. Teams already run browsers at scale on engines built for it
(Browserless, Selenium Grid, Moon, cloud browser services), and each hands out a browser as a CDP
WebSocket URL, or as a WebDriver session whose capabilities carry one. A provider is one such
source, named in ``browsers.providers``; server mode asks it for a browser (a :class:`Lease`), starts
the usual bridge child attached to the lease's URL, and gives the lease back when the instance stops.

Kinds: ``local`` (today's launcher: the bridge child starts its own Chromium), ``cdp``
(:mod:`.cdp`) and ``webdriver`` (:mod:`.webdriver`). A provider knows how to lease and how to tell
its health; which provider an instance goes to is :mod:`.placement`'s, pure.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from profiles.redact import scrub_url

LOCAL = "local"
CDP = "cdp"
WEBDRIVER = "webdriver"
KINDS = (LOCAL, CDP, WEBDRIVER)

# How long one call to an engine may take: leasing starts a browser there, which is seconds.
LEASE_TIMEOUT_S = 30.0
HEALTH_TIMEOUT_S = 3.0


class ProviderError(Exception):
    """A provider could not lease a browser; ``reason`` is safe to show (no secrets)."""

    def __init__(self, provider: str, reason: str) -> None:
        super().__init__(f"provider {provider!r}: {reason}")
        self.provider = provider
        self.reason = reason


class ProviderFull(ProviderError):
    """The engine answered that it has no room (Browserless's 429, WebDriver's "session not created")."""


class ProviderDown(ProviderError):
    """The engine did not answer, or answered something we cannot use."""


@dataclass(frozen=True, slots=True)
class Health:
    """What a provider's own status route said: up or not, and its free room when it tells."""

    ok: bool
    detail: str = ""
    free: int | None = None   # the engine's own count of free browsers, when it reports one


@dataclass(slots=True)
class Lease:
    """One browser a provider handed out: where to attach, and how to give it back."""

    provider: str
    cdp_url: str = field(repr=False)          # secret: tokens ride in these URLs
    release: Callable[[], None] = field(repr=False, default=lambda: None)
    session_id: str = ""                      # the WebDriver session, when there is one

    @property
    def shown(self) -> str:
        """The endpoint as it may be shown: every query value and password masked."""
        return redact(self.cdp_url)


def redact(url: str) -> str:
    """An engine's URL as it may appear in a record, an event, a log or the dashboard."""
    return scrub_url(url, mask_every_value=True)


@dataclass(frozen=True, slots=True)
class ProviderSpec:
    """One entry of ``browsers.providers``, as the config loaded it."""

    name: str
    kind: str
    capacity: int
    url: str = field(default="", repr=False)
    capabilities: dict[str, Any] = field(default_factory=dict, repr=False)
    headers: dict[str, str] = field(default_factory=dict, repr=False)


class Provider:
    """A source of browsers. ``local`` leases nothing: its bridge children launch their own."""

    def __init__(self, spec: ProviderSpec) -> None:
        self.spec = spec

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def remote(self) -> bool:
        return self.spec.kind != LOCAL

    @property
    def shown_endpoint(self) -> str:
        return redact(self.spec.url)

    def lease(self, timeout_s: float = LEASE_TIMEOUT_S) -> Lease:
        return Lease(provider=self.name, cdp_url="")

    def health(self, timeout_s: float = HEALTH_TIMEOUT_S) -> Health:
        return Health(ok=True)


def build(spec: ProviderSpec) -> Provider:
    """The provider for a config entry."""
    if spec.kind == CDP:
        from .cdp import CdpProvider
        return CdpProvider(spec)
    if spec.kind == WEBDRIVER:
        from .webdriver import WebDriverProvider
        return WebDriverProvider(spec)
    return Provider(spec)
