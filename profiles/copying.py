"""Copying a Chrome user-data dir into the store, without its caches, locks or symlinks.

Caches are skipped because Chrome rebuilds them and they are most of a profile's size; Chrome's
``Singleton*`` files are skipped because they would make the copy look like it is running;
symlinks and special files are skipped because a copied profile must not point outside the
store. Read errors skip the one file (a person's profile may hold a file we cannot read);
write errors (a full disk) propagate so the import fails as a whole.
"""
from __future__ import annotations

import logging
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from .atomic import write_all

log = logging.getLogger(__name__)

SKIP_DIRS = frozenset({
    "Cache", "Code Cache", "GPUCache", "ShaderCache", "GrShaderCache", "GraphiteDawnCache",
    "DawnCache", "DawnGraphiteCache", "DawnWebGPUCache", "CacheStorage", "ScriptCache",
    "component_crx_cache", "Crashpad",  # crash dumps hold page memory: never copy them
})
SKIP_FILES = frozenset({
    "SingletonLock", "SingletonSocket", "SingletonCookie", "lockfile",
    ".pinchtab.lock", ".pinchtab.last-used",
})
# Only at the top level: the store writes its own profile.json for the new profile.
SKIP_TOP_FILES = frozenset({"profile.json"})

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
_CHUNK = 1024 * 1024


@dataclass(slots=True)
class CopyStats:
    """What a copy did: files and bytes copied, and what it left out."""

    files: int = 0
    bytes: int = 0
    skipped: int = 0
    unreadable: list[str] = field(default_factory=list)


class _SourceReadError(OSError):
    """Reading one source file failed (skip that file, unlike a write failure)."""


def _copy_file(src: str, dst: str, st: os.stat_result) -> int:
    try:
        src_fd = os.open(src, os.O_RDONLY | _NOFOLLOW | _CLOEXEC | _BINARY)
    except OSError as exc:
        raise _SourceReadError(exc.errno, exc.strerror) from exc
    try:
        dst_fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY, 0o600)
        try:
            copied = 0
            while True:
                try:
                    chunk = os.read(src_fd, _CHUNK)
                except OSError as exc:
                    raise _SourceReadError(exc.errno, exc.strerror) from exc
                if not chunk:
                    break
                write_all(dst_fd, chunk)
                copied += len(chunk)
        finally:
            os.close(dst_fd)
    finally:
        os.close(src_fd)
    # Keep mtimes: "last used" of an imported profile is the person's last use of it.
    os.utime(dst, ns=(st.st_atime_ns, st.st_mtime_ns))
    return copied


def copy_user_data_dir(source: Path, target: Path) -> CopyStats:
    """Copy ``source`` into the existing empty dir ``target``; see the module docstring for skips.

    Raises ``OSError`` when writing fails; the caller removes ``target``.
    """
    stats = CopyStats()
    stack: list[tuple[str, str, bool]] = [(os.fspath(source), os.fspath(target), True)]
    while stack:
        src_dir, dst_dir, top = stack.pop()
        try:
            entries = list(os.scandir(src_dir))
        except OSError as exc:
            stats.unreadable.append(os.path.relpath(src_dir, source))
            log.warning("import: cannot read directory %s: %s", os.path.relpath(src_dir, source), exc.strerror)
            continue
        for entry in entries:
            rel = os.path.relpath(entry.path, source)
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                stats.unreadable.append(rel)
                continue
            dst = os.path.join(dst_dir, entry.name)
            if stat.S_ISDIR(st.st_mode):
                if entry.name in SKIP_DIRS:
                    stats.skipped += 1
                    continue
                os.mkdir(dst, 0o700)
                stack.append((entry.path, dst, False))
            elif stat.S_ISREG(st.st_mode):
                if entry.name in SKIP_FILES or (top and entry.name in SKIP_TOP_FILES):
                    stats.skipped += 1
                    continue
                try:
                    stats.bytes += _copy_file(entry.path, dst, st)
                    stats.files += 1
                except _SourceReadError as exc:
                    stats.unreadable.append(rel)
                    log.warning("import: cannot read %s: %s", rel, exc.strerror)
                    _remove_partial(dst)
            else:
                stats.skipped += 1  # symlinks, sockets, fifos, devices
    return stats


def _remove_partial(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except IsADirectoryError:
        shutil.rmtree(path, ignore_errors=True)
