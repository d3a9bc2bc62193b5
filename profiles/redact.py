"""Removing secrets from URLs before they are written or shown anywhere.

One function, two policies (see :func:`scrub_url`): the activity log keeps what is useful and hides
what looks secret; a configured endpoint shown back to its operator hides every value.
"""
from __future__ import annotations

from urllib.parse import unquote_plus, urlsplit, urlunsplit

REDACTED = "REDACTED"
#: What replaces a secret that is shown back to the operator (tokens, passwords, endpoint values).
MASK = "***"
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


def scrub_params(text: str, *, mask_every_value: bool = False) -> str:
    """``a=1&token=x`` -> ``a=1&token=REDACTED``; with ``mask_every_value``, ``a=***&token=***``.

    Keys, and pairs left alone, are kept byte for byte.
    """
    if "=" not in text:
        return text
    out = []
    for pair in text.split("&"):
        key, eq, _value = pair.partition("=")
        if eq and mask_every_value:
            out.append(f"{key}={MASK}")
        elif eq and is_secret_key(unquote_plus(key)):
            out.append(f"{key}={REDACTED}")
        else:
            out.append(pair)
    return "&".join(out)


def scrub_url(url: str, *, mask_every_value: bool = False) -> str:
    """``url`` with its secrets hidden; works on absolute URLs and request paths alike.

    By default (the activity log, which records any URL an agent visits): credentials in the
    authority (``user:pass@``) are dropped, and the values of secret-looking parameters (token, key,
    secret, password, auth, session, signature, ...) in the query and the fragment become
    ``REDACTED``. Other parameters are kept byte for byte. Matching is deliberately broad: a log
    that hides a harmless ``keyword=`` value costs little; one that keeps an ``api_key`` costs a lot.

    With ``mask_every_value`` (an endpoint the operator configured, such as a remote CDP URL, shown
    back in an API record or a diagnostic): the user name stays so the endpoint can be recognised,
    and the password and every query value become ``***``, since CDP providers name their token
    parameter freely.

    A URL that cannot be parsed comes back as ``[unparsable url]``: nothing we cannot read is kept.
    """
    if "@" not in url and "?" not in url and "#" not in url:
        return url  # the common case, kept cheap: nothing that could hold a secret
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. a malformed IPv6 host
        return "[unparsable url]"
    userinfo, _, host = parts.netloc.rpartition("@")
    if not mask_every_value:
        return urlunsplit((parts.scheme, host, parts.path, scrub_params(parts.query), scrub_params(parts.fragment)))
    user, colon, _password = userinfo.partition(":")
    netloc = f"{user}:{MASK}@{host}" if colon else parts.netloc
    return urlunsplit((parts.scheme, netloc, parts.path, scrub_params(parts.query, mask_every_value=True),
                       parts.fragment))
