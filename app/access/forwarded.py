"""What a reverse proxy says about a request: the client's address and the scheme it used.

One mechanism, two switches. ``server.trustProxyHeaders`` (the original's key, off by default,
switched live by ``PUT /api/config``) says whether forwarded headers are believed at all; when it
is on they are believed only from a direct peer in gunicorn's ``forwarded_allow_ips``
(``FORWARDED_ALLOW_IPS``, default ``127.0.0.1,::1``: a proxy on this machine), so a client that
reaches the port itself cannot forge them. Off, every ``X-Forwarded-*`` header is ignored, whoever
sent it: the client is the peer and the scheme is the connection's own. Our gunicorn settings tell
gunicorn to leave the scheme alone (``secure_scheme_headers`` empty), so that this module is the
only place a forwarded header is read.

Behind nginx every request comes from 127.0.0.1, so a limit keyed on the peer address puts every
client of the network in one bucket: a proxy in front wants the key on. ``X-Forwarded-For`` names
the client, and ``X-Forwarded-Proto`` (or ``Forwarded: proto=``) the scheme the browser used, which
decides the login cookie's Secure flag and is compared with a cookie request's ``Origin``.

The list of proxies is read from gunicorn's config when it loads the app (:func:`remember_trusted`,
called by our gunicorn applications and by ``deploy/gunicorn.conf.py``) and kept in
``app.extensions``; an app served otherwise falls back on gunicorn's own default.

Each proxy appends the address it received the request from, so the list reads left to right
from the client to us. Walking it from the right, past every proxy we trust, the first address
we do not trust is the client: whatever a client writes into the header itself stays on the left,
where it is never read.
"""
from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass

from flask import Flask, Request, current_app

TRUSTED = "pinchtab.trusted_proxies"   # app.extensions key: the TrustedProxies of this app
CONFIG = "pinchtab.config"             # app.extensions key: the running Config (server.trustProxyHeaders)
GUNICORN_DEFAULT = "127.0.0.1,::1"     # gunicorn's forwarded_allow_ips when FORWARDED_ALLOW_IPS is unset
MAX_HOPS = 32                          # a longer header is read from its right end only
MAX_KEY = 64                           # an unparsable entry is kept this long at most (it becomes a key)

Address = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class TrustedProxies:
    """The peers whose ``X-Forwarded-For`` we believe: networks, or every peer (``*``)."""

    networks: tuple[Network, ...] = ()
    everyone: bool = False

    @classmethod
    def parse(cls, spec: str | Iterable[str]) -> TrustedProxies:
        """From gunicorn's ``forwarded_allow_ips``: a comma-separated string or a list of addresses
        and CIDR networks, ``*`` for every peer. Entries that are neither are skipped (gunicorn
        refuses them at start already)."""
        items = spec.split(",") if isinstance(spec, str) else list(spec)
        networks: list[Network] = []
        everyone = False
        for item in (str(x).strip() for x in items):
            if item == "*":
                everyone = True
            elif item:
                try:
                    networks.append(ipaddress.ip_network(item, strict=False))
                except ValueError:
                    continue
        return cls(tuple(networks), everyone)

    def trusts(self, address: Address | None) -> bool:
        if address is None:
            return False
        if self.everyone:
            return True
        return any(address.version == net.version and address in net for net in self.networks)


def parse_address(text: str) -> Address | None:
    """An address as a peer or an ``X-Forwarded-For`` entry writes it: ``1.2.3.4``, ``::1``, and
    the forms with a port some proxies use (``1.2.3.4:5678``, ``[::1]:5678``); None for others.
    An IPv4-mapped IPv6 address is read as the IPv4 address it maps."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:text.find("]")] if "]" in text else ""
    elif text.count(":") == 1:   # IPv4 with a port (an IPv6 address has two colons or more)
        text = text.partition(":")[0]
    try:
        address = ipaddress.ip_address(text.partition("%")[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def client_address(peer: str, forwarded_for: str | None, trusted: TrustedProxies) -> str:
    """The client's address: the peer's, unless the peer is a trusted proxy; then the right-most
    ``X-Forwarded-For`` entry that is not a trusted proxy (the left-most when all of them are).

    Pure: the peer (``REMOTE_ADDR``), the header (every ``X-Forwarded-For`` line joined by commas)
    and the trusted list in, a string out, which the rate limits key on.
    """
    peer_address = parse_address(peer)
    if not forwarded_for or not trusted.trusts(peer_address):
        return str(peer_address) if peer_address is not None else (peer.strip()[:MAX_KEY] or "?")
    hops = [h.strip() for h in forwarded_for.split(",") if h.strip()][-MAX_HOPS:]
    for hop in reversed(hops):
        address = parse_address(hop)
        if address is None:
            # Not an address (``unknown``, garbage a proxy passed on): what a trusted proxy says the
            # client was; still a bucket of its own, never one of the addresses to its left.
            return hop[:MAX_KEY]
        if not trusted.trusts(address):
            return str(address)
    if hops:
        first = parse_address(hops[0])
        return str(first) if first is not None else hops[0][:MAX_KEY]
    return str(peer_address)


def remember_trusted(app: Flask, forwarded_allow_ips: str | Iterable[str]) -> None:
    """Keep gunicorn's ``forwarded_allow_ips`` in ``app`` (for :func:`request_client`)."""
    app.extensions[TRUSTED] = TrustedProxies.parse(forwarded_allow_ips)


def trusted_proxies(app: Flask) -> TrustedProxies:
    """The app's trusted proxies; without :func:`remember_trusted`, gunicorn's default list."""
    found: TrustedProxies | None = app.extensions.get(TRUSTED)
    if found is None:
        found = app.extensions[TRUSTED] = TrustedProxies.parse(os.environ.get("FORWARDED_ALLOW_IPS", GUNICORN_DEFAULT))
    return found


def trusts_proxy_headers(app: Flask) -> bool:
    """``server.trustProxyHeaders`` as the app runs now (PUT /api/config may switch it)."""
    config = app.extensions.get(CONFIG)
    return bool(config is not None and config.server.trust_proxy_headers)


def from_trusted_proxy(req: Request, app: Flask | None = None) -> bool:
    """Whether the request's forwarded headers are believed: the switch is on and the direct peer
    is a trusted proxy."""
    app = app or current_app
    return trusts_proxy_headers(app) and trusted_proxies(app).trusts(parse_address(req.remote_addr or ""))


def request_client(req: Request, app: Flask | None = None) -> str:
    """The client address of a request (see :func:`client_address`); the peer's own while
    ``server.trustProxyHeaders`` is off."""
    app = app or current_app
    forwarded = ",".join(req.headers.getlist("X-Forwarded-For")) if trusts_proxy_headers(app) else ""
    return client_address(req.remote_addr or "", forwarded or None, trusted_proxies(app))


def _first(value: str) -> str:
    """The client-most entry of a comma-separated forwarded header."""
    return value.split(",", 1)[0].strip().lower()


def _forwarded_proto(header: str) -> str:
    """``proto`` of the first element of an RFC 7239 ``Forwarded`` header ("" when absent)."""
    for part in header.split(",", 1)[0].split(";"):
        key, sep, value = part.strip().partition("=")
        if sep and key.strip().lower() == "proto":
            return value.strip().strip('"').lower()
    return ""


def request_scheme(req: Request, app: Flask | None = None) -> str:
    """``https`` or ``http``: what the client used to reach us. A trusted proxy's
    ``X-Forwarded-Proto`` (else ``Forwarded: proto=``) when believed; else the connection's own."""
    if from_trusted_proxy(req, app):
        proto = _first(req.headers.get("X-Forwarded-Proto", "")) or _forwarded_proto(req.headers.get("Forwarded", ""))
        if proto in ("http", "https"):
            return proto
    return "https" if req.scheme == "https" else "http"
