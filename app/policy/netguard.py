"""Which URLs the server may fetch on a caller's behalf: the download policy, as pure functions.

The rules (reference §1.17, §2.5):

* only ``http`` and ``https``;
* ``localhost``, ``*.localhost`` (and Chromium's other local names) and literal loopback, private,
  link-local, multicast, reserved or unspecified addresses are refused (private ones only until a list
  names the host, below);
* a host must be on the allowlist (``security.downloadAllowedDomains``, or ``security.allowedDomains``
  when that is empty); an empty list accepts any host;
* a host ``security.downloadAllowedDomains`` names exactly (no wildcard) may be an intranet one: it
  may resolve to (or be) a private address; loopback, link-local and metadata addresses stay refused;
* every host name must resolve, and only to public addresses (one private answer is enough to refuse:
  the browser could connect to it).

A host is read the way Chromium reads it (WHATWG URL rules): percent-decoded, case-folded, IPv4 in
decimal, hex, octal and short forms (``2130706433``, ``0x7f.1``, ``127.1``), IPv6 with embedded IPv4.
A URL whose host we could read differently from the browser (backslashes, user info, control
characters) is refused rather than guessed at.

Name resolution is a parameter (a :class:`Resolver`), so the policy can be tested without a network
and without weakening it.
"""
from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from . import urls
from .urls import BadHost, IPAddress, canonical_host, parse_ip

SCHEMES = ("http", "https")
# Names Chromium itself treats as the local machine (net::IsLocalHostname), plus *.localhost.
LOCAL_NAMES = frozenset({"localhost", "localhost.localdomain", "localhost6", "localhost6.localdomain6",
                         "ip6-localhost", "ip6-loopback"})
_NAT64 = ipaddress.ip_network("64:ff9b::/96")

INTERNAL = "internal"
NOT_ALLOWED = "not_allowed"
SCHEME = "scheme"
MALFORMED = "malformed"
UNRESOLVED = "unresolved"


class Resolver(Protocol):
    """Turns a host name into the addresses it resolves to (strings); empty when it does not resolve."""

    def __call__(self, host: str) -> Sequence[str]: ...


def system_resolver(host: str) -> list[str]:
    """The operating system's answer (``getaddrinfo``), each address once."""
    try:
        infos = socket.getaddrinfo(host, None, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError, OSError):
        return []
    out: list[str] = []
    for info in infos:
        addr = str(info[4][0]).split("%", 1)[0]  # drop an IPv6 zone id
        if addr not in out:
            out.append(addr)
    return out


class UnsafeURL(ValueError):
    """The policy refuses a URL. ``reason`` is one of the module's reason constants."""

    def __init__(self, message: str, reason: str, host: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.host = host


@dataclass(frozen=True)
class Policy:
    """An allowlist (empty: any public host), the config key it came from, and how to resolve names."""

    allowlist: tuple[str, ...]
    setting: str
    resolver: Resolver
    # The download list names intranet hosts: those may resolve to private addresses.
    intranet: bool = False

    @classmethod
    def for_download(cls, download_allowed: Sequence[str], allowed: Sequence[str],
                     resolver: Resolver = system_resolver) -> Policy:
        """``security.downloadAllowedDomains`` when it is non-empty, else ``security.allowedDomains``."""
        if download_allowed:
            return cls(tuple(download_allowed), "security.downloadAllowedDomains", resolver, intranet=True)
        return cls(tuple(allowed), "security.allowedDomains", resolver)


# --- hosts -----------------------------------------------------------------------------------------
def _embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries (mapped, 6to4, NAT64), if any."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


def is_internal_ip(ip: IPAddress | str) -> bool:
    """True unless ``ip`` is a public unicast address (IPv6 judged by any IPv4 it embeds, too)."""
    if isinstance(ip, str):
        try:
            ip = ipaddress.ip_address(ip.split("%", 1)[0])
        except ValueError:
            return True  # not an address we understand: never a safe one
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None:
            if ip.ipv4_mapped is not None:
                return is_internal_ip(embedded)  # the browser connects to the IPv4 address itself
            if is_internal_ip(embedded):
                return True
        if ip.is_site_local:
            return True
    return (not ip.is_global or ip.is_private or ip.is_loopback or ip.is_link_local or ip.is_multicast
            or ip.is_reserved or ip.is_unspecified)


# Cloud metadata services: refused whatever a list names (they hand out credentials).
METADATA_IPS = frozenset(ipaddress.ip_address(a) for a in ("169.254.169.254", "169.254.170.2", "100.100.100.200",
                                                           "fd00:ec2::254"))


def is_metadata_ip(ip: IPAddress | str) -> bool:
    """Whether ``ip`` is a cloud metadata service's address (or an IPv6 one carrying it)."""
    if isinstance(ip, str):
        try:
            ip = ipaddress.ip_address(ip.split("%", 1)[0])
        except ValueError:
            return False
    embedded = _embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    return (embedded or ip) in METADATA_IPS


def is_never_allowed_ip(ip: IPAddress | str) -> bool:
    """Loopback, link-local, metadata, multicast, unspecified and reserved addresses: refused even
    for a host an allowlist names (a private intranet address is not among them)."""
    if isinstance(ip, str):
        try:
            ip = ipaddress.ip_address(ip.split("%", 1)[0])
        except ValueError:
            return True
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_ipv4(ip)
        if embedded is not None and is_never_allowed_ip(embedded):
            return True
    return (ip in METADATA_IPS or ip.is_loopback or ip.is_link_local or ip.is_multicast or ip.is_unspecified
            or ip.is_reserved)


def named_explicitly(host: str, allowlist: Sequence[str]) -> bool:
    """Whether the list names this very host (not through ``*`` or a ``*.`` wildcard)."""
    host_ip = _literal(host)
    for raw in allowlist:
        entry = raw.strip().lower()
        if entry == "*" or entry.startswith("*."):
            continue
        canon = _canonical_entry(entry)
        if canon and (canon == host if host_ip is None else _literal(canon) == host_ip):
            return True
    return False


def is_local_name(host: str) -> bool:
    """``localhost`` and its variants, any ``*.localhost`` (a canonical host)."""
    return host in LOCAL_NAMES or host.endswith(".localhost")


def host_allowed(host: str, allowlist: Sequence[str]) -> bool:
    """Whether a canonical host is on the list.

    Entries: an exact host (``example.com``, an IP address), ``*.example.com`` for any subdomain
    of example.com (not example.com itself), or ``*`` for any host. An empty list allows any host.
    """
    if not allowlist:
        return True
    host_ip = _literal(host)
    for raw in allowlist:
        entry = raw.strip().lower()
        if entry == "*":
            return True
        if entry.startswith("*."):
            suffix = _canonical_entry(entry[2:])
            if suffix and host_ip is None and host.endswith("." + suffix):
                return True
            continue
        canon = _canonical_entry(entry)
        if not canon:
            continue
        if host_ip is not None:
            if _literal(canon) == host_ip:
                return True
        elif canon == host:
            return True
    return False


def _canonical_entry(entry: str) -> str:
    try:
        return canonical_host(entry)
    except BadHost:
        return ""  # a list entry that is no host matches nothing


def _literal(host: str) -> IPAddress | None:
    try:
        return parse_ip(host)
    except BadHost:
        return None


# --- URLs ------------------------------------------------------------------------------------------
def check_url(url: str, policy: Policy) -> str:
    """Return the canonical host of ``url`` if the policy lets the server fetch it; else raise UnsafeURL."""
    if "\\" in url or any(c in url.strip() for c in "\t\n\r"):
        # Browsers read a backslash as a slash and drop tabs and newlines; Python does not.
        raise UnsafeURL("unsafe URL: backslashes and control characters are not allowed", MALFORMED)
    try:
        parsed = urls.parse(url, guess_scheme=False)  # the one URL parser: syntax, port, host
    except urls.BadURL as exc:
        raise UnsafeURL(f"unsafe URL: {exc.message}", SCHEME if exc.scheme_error else MALFORMED) from None
    if parsed.scheme not in SCHEMES:
        raise UnsafeURL(f"unsafe URL: scheme {parsed.scheme!r} is not allowed; only http and https", SCHEME)
    if "@" in parsed.netloc:
        # User info is where parsers disagree about which part is the host.
        raise UnsafeURL("unsafe URL: credentials in the URL are not allowed", MALFORMED)
    check_host(parsed.host, policy)
    return parsed.host


def check_host(host: str, policy: Policy) -> None:
    """Apply the policy to a canonical host (see the module docstring); raise UnsafeURL if refused."""
    try:
        ip = parse_ip(host)
    except BadHost:
        raise UnsafeURL(f"unsafe URL: invalid host {host!r}", MALFORMED, host) from None
    # A host the download list names itself may be an intranet one (a private address), never
    # the machine itself, a link-local or a metadata address.
    intranet = policy.intranet and named_explicitly(host, policy.allowlist)
    refused = is_never_allowed_ip if intranet else is_internal_ip
    if ip is not None:
        if refused(ip):
            raise UnsafeURL("unsafe URL: internal or blocked host", INTERNAL, host)
    elif is_local_name(host):
        raise UnsafeURL("unsafe URL: internal or blocked host", INTERNAL, host)
    if not host_allowed(host, policy.allowlist):
        raise UnsafeURL(f"unsafe URL: domain not allowed by {policy.setting}", NOT_ALLOWED, host)
    if ip is not None:
        return
    addresses = list(policy.resolver(host))
    if not addresses:
        raise UnsafeURL(f"unsafe URL: cannot resolve host {host!r}", UNRESOLVED, host)
    internal = [a for a in addresses if refused(a)]
    if internal:
        raise UnsafeURL(f"unsafe URL: internal or blocked host ({host} resolves to {internal[0]})",
                        INTERNAL, host)


# --- name resolution the app's routes share --------------------------------------------------------
RESOLVER_EXTENSION = "pinchtab.resolver"  # app.extensions key of the resolver the routes use (tests stub it)
