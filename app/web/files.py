"""Files the API writes for its callers: always inside the state dir, always written atomically.

A client-supplied name or path can never leave its folder: it is resolved (symlinks included)
and proven to stay under the folder before anything is written. What a caller asks to have written
(``output=file``, exports, recordings) goes under ``<stateDir>/outputs/`` alone, so no request can
replace the config, saved state, sessions or activity logs that live beside it. A failed write raises
:class:`~app.web.errors.StorageError` (mapped to 507 in one place), naming the file, not where it lives.
"""
from __future__ import annotations

import os
import stat
import tempfile
import time
from pathlib import Path

from .errors import BadRequest, StorageError


def inside(base: Path, requested: str | None, default_name: str) -> Path:
    """``requested`` (relative to ``base``, or absolute but under it) or ``base/default_name``.

    Raises BadRequest ``invalid_output_path`` for anything that would land outside ``base``.
    """
    base = base.expanduser()
    base.mkdir(parents=True, exist_ok=True, mode=0o700)
    root = base.resolve()
    name = requested or default_name
    if "\0" in name:
        raise BadRequest("invalid output path: NUL in path", code="invalid_output_path")
    candidate = Path(name)
    target = (candidate if candidate.is_absolute() else root / candidate).resolve()
    if target == root or root not in target.parents:
        raise BadRequest(f"invalid output path: {name!r} is outside {base.name}/", code="invalid_output_path",
                         details={"field": "path"})
    return target


OUTPUTS = "outputs"   # the one folder of the state dir that callers write to
SAVED_STATES = "sessions"   # saved states (the bridge's /state routes); server mode shares one for every instance
STATE_NAME = r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$"   # a saved state's name: one safe file name, no dot first


def output_file(state_dir: Path, requested: str, default_name: str) -> Path:
    """Where ``output=file`` writes: ``requested`` (taken relative to ``<state_dir>/outputs``) or
    ``default_name``, inside that folder and not a directory (checked before the work, so a bad path
    costs nothing)."""
    target = inside(state_dir / OUTPUTS, requested or None, default_name)
    try:
        is_dir = target.is_dir() or requested.endswith("/")
    except OSError as exc:  # a name too long for the file system, say
        raise BadRequest(f"invalid output path: {exc.strerror or exc}", code="invalid_output_path",
                         details={"field": "path"}) from None
    if is_dir:
        raise BadRequest(f"invalid output path: {requested!r} is a directory", code="invalid_output_path",
                         details={"field": "path"})
    return target


def write_atomic(path: Path, data: bytes, mode: int = 0o600, *, what: str = "") -> int:
    """Write ``data`` to ``path`` via a temp file in the same dir, fsync, rename: never half a file.

    Returns the size written. Raises :class:`StorageError` (naming ``what``, else the file's name)
    when the disk is full or the write fails otherwise; the old file, if any, is left as it was.
    """
    label = what or repr(path.name)
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=str(path.parent))
    except OSError as exc:
        raise StorageError(label, exc) from exc
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException as exc:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        if isinstance(exc, OSError):
            raise StorageError(label, exc) from exc
        raise
    dir_fd = os.open(str(path.parent), os.O_RDONLY)
    try:
        os.fsync(dir_fd)  # the rename itself survives a crash
    finally:
        os.close(dir_fd)
    return len(data)


def entries(folder: Path, pattern: str) -> list[Path]:
    """The files of ``folder`` (resolved) matching ``pattern`` that are really in it: regular files,
    not symlinks (a link could point anywhere), not our temp files (a leading dot)."""
    return [p for p in folder.glob(pattern) if not p.name.startswith(".") and contained(folder, p)]


def contained(folder: Path, path: Path) -> bool:
    """``path`` is a regular file directly in ``folder`` (resolved), and no symlink."""
    try:
        st = path.lstat()
    except OSError:
        return False
    return stat.S_ISREG(st.st_mode) and path.parent == folder


def read_contained(folder: Path, path: Path) -> bytes:
    """The bytes of ``path``, a regular file directly in ``folder``; a symlink swapped in after the
    check is not followed (O_NOFOLLOW). Raises BadRequest ``invalid_output_path`` for anything else,
    OSError when it cannot be read."""
    if not contained(folder, path):
        raise BadRequest(f"invalid path: {path.name!r} is not a file in its folder", code="invalid_output_path")
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S", time.gmtime()) + f"-{int(time.time() * 1000) % 1000:03d}"


def saved(path: Path, size: int, fmt: str) -> dict:
    """The answer for ``output=file``: where it went, its size and format."""
    return {"path": str(path), "size": size, "format": fmt,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
