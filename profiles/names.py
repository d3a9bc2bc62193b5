"""Profile names and the ids derived from them.

A name becomes a directory name under the store's base dir, so it must be exactly one safe path
component on every platform: ASCII letters, digits, space, ``-``, ``_`` and ``.``, 1-64 characters,
no leading or trailing space, no leading dot (dot-names are the store's own temp dirs and hidden
files), and no ``..`` anywhere.
"""
from __future__ import annotations

import hashlib
import re

from .errors import InvalidProfileName

MAX_NAME_LENGTH = 64
ID_PREFIX = "prof_"

_NAME_CHARS = re.compile(r"[A-Za-z0-9 ._-]+")
_ID = re.compile(r"prof_[0-9a-f]{8}")


def validate_name(name: object) -> str:
    """Return ``name`` if it is a valid profile name; raise :class:`InvalidProfileName` otherwise."""
    if not isinstance(name, str) or not name:
        raise InvalidProfileName("profile name must be a non-empty string")
    shown = ascii(name[:80])  # repr-safe: a NUL or control char must not reach a log line raw
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidProfileName(f"profile name {shown} is longer than {MAX_NAME_LENGTH} characters")
    if not _NAME_CHARS.fullmatch(name):
        raise InvalidProfileName(
            f"profile name {shown} may only hold letters, digits, space, '-', '_' and '.'"
        )
    if name != name.strip(" "):
        raise InvalidProfileName(f"profile name {shown} must not start or end with a space")
    if name.startswith("."):
        raise InvalidProfileName(f"profile name {shown} must not start with a dot")
    if name.endswith("."):  # Windows drops a trailing dot from directory names
        raise InvalidProfileName(f"profile name {shown} must not end with a dot")
    if ".." in name:
        raise InvalidProfileName(f"profile name {shown} must not contain '..'")
    return name


def is_valid_name(name: object) -> bool:
    """True when ``name`` passes :func:`validate_name`."""
    try:
        validate_name(name)
    except InvalidProfileName:
        return False
    return True


def profile_id(name: str) -> str:
    """The profile's id: ``prof_`` and the first 8 hex digits of sha256(name).

    The id is a function of the name, so a rename gives the profile a new id.
    """
    return ID_PREFIX + hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def looks_like_id(value: str) -> bool:
    """True when ``value`` has the shape of a profile id."""
    return bool(_ID.fullmatch(value))
