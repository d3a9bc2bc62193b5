"""Who the client is behind a reverse proxy: the address a trusted proxy forwarded.

Behind nginx every request comes from 127.0.0.1, so a limit keyed on the peer address would put
every client of the network in one bucket (one guesser locks everyone out) and tell none apart.
``X-Forwarded-For`` names the client, but anyone can send that header: it is believed only when
the direct peer is a proxy we trust, gunicorn's ``forwarded_allow_ips`` (``FORWARDED_ALLOW_IPS``,
default ``127.0.0.1,::1``: a proxy on this machine), the same list gunicorn itself trusts for
``X-Forwarded-Proto``.

The list is read from gunicorn's config when it loads the app (:func:`remember_trusted`, called
by our gunicorn applications and by ``deploy/gunicorn.conf.py``) and kept in ``app.extensions``;
an app served otherwise falls back on gunicorn's own default.

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


def request_client(req: Request, app: Flask | None = None) -> str:
    """The client address of a request (see :func:`client_address`)."""
    forwarded = ",".join(req.headers.getlist("X-Forwarded-For")) or None
    return client_address(req.remote_addr or "", forwarded, trusted_proxies(app or current_app))
