"""Who may call, as the web sees it: one policy, in front of every entry of every server we run.

Loopback is not a trust boundary. Any page the user opens in their own browser can send requests
to 127.0.0.1 (a no-cors ``fetch``, an ``<img>``, a form, a WebSocket), and a DNS name that rebinds
to 127.0.0.1 makes that page same-origin with us. So before any work, on every HTTP route and
WebSocket of the bridge, the server, ``pinchtab debug connect``, the extension daemon and the
extension port:

* ``Host`` must be an IP address (a rebinding name never is one), ``localhost`` (or a name under
  ``.localhost``), or a name in ``server.allowedHosts``: Chrome's own rule for its DevTools port.
  Anything else is 403 ``host_not_allowed``.
* A request whose ``Origin`` is not this server's own (the host and port of ``Host``) nor in
  ``server.allowedOrigins``, nor one an entry admits (a :class:`Door`: the debug bridge's apps on a
  loopback dev server, the extension's ``chrome-extension://`` origin), is 403
  ``origin_not_allowed``, whatever its method. Without an Origin, a ``Sec-Fetch-Site`` of
  ``cross-site`` or ``same-site`` says a page on another site sent it (an ``<img>``, a no-cors GET):
  refused the same way. No Origin at all (curl, Python, the CLI, MCP) is fine.
* An entry that is one client's alone (the extension's ``/poll``, ``/response``, its relay and
  command channel: :func:`extension_only`) has a door that is the only way in on its path: an Origin
  the door does not take is refused there even when it is this server's own or listed, so is any
  request a page sent (``Sec-Fetch-Site`` other than ``none``), and, where the client always names
  itself (a WebSocket an extension opens), a request with no Origin. Every socket entry is judged
  here, before its upgrade, by this one policy.

We answer no CORS preflight (a preflight carries the page's Origin: refused like the rest) and send
no CORS headers, so a page can neither send a request that gets through nor read an answer.

The decision is a pure function (:func:`refusal`), tested without a server; :class:`Guard` is the
WSGI layer every app is wrapped in (:func:`install`), outside Flask, so a refused request runs no
code of ours beyond this module.
"""
from __future__ import annotations

import functools
import ipaddress
import json
import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

from ..policy.netguard import is_local_name
from ..policy.urls import BadHost, canonical_host, parse_ip

log = logging.getLogger(__name__)

DOORS = "pinchtab.web_origin.doors"   # app.extensions key: the entry's extra doors
CROSS_SITE = frozenset({"cross-site", "same-site"})
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
EXTENSION_SCHEME = "chrome-extension://"

OriginTest = Callable[[str], bool]


@dataclass(frozen=True)
class Door:
    """Origins one entry takes beyond the server's own: on ``path`` (and, with ``when``, only for
    requests it accepts, given the query), an Origin ``origins`` accepts is let in. With ``origins``
    None the path's GETs are public to any site (a script tag's load of the page SDK, a link to the
    dashboard's page: they hold no data)."""

    path: str
    origins: OriginTest | None = None
    when: Callable[[Mapping[str, list[str]]], bool] | None = None
    prefix: bool = False
    # The only way in on the path (:func:`extension_only`): then the refusal's code and message, and
    # whether a request must name its Origin.
    only: Refusal | None = None
    origin_required: bool = False

    def applies(self, path: str, query: Mapping[str, list[str]]) -> bool:
        matched = path.startswith(self.path) if self.prefix else path == self.path
        return matched and (self.when is None or self.when(query))


@dataclass(frozen=True)
class Refusal:
    """Why a request is refused: the error code and a message for people."""

    code: str
    message: str


@dataclass(frozen=True)
class Policy:
    """The configured part: host names beyond IPs and localhost, origins beyond our own."""

    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: frozenset[str] = field(default_factory=frozenset)

    @classmethod
    def from_config(cls, server: Any) -> Policy:
        """From ``server.allowedHosts`` and ``server.allowedOrigins``."""
        hosts = tuple(h.strip().lower().rstrip(".") for h in server.allowed_hosts if h.strip())
        origins = frozenset(o for o in (normalize_origin(x) for x in server.allowed_origins) if o)
        return cls(hosts, origins)


# --- hosts and origins, as pure functions ----------------------------------------------------------
def split_host(value: str) -> tuple[str, int | None] | None:
    """A ``Host`` value (``name``, ``name:port``, ``[v6]:port``) as (canonical host, port), or None
    when it is no host."""
    value = value.strip()
    if not value:
        return None
    port: int | None = None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[:end + 1], value[end + 1:]
        if rest:
            if not rest.startswith(":"):
                return None
            port_text = rest[1:]
        else:
            port_text = ""
    else:
        name, sep, port_text = value.rpartition(":")
        if not sep:
            name, port_text = value, ""
        elif ":" in name:   # a bare IPv6 address without brackets is no Host value
            return None
    if port_text:
        if not port_text.isdigit() or not 0 < int(port_text) < 65536:
            return None
        port = int(port_text)
    try:
        return canonical_host(name), port
    except BadHost:
        return None


def host_is_ip(host: str) -> bool:
    try:
        return parse_ip(host) is not None
    except BadHost:
        return False


def host_allowed(host: str, allowed_hosts: Iterable[str]) -> bool:
    """Whether a canonical host may be named in ``Host``: an IP address, a local name, or one the
    config lists (exactly, or under a ``*.example.com`` entry; ``*`` lets any name in)."""
    if host_is_ip(host) or is_local_name(host):
        return True
    for entry in allowed_hosts:
        if entry == "*" or entry == host or (entry.startswith("*.") and host.endswith(entry[1:])):
            return True
    return False


@functools.lru_cache(maxsize=256)
def _host_ok(host: str, allowed_hosts: tuple[str, ...]) -> bool:
    """``host_allowed`` of a ``Host`` value, remembered: a server hears the same few names all day
    (a bounded cache, so a client sending many names costs it nothing more than parsing them)."""
    parts = split_host(host)
    return parts is not None and host_allowed(parts[0], allowed_hosts)


@functools.lru_cache(maxsize=256)
def normalize_origin(origin: str) -> str:
    """``scheme://host[:port]`` in lower case without a default port; "" when it is no origin
    (``null``, a path, no host). ``chrome-extension://id`` is kept as it is."""
    origin = origin.strip()
    scheme, sep, rest = origin.partition("://")
    scheme = scheme.lower()
    if not sep or not rest or "/" in rest.rstrip("/") or "?" in rest or "#" in rest or "@" in rest:
        return ""
    rest = rest.rstrip("/")
    if scheme == "chrome-extension":
        return f"{scheme}://{rest.lower()}"
    if scheme not in ("http", "https"):
        return ""
    parts = split_host(rest)
    if parts is None:
        return ""
    host, port = parts
    shown = f"[{host}]" if ":" in host else host
    if port is None or port == DEFAULT_PORTS[scheme]:
        return f"{scheme}://{shown}"
    return f"{scheme}://{shown}:{port}"


@functools.lru_cache(maxsize=256)
def same_origin(origin: str, host_header: str) -> bool:
    """Whether ``origin`` is this server's own: the host and port the ``Host`` header names.

    Only the host and port are compared: behind a proxy that ends TLS we cannot know the scheme the
    browser used, and no other server answers on our host and port. A ``Host`` without a port
    matches an origin on its scheme's default port (80 or 443).
    """
    normal = normalize_origin(origin)
    if not normal or normal.startswith(EXTENSION_SCHEME):
        return False
    scheme, _, rest = normal.partition("://")
    ours = split_host(host_header)
    theirs = split_host(rest)
    if ours is None or theirs is None:
        return False
    their_port = theirs[1] or DEFAULT_PORTS[scheme]
    if ours[0] != theirs[0]:
        return False
    return ours[1] == their_port if ours[1] is not None else their_port == DEFAULT_PORTS[scheme]


def is_loopback_origin(origin: str) -> bool:
    """A page served by this machine to itself: ``http(s)://localhost:*``, ``127.0.0.0/8``, ``[::1]``
    (a developer's dev server)."""
    normal = normalize_origin(origin)
    scheme, _, rest = normal.partition("://")
    if scheme not in ("http", "https"):
        return False
    parts = split_host(rest)
    if parts is None:
        return False
    host = parts[0]
    if is_local_name(host):
        return True
    try:
        ip = parse_ip(host)
    except BadHost:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip is not None and ip.is_loopback


def extension_origins(allowed_ids: Iterable[str] = ()) -> OriginTest:
    """An Origin test for ``chrome-extension://<id>``: any extension, or only ``allowed_ids``."""
    ids = frozenset(allowed_ids)

    def test(origin: str) -> bool:
        if not origin.startswith(EXTENSION_SCHEME):
            return False
        ext_id = origin[len(EXTENSION_SCHEME):].rstrip("/")
        return bool(ext_id) and "/" not in ext_id and (not ids or ext_id in ids)

    return test


def extension_only(path: str, allowed_ids: Iterable[str], refused: Refusal, *,
                   origin_required: bool = False) -> Door:
    """The door of an entry only the extension may use: its ``chrome-extension://`` Origin (one of
    ``allowed_ids`` when any are listed, as everywhere on its port), or, without ``origin_required``,
    no Origin from a request no page sent; anything else is ``refused``."""
    return Door(path, extension_origins(allowed_ids), only=refused, origin_required=origin_required)


def refusal(policy: Policy, *, host: str | None, origin: str | None, fetch_site: str | None,
            method: str = "GET", path: str = "/", query: Mapping[str, list[str]] | None = None,
            doors: Iterable[Door] = ()) -> Refusal | None:
    """Why a request with these headers is refused (None: it may go on)."""
    open_doors = [d for d in doors if d.applies(path, query or {})]
    refused = _web_refusal(policy, host=host, origin=origin, fetch_site=fetch_site, method=method,
                           open_doors=open_doors)
    only = next((d for d in open_doors if d.only is not None), None)
    if refused is not None or only is None or only.only is None:
        return refused
    site = (fetch_site or "none").lower()
    if site != "none" or (origin is None and only.origin_required) or (
            origin is not None and not (only.origins is not None and only.origins(origin))):
        seen = f"Origin {origin[:100]}" if origin is not None else f"no Origin, Sec-Fetch-Site {site[:20]}"
        return Refusal(only.only.code, f"{only.only.message} ({seen})")
    return None


def _web_refusal(policy: Policy, *, host: str | None, origin: str | None, fetch_site: str | None,
                 method: str, open_doors: list[Door]) -> Refusal | None:
    """The policy every entry shares: the Host, then the Origin (or a page's Sec-Fetch-Site)."""
    if host:   # a client with no Host at all (HTTP/1.0) is no browser: browsers always send one
        if not _host_ok(host, policy.allowed_hosts):
            return Refusal("host_not_allowed",
                           f"Host {host[:100]!r} is not allowed: use an IP address or localhost, or list the name "
                           "in server.allowedHosts (a name that is not ours could be a DNS-rebinding page)")
    if origin is None and (fetch_site or "").lower() not in CROSS_SITE:
        return None
    if method in ("GET", "HEAD") and any(d.origins is None for d in open_doors):
        return None
    if origin is None:
        return Refusal("origin_not_allowed",
                       f"a request a page on another site sent (Sec-Fetch-Site: {fetch_site}) is refused")
    if host and same_origin(origin, host):
        return None
    if normalize_origin(origin) in policy.allowed_origins:
        return None
    if any(d.origins is not None and d.origins(origin) for d in open_doors):
        return None
    return Refusal("origin_not_allowed",
                   f"requests from {origin[:100]} are refused: only this server's own pages, clients that send "
                   "no Origin, and origins in server.allowedOrigins may call it")


# --- the WSGI layer --------------------------------------------------------------------------------
class Guard:
    """WSGI middleware applying :func:`refusal` before the wrapped app sees the request."""

    def __init__(self, app: Any, policy: Policy, doors: Callable[[], Iterable[Door]]) -> None:
        self.app = app
        self.policy = policy
        self.doors = doors

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ.get("PATH_INFO", "") or "/"
        query_text = environ.get("QUERY_STRING", "")
        query = parse_qs(query_text, keep_blank_values=True) if query_text else {}
        refused = refusal(self.policy, host=environ.get("HTTP_HOST"), origin=environ.get("HTTP_ORIGIN"),
                          fetch_site=environ.get("HTTP_SEC_FETCH_SITE"), method=environ.get("REQUEST_METHOD", ""),
                          path=path, query=query,
                          doors=self.doors())
        if refused is None:
            return self.app(environ, start_response)
        log.warning("refused %s %s: %s (Host %.100r, Origin %.100r, Sec-Fetch-Site %.20r)",
                    environ.get("REQUEST_METHOD"), path[:200], refused.code, environ.get("HTTP_HOST"),
                    environ.get("HTTP_ORIGIN"), environ.get("HTTP_SEC_FETCH_SITE"))
        body = json.dumps({"error": refused.message, "code": refused.code}).encode()
        start_response("403 Forbidden", [("Content-Type", "application/json"), ("Content-Length", str(len(body))),
                                         ("Cache-Control", "no-store"), ("Vary", "Origin, Sec-Fetch-Site")])
        return [body]


def admit(app: Any, door: Door) -> None:
    """Let ``door``'s origins into ``app`` on its path (the entry's own callers beyond its pages)."""
    app.extensions.setdefault(DOORS, []).append(door)


def install(app: Any, server_config: Any) -> None:
    """Wrap ``app`` (outermost: call it last) in the policy of ``server.allowedHosts|allowedOrigins``."""
    policy = Policy.from_config(server_config)
    app.wsgi_app = Guard(app.wsgi_app, policy, lambda: app.extensions.get(DOORS, ()))
