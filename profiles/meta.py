"""A profile's own record, ``profile.json``: what it holds, and reading it without trusting it.

The file sits in a folder Chrome and the user write to, so it is read as untrusted: no symlink is
followed, a FIFO planted in its place cannot hang the read, and a broken or oversized file reads
as the defaults plus an error text the listing shows, never as an exception.
"""
from __future__ import annotations

import errno
import json
import os
import stat
from pathlib import Path
from typing import Literal, NotRequired, TypedDict

from .errors import InvalidProfileField, ProfileNotFound
from .locks import LockInfo
from .names import profile_id

META_FILE = "profile.json"
MAX_META_BYTES = 1024 * 1024
MAX_TEXT_FIELD = 2000
CORRUPT_META = "corrupt profile.json"
MISSING_META = "missing profile.json"
UNSAFE_META = "unsafe profile.json (a symlink)"

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
# O_NONBLOCK: a FIFO planted as profile.json must not hang the list.
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

ProfileSource = Literal["created", "imported"]


class ProfileMeta(TypedDict):
    """The content of ``profile.json``."""

    id: str
    name: str
    description: str
    useWhen: str
    created: str | None
    source: ProfileSource
    sourcePath: NotRequired[str]


class ProfileInfo(TypedDict):
    """One profile as ``list`` and ``get`` report it (the metadata plus live state)."""

    id: str
    name: str
    path: str
    description: str
    useWhen: str
    created: str | None
    source: ProfileSource
    sourcePath: NotRequired[str]
    pathExists: bool
    diskUsage: int | None
    diskUsageMB: float | None
    diskUsageStale: bool
    lastUsed: str | None
    running: bool
    lockedBy: LockInfo | None
    chromePid: int | None
    accountEmail: str | None
    accountName: str | None
    hasAccount: bool
    chromeProfileName: str | None
    identitySource: str
    consentedPrimaryAccount: bool | None
    error: NotRequired[str]


def check_text(field: str, value: object) -> str:
    """A text field of the record as a caller gave it, or InvalidProfileField saying why not."""
    if not isinstance(value, str):
        raise InvalidProfileField(f"{field} must be a string")
    if len(value) > MAX_TEXT_FIELD:
        raise InvalidProfileField(f"{field} is longer than {MAX_TEXT_FIELD} characters")
    if "\x00" in value:
        raise InvalidProfileField(f"{field} must not contain NUL characters")
    return value


def default_meta(name: str) -> ProfileMeta:
    """The record of a profile that has none (made outside the store, or before records were kept)."""
    return {"id": profile_id(name), "name": name, "description": "", "useWhen": "",
            "created": None, "source": "created"}


def read_meta(name: str, path: Path) -> tuple[ProfileMeta, str | None]:
    """``profile.json`` merged over defaults, and an error text when it is broken.

    Raises :class:`ProfileNotFound` when the profile dir itself is gone.
    """
    meta = default_meta(name)
    try:
        fd = os.open(path / META_FILE, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK)
    except FileNotFoundError as exc:
        if not path.is_dir():
            raise ProfileNotFound(f"profile {name!r} does not exist") from exc
        return meta, MISSING_META
    except OSError as exc:
        return meta, UNSAFE_META if exc.errno == errno.ELOOP else CORRUPT_META
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_META_BYTES:
                return meta, CORRUPT_META
            raw = fh.read(MAX_META_BYTES + 1)
    except OSError:
        return meta, CORRUPT_META
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return meta, CORRUPT_META
    if not isinstance(data, dict):
        return meta, CORRUPT_META
    for key in ("description", "useWhen", "created"):
        value = data.get(key)
        if isinstance(value, str):
            meta[key] = value[:MAX_TEXT_FIELD]  # type: ignore[literal-required]
    if data.get("source") == "imported":
        meta["source"] = "imported"
        if isinstance(data.get("sourcePath"), str):
            meta["sourcePath"] = data["sourcePath"]
    return meta, None
