"""Removing secrets from URLs before they are written anywhere.

Credentials in the authority (``user:pass@``) are dropped, and the values of query and fragment
parameters whose key looks secret (token, key, secret, password, auth, session, signature, ...)
are replaced. Other parameters are kept byte for byte. Matching is deliberately broad: a log
that hides a harmless ``keyword=`` value costs little; one that keeps an ``api_key`` costs a lot.
"""
from __future__ import annotations

from urllib.parse import unquote_plus, urlsplit, urlunsplit

REDACTED = "REDACTED"
# Substrings of a lower-cased key that mark it secret.
SECRET_KEY_PARTS = (
    "token", "key", "secret", "password", "passwd", "pwd", "auth", "session", "credential",
    "signature", "jwt", "bearer", "cookie",
)
# Whole keys that are secret but too short to match as substrings.
SECRET_KEYS = frozenset({"code", "sig", "sid", "otp", "pass", "pin", "ticket", "nonce"})


def is_secret_key(key: str) -> bool:
    """True when a parameter named ``key`` likely carries a secret."""
    lowered = key.strip().lower()
    return lowered in SECRET_KEYS or any(part in lowered for part in SECRET_KEY_PARTS)


def scrub_params(text: str) -> str:
    """``a=1&token=x`` -> ``a=1&token=REDACTED``; pairs without a secret key are kept as they were."""
    if "=" not in text:
        return text
    out = []
    for pair in text.split("&"):
        key, eq, _value = pair.partition("=")
        if eq and is_secret_key(unquote_plus(key)):
            out.append(f"{key}={REDACTED}")
        else:
            out.append(pair)
    return "&".join(out)


def scrub_url(url: str) -> str:
    """``url`` without credentials and without the values of secret-looking parameters.

    Works on absolute URLs and on request paths (``/navigate?token=...``) alike.
    """
    if "@" not in url and "?" not in url and "#" not in url:
        return url  # the common case, kept cheap: nothing that could hold a secret
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. a malformed IPv6 host: keep nothing we cannot parse
        return "[unparsable url]"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = netloc.rpartition("@")[2]
    return urlunsplit((parts.scheme, netloc, parts.path, scrub_params(parts.query), scrub_params(parts.fragment)))
