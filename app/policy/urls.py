"""What the API accepts as a URL: the one parser every URL-taking route goes through.

``parse`` reads a URL the way the browser would and refuses one the browser could never load
(``http://[::1``, ``http://x:99999/``, a control character, a host with a space) with a message
that names the problem, so the caller gets a 400 instead of Chrome's "Cannot navigate to invalid
URL" (which no retry can fix). It is pure: the navigation route, the download policy
(``app.policy.netguard``) and the cookie routes build on it.
"""
from __future__ import annotations

import ipaddress
import re
import unicodedata
from dataclasses import dataclass
from urllib.parse import unquote, urlsplit

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


class BadHost(BadURL):
    """A host the URL standard rejects (the browser would not load it)."""


IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# Code points the URL standard forbids in a host: a host containing one is not a host.
_FORBIDDEN_HOST = set(" \t\n\r#%/:<>?@[\\]^|\0") | {chr(c) for c in range(0x20)} | {"\x7f"}


@dataclass(frozen=True)
class URL:
    """A checked URL: the text to hand to the browser, its scheme, and (http/https) its host as typed."""

    text: str
    scheme: str
    netloc: str = ""
    host: str = ""  # canonical (``canonical_host``): lower case, IDNA, IPv6 unbracketed
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
    except BadHost:
        raise BadURL(f"invalid URL {_show(text)}: invalid host {raw_host!r}") from None
    return URL(text, scheme, netloc, host, port)


def _show(text: str, limit: int = 200) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")


# --- hosts, as the URL standard reads them ---------------------------------------------------
def canonical_host(host: str) -> str:
    """``host`` as the browser sees it: percent-decoded, NFKC, lower case, IDNA, no trailing dot.

    Raises BadHost for a host the URL standard rejects.
    """
    h = unquote(host)
    if h.startswith("[") and h.endswith("]"):
        h = h[1:-1]
    if ":" in h:  # an IPv6 literal: parsed as such, never as a name
        try:
            return str(ipaddress.IPv6Address(h))
        except ValueError:
            raise BadHost(f"invalid host {host!r}") from None
    h = unicodedata.normalize("NFKC", h).lower()
    if not h.isascii():
        try:
            h = h.encode("idna").decode("ascii")
        except UnicodeError:
            raise BadHost(f"invalid host {host!r}") from None
    if not h or any(c in _FORBIDDEN_HOST for c in h):
        raise BadHost(f"invalid host {host!r}")
    if h.endswith(".") and h != ".":
        h = h[:-1]
    return h


def _ipv4_number(part: str) -> int | None:
    """One WHATWG IPv4 part: decimal, ``0x`` hex or leading-zero octal; None if it is not a number."""
    if not part:
        return None
    base = 10
    if part[:2] in ("0x", "0X"):
        part, base = part[2:], 16
        if not part:
            return 0
    elif len(part) > 1 and part[0] == "0":
        part, base = part[1:], 8
    try:
        return int(part, base) if part.isalnum() and part.isascii() else None
    except ValueError:
        return None


def _ends_in_number(host: str) -> bool:
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    last = parts[-1]
    if last and last.isascii() and last.isdigit():
        return True
    return last[:2] in ("0x", "0X") and all(c in "0123456789abcdefABCDEF" for c in last[2:])


def parse_ipv4(host: str) -> ipaddress.IPv4Address | None:
    """The address of a host in any IPv4 form Chromium accepts (``127.1``, ``0x7f000001``, ...).

    None when ``host`` is a name; BadHost when it ends in a number but is no address
    (the browser refuses such a URL; so do we).
    """
    if not _ends_in_number(host):
        return None
    parts = host.split(".")
    if parts[-1] == "" and len(parts) > 1:
        parts.pop()
    numbers = [_ipv4_number(p) for p in parts]
    if len(parts) > 4 or any(n is None for n in numbers):
        raise BadHost(f"invalid IPv4 host {host!r}")
    nums: list[int] = [n for n in numbers if n is not None]
    if any(n > 255 for n in nums[:-1]) or nums[-1] >= 256 ** (5 - len(nums)):
        raise BadHost(f"invalid IPv4 host {host!r}")
    value = nums[-1]
    for i, n in enumerate(nums[:-1]):
        value += n * 256 ** (3 - i)
    return ipaddress.IPv4Address(value)


def parse_ip(host: str) -> IPAddress | None:
    """The address a canonical host names literally, or None for a host name."""
    if ":" in host:
        try:
            return ipaddress.IPv6Address(host.strip("[]"))
        except ValueError:
            raise BadHost(f"invalid host {host!r}") from None
    return parse_ipv4(host)
