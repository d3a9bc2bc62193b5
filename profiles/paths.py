"""Proofs that a path stays inside a directory, symlinks resolved.

Every path the store touches is built from a validated name *and* checked here, so a symlink
planted in the store (a profile dir, ``Default``, ``profile.json``) cannot make it read, write or
delete anything outside its base dir.
"""
from __future__ import annotations

import os
from pathlib import Path

from .errors import UnsafePath


def is_inside(root: Path, path: Path) -> bool:
    """True when ``path``, symlinks resolved, is ``root`` or below it (``root`` must be resolved)."""
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a symlink loop: not provably inside
        return False
    return resolved == root or resolved.is_relative_to(root)


def child_dir(base: Path, name: str) -> Path:
    """``base / name`` once proven to be a direct child of ``base`` and not a symlink.

    ``base`` must already be resolved; ``name`` must already be a validated profile name (this is
    the second line of defence, not the first).
    """
    path = base / name
    if os.path.islink(path):
        raise UnsafePath(f"profile dir {name!r} is a symlink; refusing to use it")
    try:
        resolved = path.resolve()
    except (OSError, RuntimeError) as exc:
        raise UnsafePath(f"profile dir {name!r} cannot be resolved: {exc}") from exc
    if resolved.parent != base:
        raise UnsafePath(f"profile dir {name!r} would leave the profile store")
    return path


def inside_profile(profile_dir: Path, relative: str) -> Path:
    """``profile_dir / relative`` once proven not to escape the profile through a symlink.

    The last component may itself be a symlink (the caller then unlinks rather than follows it);
    every parent component must resolve inside the profile.
    """
    root = profile_dir.resolve()
    path = profile_dir / relative
    if not is_inside(root, path.parent):
        raise UnsafePath(f"{relative!r} leaves the profile dir through a symlink")
    return path
