"""The navigation policy: which URLs the browser may open for an agent, judged in one place.

Every path that opens a page calls :meth:`NavigationPolicy.check`: ``/navigate``, ``/tab``, the
debug bridge's ``navigate``, a popup one of our tabs opens, a tab restored after a restart, and
each page ``/scrape`` and ``/audit`` load (and where each ended after redirects). It parses the URL
once (:mod:`app.policy.urls`) and then, in this order:

* the scheme: http and https, ``about:blank``; ``file:`` only with ``security.allowFileScheme``.
  A page's own commands (``web_only``) open http(s) URLs only: a ``javascript:`` URL would run
  code in the page, ``data:`` and ``file:`` ones leave the web;
* ``security.allowedDomains`` through the IDPI policy (:func:`app.policy.idpi.check_domain`): in strict
  mode a host off the list is refused; otherwise it passes with a warning for the caller to pass on;
* the host by address: a cloud metadata service is refused whatever the list says, by number or by
  a name that resolves to it (names are resolved for that); with a list in force (not empty, not
  ``*``), a host off it must not be, or resolve to, a private or internal address, or a page off
  the list could steer the agent into the network behind the server. The machine's own pages
  (loopback, ``localhost``) stay reachable: they are what people develop against. A name that does
  not resolve in time is left to the browser to fail on, except a host off the list: its address
  could not be checked, so it is refused ("could not resolve navigation host");
* where a navigation was redirected (:meth:`NavigationPolicy.check_redirects`, after it landed):
  each hop as above (so a private host off the list is refused), and, with a list in force, no hop
  from a page that is not this machine's (by its host: a loopback address or a local name; a name
  that resolves to loopback is no local page) into this machine, listed or not: the web may not
  send the agent where only the agent may go. The browser has made that request by then; its answer
  never reaches the agent.

Refusals are the API's errors: 400 ``bad_url``, 403 ``file_scheme_disabled``, 403 ``idpi_blocked``,
403 ``navigation_blocked``. Name resolution is a parameter, so the policy is tested without a network.
"""
from __future__ import annotations

import ipaddress
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..web.errors import BadRequest, Forbidden
from . import idpi, netguard, urls

if TYPE_CHECKING:
    from ..config import SecurityConfig

RESOLVE_S = 5.0  # a name that does not resolve in time is left to the browser to fail on
_LIST_SETTING = "security.allowedDomains"


@dataclass(frozen=True)
class Allowed:
    """A URL the policy lets the browser open, and the IDPI warning to put on the answer (if any)."""

    url: str
    warning: idpi.Verdict | None = None


@dataclass(frozen=True)
class NavigationPolicy:
    """``security.allowFileScheme``, ``security.allowedDomains`` and IDPI, and how to resolve names."""

    allow_file: bool
    allowlist: tuple[str, ...]
    idpi_policy: idpi.Policy
    resolver: netguard.Resolver = netguard.system_resolver
    resolve_timeout_s: float = RESOLVE_S

    @classmethod
    def from_config(cls, security: SecurityConfig, resolver: netguard.Resolver = netguard.system_resolver,
                    resolve_timeout_s: float = RESOLVE_S) -> NavigationPolicy:
        """From the ``security`` section of the config."""
        return cls(security.allow_file_scheme, tuple(security.allowed_domains), idpi.Policy.from_config(security),
                   resolver, resolve_timeout_s)

    def check(self, raw: str, field: str = "url", *, web_only: bool = False) -> Allowed:
        """The URL to hand the browser for ``raw`` (the request's ``field``); raise the API's error if refused.

        ``web_only``: http(s) URLs only, written out in full (a page's own commands).
        """
        try:
            parsed = urls.parse(raw, guess_scheme=not web_only)
        except urls.BadURL as exc:
            message = _web_only(raw) if web_only and exc.scheme_error else exc.message
            raise BadRequest(message, code="bad_url", details={"field": field}) from None
        if web_only and parsed.scheme not in urls.WEB_SCHEMES:
            raise BadRequest(_web_only(parsed.text), code="bad_url", details={"field": field})
        if parsed.scheme == "file" and not self.allow_file:
            raise Forbidden("file: URLs are disabled; enable security.allowFileScheme in config",
                            code="file_scheme_disabled", details={"setting": "security.allowFileScheme"})
        verdict = idpi.check_domain(parsed, self.idpi_policy)
        if verdict.blocked:
            raise Forbidden(f"navigation blocked by IDPI: {verdict.reason}", code="idpi_blocked",
                            details={"setting": _LIST_SETTING, "url": parsed.text,
                                     "hint": "add the host (or *.its-domain) to security.allowedDomains",
                                     "remedy": "edit the config and restart pinchtab"})
        if parsed.host:
            self._check_host(parsed.host, field)
        return Allowed(parsed.text, verdict if verdict.threat else None)

    def _check_host(self, host: str, field: str) -> None:
        """The host rules (see the module docstring); raise 403 ``navigation_blocked`` if refused."""
        ip = urls.parse_ip(host)  # a parsed URL's host is canonical and valid
        if ip is None and netguard.is_local_name(host):
            return  # the browser resolves these itself, to this machine
        if ip is not None and ip.is_loopback:
            return
        addresses = [str(ip)] if ip is not None else self._resolve(host)

        def shown(address: str) -> str:
            return host if ip is not None else f"{host} resolves to {address}"

        metadata = [a for a in addresses if netguard.is_metadata_ip(a)]
        if metadata:
            raise _blocked(f"navigation target is a cloud metadata address ({shown(metadata[0])})", host, field)
        entries = [e.strip() for e in self.allowlist if e.strip()]
        if not entries or "*" in entries or netguard.host_allowed(host, entries):
            return
        internal = [a for a in addresses if netguard.is_internal_ip(a)]
        if internal:
            raise _blocked(f"navigation target resolves to blocked private/internal IP ({shown(internal[0])}); "
                           f"list the host in security.allowedDomains to allow it", host, field)
        if not addresses:
            raise _blocked(f"could not resolve navigation host {host!r}: a host off security.allowedDomains "
                           "must resolve to a public address to be opened", host, field)

    def check_redirects(self, hops: list[str], field: str = "url") -> idpi.Verdict | None:
        """Judge where a navigation's redirects took it (``hops``: the URLs it went through, the
        landing one last); raise the API's error if a hop is refused (see the module docstring).
        Returns the IDPI warning of a hop off the allowlist outside strict mode, if any."""
        warning = None
        for src, dst in zip(hops, hops[1:], strict=False):
            allowed = self.check(dst, field)
            warning = warning or allowed.warning
            entries = [e.strip() for e in self.allowlist if e.strip()]
            if not entries or "*" in entries:
                continue
            try:
                source, target = urls.parse(src).host, urls.parse(allowed.url).host
            except urls.BadURL:
                continue  # a hop we cannot read was judged above as a URL
            if not source or not target or self._machines(source, resolve=False):
                continue  # the machine's own pages may send the browser anywhere the rules allow
            if self._machines(target, resolve=True):
                raise Forbidden(f"redirect blocked: {source} sent the browser to this machine ({target}); only the "
                                "agent may open its pages, by asking for them", code="navigation_blocked",
                                details={"field": field, "host": target, "from": source, "setting": _LIST_SETTING})
        return warning

    def _machines(self, host: str, *, resolve: bool) -> bool:
        """Whether ``host`` is this machine: a loopback address or a local name (with ``resolve``, a
        name resolving to loopback too)."""
        ip = urls.parse_ip(host)
        if ip is not None:
            return ip.is_loopback or (isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None
                                      and ip.ipv4_mapped.is_loopback)
        if netguard.is_local_name(host):
            return True
        return resolve and any(ipaddress.ip_address(a.split("%", 1)[0]).is_loopback
                               for a in self._resolve(host) if _is_address(a))

    def _resolve(self, host: str) -> list[str]:
        """``resolver(host)``, or [] when it does not answer in time (getaddrinfo has no deadline)."""
        answer: list[list[str]] = []
        done = threading.Event()

        def run() -> None:
            try:
                answer.append(list(self.resolver(host)))
            finally:
                done.set()

        threading.Thread(target=run, name="resolve-navigation", daemon=True).start()
        return answer[0] if done.wait(self.resolve_timeout_s) and answer else []


def _is_address(text: str) -> bool:
    try:
        ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return False
    return True


def _blocked(message: str, host: str, field: str) -> Forbidden:
    return Forbidden(message, code="navigation_blocked",
                     details={"field": field, "host": host, "setting": _LIST_SETTING})


def _web_only(url: str) -> str:
    shown = url if len(url) <= 200 else url[:200] + "..."
    return f"only http and https URLs may be opened here, not {shown!r}"
