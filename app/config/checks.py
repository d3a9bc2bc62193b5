"""Validators for setting values that marshmallow's own do not cover."""
from __future__ import annotations

import os
import zoneinfo
from pathlib import Path
from urllib.parse import urlsplit

from marshmallow import ValidationError

from profiles.errors import InvalidProfileName
from profiles.names import validate_name


def profile_name(value: str) -> None:
    """The profile store's own rule (one safe path component), so a name the config accepts is
    one the store accepts; empty passes (no profile)."""
    if value:
        try:
            validate_name(value)
        except InvalidProfileName as exc:
            raise ValidationError(str(exc)) from None


def no_whitespace(value: str) -> None:
    """A non-empty host or address without whitespace."""
    if not value or any(ch.isspace() for ch in value):
        raise ValidationError("must be a non-empty value without whitespace")


def header_value(value: str) -> None:
    """No control characters: the user agent ends up in an HTTP header, and CR/LF would allow
    header injection."""
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValidationError("must not contain control characters")


def timezone(value: str) -> None:
    """Empty (the machine's), or an IANA time zone name the system knows (``Europe/Paris``)."""
    if not value:
        return
    try:
        zoneinfo.ZoneInfo(value)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise ValidationError(f"unknown time zone {value!r}; use an IANA name such as Europe/Paris") from None


def extension_dir(value: Path | str) -> None:
    """An unpacked extension: a folder holding a manifest.json (Chrome takes a comma-separated list,
    so a path with a comma cannot be passed)."""
    path = str(value)
    if "," in path:
        raise ValidationError(f"{path}: a path with a comma cannot be handed to Chrome")
    if not os.path.isfile(os.path.join(path, "manifest.json")):
        raise ValidationError(f"{path}: not an unpacked extension (no manifest.json in that folder)")


def cdp_url(value: str) -> None:
    """Empty (launch our own browser), or an http(s):// or ws(s):// URL with a host."""
    if not value:
        return
    parts = urlsplit(value)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https", "ws", "wss"):
        shown = f"'{scheme}'" if scheme else "none"
        raise ValidationError(f"must be an http(s):// or ws(s):// URL (scheme: {shown})")
    if not parts.netloc:
        raise ValidationError("must include a host")


def provider_url(value: str) -> None:
    """An engine's URL (a ``${NAME}`` placeholder stands for an environment variable's value)."""
    cdp_url(value)


# Chromium accepts switches with "--", "-" (and "/" on Windows) and matches the
# name only, so normalise before comparing or "-user-data-dir=x" would slip by.
_FORBIDDEN_FLAG_PREFIXES: tuple[tuple[str, str], ...] = (
    # Covers --remote-debugging-port as well as -pipe/-address: Pinchtab owns
    # the DevTools endpoint, and a second or exposed one is a remote-control hole.
    ("remote-debugging-", "Pinchtab manages the DevTools endpoint itself"),
    ("user-data-dir", "the profile directory is chosen through profiles/instanceDefaults.profile"),
)
_FORBIDDEN_FLAGS: dict[str, str] = {
    "disable-web-security": "it disables the same-origin policy for every page the agent visits",
}


def extra_flag(value: str) -> None:
    """A Chromium command-line switch that does not undo what Pinchtab controls."""
    stripped = value.strip()
    if not stripped.startswith("-"):
        # Chromium treats a bare argument as a URL to open, not as a setting.
        raise ValidationError("must be a command-line switch starting with '--'")
    name = stripped.lstrip("-").split("=", 1)[0].lower()
    for prefix, why in _FORBIDDEN_FLAG_PREFIXES:
        if name.startswith(prefix):
            raise ValidationError(f"--{name} is not allowed: {why}")
    if name in _FORBIDDEN_FLAGS:
        raise ValidationError(f"--{name} is not allowed: {_FORBIDDEN_FLAGS[name]}")


def web_origin(value: str) -> None:
    """An origin as browsers send it: ``scheme://host[:port]`` with no path (``https://app.example``,
    ``chrome-extension://<id>``)."""
    parts = urlsplit(value.strip())
    if (not parts.scheme or not parts.netloc or parts.path not in ("", "/") or parts.query or parts.fragment
            or "@" in parts.netloc or any(ch.isspace() for ch in value)):
        raise ValidationError(f"{value!r} is not an origin: write scheme://host[:port], no path "
                              "(e.g. https://app.example.com)")
