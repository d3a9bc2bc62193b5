"""Which Google account (if any) a Chrome user-data dir is signed into.

Two files tell: ``Default/Preferences`` (``account_info``: the accounts the profile knows, first
one with an email wins; ``profile.name``) and the user-data dir's ``Local State``
(``profile.info_cache``: one entry per profile dir, ``Default`` preferred, else the first).
Preferences win over Local State. These files belong to Chrome and may be missing, half-written,
huge or of a newer shape, so anything unexpected means "no identity", never an error.
"""
from __future__ import annotations

import errno
import json
import logging
import os
import stat
from pathlib import Path
from typing import Any, BinaryIO, Literal, TypedDict

log = logging.getLogger(__name__)

PREFERENCES = "Default/Preferences"
LOCAL_STATE = "Local State"
MAX_FILE_BYTES = 20 * 1024 * 1024  # real Preferences are well under 1 MB; refuse anything absurd
_MAX_TEXT = 320  # the longest valid email address; names are shorter still
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)

IdentitySource = Literal["preferences", "local_state", "none"]


class Identity(TypedDict):
    """The account a profile is signed into; ``source`` says which file the account came from.

    ``consentedPrimaryAccount`` is True when the account is the one Chrome syncs to, False when
    it is only signed in, None when unknown or there is no account.
    """

    accountEmail: str | None
    accountName: str | None
    hasAccount: bool
    chromeProfileName: str | None
    source: IdentitySource
    consentedPrimaryAccount: bool | None


def no_identity() -> Identity:
    """The identity of a profile nobody signed into."""
    return {"accountEmail": None, "accountName": None, "hasAccount": False,
            "chromeProfileName": None, "source": "none", "consentedPrimaryAccount": None}


def _open_inside(profile_dir: Path, relative: str) -> int:
    """Open ``profile_dir/relative`` for reading without following any symlink below ``profile_dir``.

    Chrome never links these files, so a link is refused rather than resolved: that keeps a
    planted link from making us read a file outside the profile, at a few ``lstat`` calls
    instead of a full path resolution per file.
    """
    parts = relative.split("/")
    current = profile_dir
    for part in parts[:-1]:
        current = current / part
        if not stat.S_ISDIR(os.lstat(current).st_mode):  # a symlink is not S_ISDIR under lstat
            raise OSError(errno.ELOOP, "not a plain directory", os.fspath(current))
    # O_NONBLOCK: a FIFO planted in place of the file must not hang the caller.
    return os.open(current / parts[-1], os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _NONBLOCK)


def _read_capped(fh: BinaryIO, limit: int) -> bytes | None:
    """At most ``limit`` bytes of ``fh``; None if there are more (the file grew after fstat)."""
    raw = fh.read(limit + 1)
    return None if len(raw) > limit else raw


def read_json_file(profile_dir: Path, relative: str) -> dict[str, Any] | None:
    """The JSON object in ``profile_dir/relative``, or None when missing, too big, broken or unsafe."""
    try:
        fd = _open_inside(profile_dir, relative)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            log.warning("identity: %s in %s is a symlink; ignored", relative, profile_dir.name)
        return None
    try:
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size > MAX_FILE_BYTES:
                log.warning("identity: %s in %s is %d bytes; not reading it", relative, profile_dir.name,
                            st.st_size)
                return None
            raw = _read_capped(fh, MAX_FILE_BYTES)
    except OSError:
        return None
    if raw is None:
        return None
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        log.debug("identity: %s in %s does not parse", relative, profile_dir.name)
        return None
    return data if isinstance(data, dict) else None


def _text(value: Any) -> str | None:
    """A non-empty trimmed string, or None for anything else."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value[:_MAX_TEXT] if value else None


def _email(value: Any) -> str | None:
    text = _text(value)
    return text if text and "@" in text else None


def _from_preferences(prefs: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(email, name, chrome profile name) from a parsed Preferences file."""
    email = name = None
    accounts = prefs.get("account_info")
    if isinstance(accounts, list):
        for account in accounts:
            if not isinstance(account, dict):
                continue
            email = _email(account.get("email"))
            if email:
                name = _text(account.get("full_name")) or _text(account.get("given_name"))
                break
    profile = prefs.get("profile")
    profile_name = _text(profile.get("name")) if isinstance(profile, dict) else None
    return email, name, profile_name


def _info_cache_entry(local_state: dict[str, Any]) -> dict[str, Any] | None:
    profile = local_state.get("profile")
    cache = profile.get("info_cache") if isinstance(profile, dict) else None
    if not isinstance(cache, dict) or not cache:
        return None
    entry = cache.get("Default")
    if isinstance(entry, dict):
        return entry
    first = next(iter(cache.values()))
    return first if isinstance(first, dict) else None


def _from_local_state(local_state: dict[str, Any]) -> tuple[str | None, str | None, str | None]:
    """(email, name, chrome profile name) from a parsed Local State file."""
    entry = _info_cache_entry(local_state)
    if entry is None:
        return None, None, None
    email = _email(entry.get("user_name"))
    name = (_text(entry.get("gaia_name")) or _text(entry.get("gaia_given_name"))) if email else None
    return email, name, _text(entry.get("name"))


def _consented(prefs: dict[str, Any] | None, local_state: dict[str, Any] | None) -> bool | None:
    """Whether the account is the profile's consented primary (sync) account; None when unknown."""
    if prefs:
        google = prefs.get("google")
        services = google.get("services") if isinstance(google, dict) else None
        flag = services.get("consented_to_sync") if isinstance(services, dict) else None
        if isinstance(flag, bool):
            return flag
    entry = _info_cache_entry(local_state) if local_state else None
    if entry is not None:
        # Chrome renamed the key once; read whichever this version wrote.
        for key in ("is_consented_primary_account", "has_consented_primary_account"):
            flag = entry.get(key)
            if isinstance(flag, bool):
                return flag
    return None


def discover(profile_dir: Path) -> Identity:
    """The Google account and Chrome profile name of the user-data dir ``profile_dir``.

    Never raises for bad input files: they give :func:`no_identity` (or whatever the other file
    still tells).
    """
    identity = no_identity()
    prefs = read_json_file(profile_dir, PREFERENCES)
    local_state = read_json_file(profile_dir, LOCAL_STATE)
    p_email, p_name, p_profile = _from_preferences(prefs) if prefs else (None, None, None)
    l_email, l_name, l_profile = _from_local_state(local_state) if local_state else (None, None, None)
    if p_email:
        identity["accountEmail"], identity["source"] = p_email, "preferences"
        # Local State may know the name when Preferences only has the email.
        identity["accountName"] = p_name or (l_name if l_email == p_email else None)
    elif l_email:
        identity["accountEmail"], identity["source"] = l_email, "local_state"
        identity["accountName"] = l_name
    identity["hasAccount"] = identity["accountEmail"] is not None
    identity["chromeProfileName"] = p_profile or l_profile
    if identity["hasAccount"]:
        identity["consentedPrimaryAccount"] = _consented(prefs, local_state)
    return identity


def _stat_key(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class IdentityCache:
    """``discover`` results per profile dir, re-read only when either file's stat changes.

    Preferences can be hundreds of KB; parsing it for every profile on every list would cost
    more than the rest of the list together.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[Any, Any], Identity]] = {}

    def get(self, profile_dir: Path) -> Identity:
        """The identity of ``profile_dir``, from cache when its files did not change."""
        key = os.fspath(profile_dir)
        stamp = (_stat_key(profile_dir / PREFERENCES), _stat_key(profile_dir / LOCAL_STATE))
        cached = self._entries.get(key)
        if cached is not None and cached[0] == stamp:
            return dict(cached[1])  # type: ignore[return-value]
        identity = discover(profile_dir)
        self._entries[key] = (stamp, identity)
        return dict(identity)  # type: ignore[return-value]

    def forget(self, profile_dir: Path) -> None:
        """Drop the cached identity of ``profile_dir``."""
        self._entries.pop(os.fspath(profile_dir), None)
