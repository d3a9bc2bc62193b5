"""Errors raised by the profile store. The HTTP layer maps each to one status and code."""
from __future__ import annotations


class ProfileError(Exception):
    """Base class of every profile-store error."""


class InvalidProfileName(ProfileError, ValueError):
    """A profile name is empty, too long, or not one safe path component."""


class InvalidProfileField(ProfileError, ValueError):
    """A description, useWhen or lock owner is not a string or is too long."""


class ProfileNotFound(ProfileError, LookupError):
    """No profile has that id or name (or its directory vanished)."""


class ProfileExists(ProfileError):
    """A profile with that name (or id) already exists."""


class ProfileLocked(ProfileError):
    """Someone else holds the profile's lock; ``holder`` says who."""

    def __init__(self, name: str, holder: str, pid: int | None = None, owner: str = "", since: str = "") -> None:
        super().__init__(f"profile {name!r} is locked by {holder}")
        self.name = name
        self.holder = holder
        self.pid = pid
        self.owner = owner
        self.since = since


class ProfileInUse(ProfileError):
    """The profile is locked or Chrome runs on it, so it cannot be renamed, reset or deleted."""

    def __init__(self, name: str, holder: str) -> None:
        super().__init__(f"profile {name!r} is in use by {holder}; stop it first")
        self.name = name
        self.holder = holder


class UnsafePath(ProfileError):
    """A path would leave the store's base directory (traversal or a symlink pointing out)."""


class InvalidImportSource(ProfileError, ValueError):
    """An import source is missing, not a directory, or not a Chrome user-data dir."""


class StoreWriteError(ProfileError, OSError):
    """Writing to the store failed (disk full, read-only, ...); the old state is intact."""
