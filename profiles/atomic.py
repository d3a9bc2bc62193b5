"""Crash- and full-disk-safe file writes: a temp file in the same dir, fsync, ``os.replace``.

A reader sees either the old file or the new one, never a half-written one, and a failed write
(``ENOSPC``, ``EDQUOT``, ``EROFS``, ...) leaves the old file intact and no temp file behind.
"""
from __future__ import annotations

import errno
import json
import logging
import os
import secrets
from pathlib import Path
from typing import Any

from .errors import StoreWriteError

log = logging.getLogger(__name__)

# O_NOFOLLOW is POSIX; where it is missing the temp name is random and fresh anyway.
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        if n <= 0:  # never expected for a regular file; guards against a spin
            raise OSError(errno.EIO, "write returned no progress")
        view = view[n:]


def fsync_dir(path: Path) -> None:
    """Flush a directory entry change (a rename or create) to disk, where the OS allows it."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except OSError:
        return  # Windows cannot open directories; its rename is durable enough for us
    try:
        os.fsync(fd)
    except OSError:
        pass  # some filesystems refuse fsync on a directory; the data file itself is synced
    finally:
        os.close(fd)


def describe(exc: OSError) -> str:
    """A short reason for people, with a plain word for the common full-disk cases."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return "the disk is full"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    return exc.strerror or str(exc)


def write_bytes_atomic(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace ``path`` with ``data`` atomically; raise :class:`StoreWriteError` on any failure."""
    directory = path.parent
    tmp = directory / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = -1
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, mode)
        write_all(fd, data)
        os.fsync(fd)
        os.close(fd)
        fd = -1
        os.replace(tmp, path)  # replaces a symlink at ``path`` itself, never its target
    except OSError as exc:
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        except OSError as cleanup_exc:
            log.warning("could not remove temp file %s: %s", tmp, cleanup_exc)
        raise StoreWriteError(f"could not write {path.name} in {directory.name!r}: {describe(exc)}") from exc
    fsync_dir(directory)


def write_json_atomic(path: Path, payload: Any) -> None:
    """Write ``payload`` as pretty JSON to ``path`` atomically (see :func:`write_bytes_atomic`)."""
    data = (json.dumps(payload, indent=2, ensure_ascii=False) + "\n").encode("utf-8")
    write_bytes_atomic(path, data)
