"""The file-backed profile store: Chrome user-data dirs, identity discovery, activity logs.

* :class:`~profiles.store.ProfileStore`: create, list, get, update (rename), delete, import,
  reset and lock profiles under one base dir.
* :func:`~profiles.identity.discover`: the Google account a user-data dir is signed into.
* :class:`~profiles.activity.ActivityLog`: per-day JSON-lines log of agent requests, secrets
  stripped, with queries and per-profile analytics.
* :mod:`profiles.errors`: one exception per failure, for the HTTP layer to map.
"""
from __future__ import annotations

from .activity import ActivityEvent, ActivityLog, Analytics
from .errors import (
    InvalidImportSource,
    InvalidProfileField,
    InvalidProfileName,
    ProfileError,
    ProfileExists,
    ProfileInUse,
    ProfileLocked,
    ProfileNotFound,
    StoreWriteError,
    UnsafePath,
)
from .identity import Identity, discover
from .locks import ProfileLock
from .store import ProfileInfo, ProfileMeta, ProfileStore

__all__ = [
    "ActivityEvent",
    "ActivityLog",
    "Analytics",
    "Identity",
    "InvalidImportSource",
    "InvalidProfileField",
    "InvalidProfileName",
    "ProfileError",
    "ProfileExists",
    "ProfileInUse",
    "ProfileInfo",
    "ProfileLock",
    "ProfileLocked",
    "ProfileMeta",
    "ProfileNotFound",
    "ProfileStore",
    "StoreWriteError",
    "UnsafePath",
    "discover",
]
