"""Request interception of one tab, through the CDP Fetch domain: the one path per tab that both
the caller's route rules (``/network/route``) and navigate's resource blocking go through.

While a tab has neither, Fetch is off and its requests are never paused. Once either is set,
every request of the tab (its out-of-process iframes included) pauses before it is sent and is
answered on the tab's worker: blocked, then the first matching rule, else continued. Nothing
waits on an answer: a paused request costs one message, not a round trip of the worker.
"""
from __future__ import annotations

import base64
import re
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit


class _Frame(Protocol):
    session_id: str


class Tab(Protocol):
    """What interception needs of its tab (a ``cdp.tab.Tab``, which builds its interceptor as it starts)."""

    session_id: str

    @property
    def frames(self) -> Mapping[str, _Frame]: ...

    def on(self, method: str, handler: Callable[[str, dict[str, Any]], None]) -> None: ...

    def send(self, method: str, params: dict[str, Any] | None = None, session_id: str | None = None) -> Future: ...

    def call(self, method: str, params: dict[str, Any] | None = None, *, session_id: str | None = None,
             timeout_s: float | None = None) -> dict[str, Any]: ...

ACTIONS = ("continue", "abort", "fulfill")
# CDP Network.ResourceType, by the lower-case name callers give.
RESOURCE_TYPES = {t.lower(): t for t in (
    "Document", "Stylesheet", "Image", "Media", "Font", "Script", "TextTrack", "XHR", "Fetch", "Prefetch",
    "EventSource", "WebSocket", "Manifest", "SignedExchange", "Ping", "CSPViolationReport", "Preflight", "Other")}
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "CONNECT", "TRACE")
# A forged response runs in the origin of the URL it answers: only types a browser never executes.
FULFILL_TYPES = frozenset({
    "application/json", "application/xml", "application/pdf", "application/octet-stream", "text/plain",
    "text/csv", "text/xml", "image/png", "image/jpeg", "image/gif", "image/webp", "video/mp4", "video/webm",
    "audio/mpeg", "audio/ogg", "audio/wav"})
# Schemes whose responses must never be forged: they are not the web's, or not the network's.
NO_FULFILL_SCHEMES = frozenset({"javascript", "data", "file", "blob", "ftp", "chrome", "chrome-extension", "about"})
MAX_RULES = 100
MAX_PATTERN = 2048
MAX_FULFILL_BODY = 1024 * 1024
BLOCKS = ("images", "media", "ads")
_BLOCKED_TYPES = {"images": "Image", "media": "Media"}
# Ad and tracker hosts that ``blockAds`` refuses (a host or any of its subdomains).
AD_HOSTS = frozenset({
    "doubleclick.net", "googlesyndication.com", "googleadservices.com", "googletagservices.com",
    "google-analytics.com", "googletagmanager.com", "adservice.google.com", "amazon-adsystem.com",
    "adnxs.com", "adsrvr.org", "criteo.com", "criteo.net", "taboola.com", "outbrain.com", "pubmatic.com",
    "rubiconproject.com", "openx.net", "casalemedia.com", "media.net", "adzerk.net", "revcontent.com",
    "scorecardresearch.com", "quantserve.com", "hotjar.com", "mixpanel.com", "segment.io", "fullstory.com",
    "moatads.com", "adsafeprotected.com", "yieldmo.com", "sharethrough.com", "smartadserver.com",
    "connect.facebook.net", "ads-twitter.com", "analytics.twitter.com", "bat.bing.com", "ads.linkedin.com",
})


class RuleError(ValueError):
    """A rule that cannot be installed; the message says which field and why."""

    def __init__(self, message: str, field_name: str) -> None:
        super().__init__(message)
        self.field = field_name


def header_safe(value: str) -> bool:
    """No CR, LF or NUL: a value that cannot smuggle a second header in."""
    return not any(c in value for c in "\r\n\0")


def wildcard_match(pattern: str, text: str) -> bool:
    """A route pattern against a URL: ``*`` any characters (``/`` too, unlike ``/wait``'s URL glob),
    ``?`` one; a pattern without either matches as a substring (people paste a host or a path).

    Linear in practice and at worst len(pattern) x len(text): no regex, so no pattern a caller
    writes can make a paused request backtrack for long.
    """
    if "*" not in pattern and "?" not in pattern:
        return pattern in text
    p = t = 0
    star, mark = -1, 0
    while t < len(text):
        if p < len(pattern) and pattern[p] in ("?", text[t]) and pattern[p] != "*":
            p += 1
            t += 1
        elif p < len(pattern) and pattern[p] == "*":
            star, mark = p, t
            p += 1
        elif star >= 0:  # let the last star take one more character
            p = star + 1
            mark += 1
            t = mark
        else:
            return False
    return all(c == "*" for c in pattern[p:])


@dataclass(frozen=True)
class Rule:
    """One route rule; the first rule that matches a request decides its fate."""

    pattern: str
    action: str = "continue"
    body: str = ""
    content_type: str = ""
    status: int = 0
    resource_type: str = ""
    method: str = ""
    headers: tuple[tuple[str, str], ...] = ()

    @classmethod
    def build(cls, pattern: str, action: str = "continue", *, body: str = "", content_type: str = "",
              status: int = 0, resource_type: str = "", method: str = "",
              headers: dict[str, str] | None = None) -> Rule:
        """A checked rule (RuleError naming the field otherwise), with the fulfill defaults set."""
        if not pattern:
            raise RuleError("pattern required", "pattern")
        if len(pattern) > MAX_PATTERN:
            raise RuleError(f"pattern longer than {MAX_PATTERN} characters", "pattern")
        if action not in ACTIONS:
            raise RuleError(f"invalid action {action!r}: one of {', '.join(ACTIONS)}", "action")
        if len(body.encode("utf-8")) > MAX_FULFILL_BODY:
            raise RuleError(f"body exceeds {MAX_FULFILL_BODY} bytes (cap)", "body")
        if status and not 100 <= status <= 599:
            raise RuleError(f"status {status} out of HTTP range (100-599)", "status")
        if content_type and (not header_safe(content_type)
                             or content_type.split(";")[0].strip().lower() not in FULFILL_TYPES):
            raise RuleError(f"contentType {content_type!r} is not on the fulfill safe-list (types a browser "
                            f"never runs: {', '.join(sorted(FULFILL_TYPES))})", "contentType")
        if resource_type and resource_type.lower() not in RESOURCE_TYPES:
            raise RuleError(f"invalid resourceType {resource_type!r}", "resourceType")
        if method and method.strip().upper() not in METHODS:
            raise RuleError(f"invalid method {method!r}", "method")
        pairs = []
        for name, value in (headers or {}).items():
            if not name or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name) or not header_safe(value):
                raise RuleError(f"invalid header {name!r}: a token name and a value without CR, LF or NUL",
                                "headers")
            pairs.append((name, value))
        if action == "fulfill":
            status = status or 200
            content_type = content_type or "application/json"
        return cls(pattern, action, body, content_type, status,
                   RESOURCE_TYPES[resource_type.lower()] if resource_type else "",
                   method.strip().upper(), tuple(pairs))

    def matches(self, url: str, resource_type: str, method: str) -> bool:
        if self.resource_type and self.resource_type != resource_type:
            return False
        if self.method:
            if self.method != method:
                return False
        elif self.action == "fulfill" and method == "OPTIONS":
            return False  # a forged CORS preflight would break, or bypass, the real request: opt in by method
        return wildcard_match(self.pattern, url)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pattern": self.pattern, "action": self.action}
        for key, value in (("body", self.body), ("contentType", self.content_type), ("status", self.status),
                           ("resourceType", self.resource_type.lower()), ("method", self.method)):
            if value:
                out[key] = value
        if self.headers:
            out["headers"] = dict(self.headers)
        return out


def ad_host(url: str) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    parts = host.split(".")
    return any(".".join(parts[i:]) in AD_HOSTS for i in range(len(parts) - 1))


class Interceptor:
    """The Fetch interception of one tab. Change it on the tab's worker (``Tab.run``); read
    ``rules`` and ``blocks`` from any thread (they are replaced, never changed in place)."""

    def __init__(self, tab: Tab) -> None:
        self.tab = tab
        self.rules: tuple[Rule, ...] = ()
        self.blocks: frozenset[str] = frozenset()
        self.routed = False  # rules were installed and not all removed since (DELETE's 404)
        # HTTP credentials (cdp.emulation) answer auth challenges through Fetch too: while they are
        # set, Fetch stays on the tab's own session and its enabling keeps asking for challenges.
        self.handle_auth = False
        self._enabled = False
        tab.on("Fetch.requestPaused", self._on_paused)

    @property
    def active(self) -> bool:
        return bool(self.rules or self.blocks)

    def setup_commands(self) -> list[tuple[str, dict[str, Any]]]:
        """What turns interception on for a session (none while it is off)."""
        if not self.active:
            return []
        params: dict[str, Any] = {"patterns": [{"urlPattern": "*", "requestStage": "Request"}]}
        if self.handle_auth:
            params["handleAuthRequests"] = True
        return [("Fetch.enable", params)]

    # --- changes, on the worker ---------------------------------------------------------------
    def add(self, rule: Rule) -> tuple[Rule, ...]:
        """Install ``rule``, replacing the rule of the same pattern; RuleError past MAX_RULES."""
        rules = list(self.rules)
        for i, old in enumerate(rules):
            if old.pattern == rule.pattern:
                rules[i] = rule
                break
        else:
            if len(rules) >= MAX_RULES:
                raise RuleError(f"too many interception rules on this tab: cap is {MAX_RULES}", "pattern")
            rules.append(rule)
        self._change(tuple(rules), self.blocks)
        self.routed = True
        return self.rules

    def remove(self, pattern: str | None) -> int:
        """Remove the rules of ``pattern`` (all when None); the number removed."""
        kept = tuple(r for r in self.rules if pattern is not None and r.pattern != pattern)
        removed = len(self.rules) - len(kept)
        self._change(kept, self.blocks)
        if not kept:
            self.routed = False
        return removed

    def block(self, kinds: Iterable[str]) -> None:
        """Refuse these resource kinds (of BLOCKS) from now on; an empty set blocks nothing."""
        self._change(self.rules, frozenset(kinds))

    def _change(self, rules: tuple[Rule, ...], blocks: frozenset[str]) -> None:
        """Take ``rules`` and ``blocks``, turning Fetch on or off to match; as before if Chrome refuses."""
        before = self.rules, self.blocks
        self.rules, self.blocks = rules, blocks
        try:
            self._apply()
        except Exception:
            self.rules, self.blocks = before
            raise

    def _sessions(self) -> list[str]:
        return list(dict.fromkeys([self.tab.session_id, *(f.session_id for f in self.tab.frames.values())]))

    def _apply(self) -> None:
        if self.active == self._enabled:
            return
        method, params = self.setup_commands()[0] if self.active else ("Fetch.disable", {})
        for session_id in self._sessions():
            if session_id == self.tab.session_id and method == "Fetch.disable" and self.handle_auth:
                continue  # the credentials' own handler goes on answering the tab's paused requests
            if session_id == self.tab.session_id:
                self.tab.call(method, params)  # the tab's own: its answer tells whether it took
            else:
                self.tab.send(method, params, session_id)  # an iframe's may be gone meanwhile: not waited
        self._enabled = self.active

    # --- paused requests, on the worker -----------------------------------------------------------
    def decide(self, url: str, resource_type: str, method: str) -> tuple[str, Rule | None]:
        """What happens to a request: ("block", None), ("rule", the rule) or ("continue", None)."""
        for kind in self.blocks:
            if (kind == "ads" and ad_host(url)) or _BLOCKED_TYPES.get(kind) == resource_type:
                return "block", None
        for rule in self.rules:
            if rule.matches(url, resource_type, method):
                return "rule", rule
        return "continue", None

    def _on_paused(self, session_id: str, p: dict[str, Any]) -> None:
        if not self._enabled:
            return  # another owner's Fetch (a download's own tab): its pauses are its own
        rid = p.get("requestId", "")
        req = p.get("request") or {}
        url = req.get("url", "")
        verdict, rule = self.decide(url, p.get("resourceType", "Other"), str(req.get("method", "")).upper())
        if verdict == "block" or (rule is not None and rule.action == "abort"):
            self._send("Fetch.failRequest", {"requestId": rid, "errorReason": "BlockedByClient"}, session_id)
        elif rule is not None and rule.action == "fulfill" and urlsplit(url).scheme.lower() not in NO_FULFILL_SCHEMES:
            headers = [{"name": "Content-Type", "value": rule.content_type}]
            headers += [{"name": n, "value": v} for n, v in rule.headers if n.lower() != "content-type"]
            self._send("Fetch.fulfillRequest", {"requestId": rid, "responseCode": rule.status,
                                                "responseHeaders": headers,
                                                "body": base64.b64encode(rule.body.encode("utf-8")).decode()},
                       session_id)
        elif rule is not None and rule.action == "continue" and rule.headers:
            merged = {k.lower(): (k, v) for k, v in (req.get("headers") or {}).items()}
            merged.update({k.lower(): (k, v) for k, v in rule.headers})
            self._send("Fetch.continueRequest", {"requestId": rid, "headers": [
                {"name": k, "value": str(v)} for k, v in merged.values()]}, session_id)
        else:
            self._send("Fetch.continueRequest", {"requestId": rid}, session_id)

    def _send(self, method: str, params: dict[str, Any], session_id: str) -> None:
        # Not waited: we are mid-pump on the worker. A failure means the tab or frame went away
        # with its request, and the request with it.
        self.tab.send(method, params, session_id)
