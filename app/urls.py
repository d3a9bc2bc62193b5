"""What the API accepts as a URL: the one parser every URL-taking route goes through.

``parse`` reads a URL the way the browser would and refuses one the browser could never load
(``http://[::1``, ``http://x:99999/``, a control character, a host with a space) with a message
that names the problem, so the caller gets a 400 instead of Chrome's "Cannot navigate to invalid
URL" (which no retry can fix). It is pure: the navigation route, the download policy
(``app.netguard``) and the cookie routes build on it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_URL_CHARS = 2 * 1024 * 1024  # Chrome refuses longer URLs (url::kMaxURLChars)
WEB_SCHEMES = ("http", "https")
# Leading "scheme:" of an absolute URL; "localhost:8080" and "example.com:80/x" are a host and a
# port as people type them, not a scheme.
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(?!\d+(?:[/?#]|$))")
_EDGE_SPACE = " \t\n\r"


class BadURL(ValueError):
    """A URL the browser could not load. ``message`` says why; ``scheme_error``: only its scheme is wrong."""

    def __init__(self, message: str, *, scheme_error: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.scheme_error = scheme_error


@dataclass(frozen=True)
class URL:
    """A checked URL: the text to hand to the browser, its scheme, and (http/https) its host as typed."""

    text: str
    scheme: str
    netloc: str = ""
    host: str = ""  # canonical (``app.netguard.canonical_host``): lower case, IDNA, IPv6 unbracketed
    port: int | None = None


def parse(raw: str, *, guess_scheme: bool = True) -> URL:
    """Check ``raw`` and return it as a URL; raise BadURL naming the problem.

    Accepted: http and https URLs with a valid host and port, ``about:blank``, and ``file:`` URLs
    (whether file: is allowed is the caller's decision). With ``guess_scheme``, a URL without a
    scheme (``example.com/x``) is read as https, as people type it.
    """
    text = raw.strip(_EDGE_SPACE)
    if not text:
        raise BadURL("invalid URL: it is empty")
    if len(text) > MAX_URL_CHARS:
        raise BadURL(f"invalid URL: longer than {MAX_URL_CHARS} characters")
    for i, ch in enumerate(text):
        if ord(ch) < 0x20 or ord(ch) == 0x7F:
            raise BadURL(f"invalid URL: control character U+{ord(ch):04X} at position {i}")
    m = _SCHEME.match(text)
    if m is None:
        if not guess_scheme or text.startswith(("/", ".", ":", "?", "#")):
            raise BadURL(f"invalid URL scheme: (none) in {_show(text)}; only http, https and about:blank "
                         f"are allowed", scheme_error=True)
        text = "https://" + text  # "example.com" as people type it
        scheme = "https"
    else:
        scheme = m.group(1).lower()
    if scheme == "about":
        if text.lower() != "about:blank":
            raise BadURL(f"invalid URL: {_show(text)}; of about: URLs only about:blank is allowed", scheme_error=True)
        return URL("about:blank", "about")
    if scheme == "file":
        return URL(text, "file")
    if scheme not in WEB_SCHEMES:
        raise BadURL(f"invalid URL scheme: {scheme}; only http, https and about:blank are allowed",
                     scheme_error=True)
    return _web_url(text, scheme)


def _web_url(text: str, scheme: str) -> URL:
    from .netguard import UnsafeURL, canonical_host, parse_ip  # the host rules live with the policy

    try:
        parts = urlsplit(text)
    except ValueError as exc:  # "Invalid IPv6 URL" and the like
        raise BadURL(f"invalid URL {_show(text)}: {exc}") from None
    try:
        port = parts.port
    except ValueError as exc:
        raise BadURL(f"invalid URL {_show(text)}: bad port ({exc})") from None
    netloc = parts.netloc
    hostport = netloc.rpartition("@")[2]
    if hostport.startswith("["):
        raw_host = hostport[: hostport.find("]") + 1]
    else:
        raw_host = hostport.split(":", 1)[0]
    if not raw_host:
        raise BadURL(f"invalid URL {_show(text)}: it has no host")
    try:
        host = canonical_host(raw_host)
        parse_ip(host)  # a host ending in a number must be an IPv4 address (1.2.3.999 is not)
    except UnsafeURL:
        raise BadURL(f"invalid URL {_show(text)}: invalid host {raw_host!r}") from None
    return URL(text, scheme, netloc, host, port)


def _show(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
