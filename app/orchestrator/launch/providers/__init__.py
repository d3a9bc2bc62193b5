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

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from profiles.redact import scrub_url

from ....config.settings import ProviderConfig

LOCAL, CDP, WEBDRIVER = "local", "cdp", "webdriver"   # browsers.providers[].kind

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


_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(text: str, env: Mapping[str, str], provider: str) -> str:
    """``${NAME}`` -> the environment's NAME: how a token stays in a secret, out of the config file."""
    def value(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in env:
            raise ValueError(f"browsers.providers {provider!r}: ${{{name}}} is not set in the environment")
        return env[name]
    return _PLACEHOLDER.sub(value, text)


class Provider:
    """A source of browsers. ``local`` leases nothing: its bridge children launch their own.

    ``url`` and ``headers`` are the configured ones with ``${NAME}`` placeholders filled in; they
    hold secrets, so only :attr:`shown_endpoint` leaves this object.
    """

    def __init__(self, config: ProviderConfig, env: Mapping[str, str] | None = None) -> None:
        env = os.environ if env is None else env
        self.config = config
        self.url = expand(config.url, env, config.name)
        self.headers = {k: expand(v, env, config.name) for k, v in config.headers.items()}

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def capacity(self) -> int:
        return self.config.capacity

    @property
    def remote(self) -> bool:
        return self.config.kind != LOCAL

    @property
    def shown_endpoint(self) -> str:
        return redact(self.config.url)   # as configured: a placeholder shows as itself, masked

    def lease(self, timeout_s: float = LEASE_TIMEOUT_S) -> Lease:
        return Lease(provider=self.name, cdp_url="")

    def health(self, timeout_s: float = HEALTH_TIMEOUT_S) -> Health:
        return Health(ok=True)


def build(config: ProviderConfig, env: Mapping[str, str] | None = None) -> Provider:
    """The provider for a ``browsers.providers`` entry; ValueError names a placeholder left unset."""
    if config.kind == CDP:
        from .cdp import CdpProvider
        return CdpProvider(config, env)
    if config.kind == WEBDRIVER:
        from .webdriver import WebDriverProvider
        return WebDriverProvider(config, env)
    return Provider(config, env)
