"""The file-backed profile store: one Chrome user-data dir per profile, plus ``profile.json``.

Layout: ``<base_dir>/<name>/`` is the user-data dir Chrome runs on (``--user-data-dir``) and
holds ``profile.json`` (``id``, ``name``, ``description``, ``useWhen``, ``created``, ``source``,
``sourcePath``). The directory name is the source of truth for a profile's name and id; the
store's own scratch dirs (``.import-*``, ``.trash-*``) start with a dot, which no profile name may.

Every change that other processes can observe is a single rename: a new profile appears whole
(create writes into a fresh dir; import copies into a temp dir first), a deleted one vanishes
whole (renamed to a trash dir, then removed), and ``profile.json`` is replaced atomically.
"""
from __future__ import annotations

import builtins
import errno
import logging
import os
import secrets
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .atomic import describe, fsync_dir, write_json_atomic
from .copying import copy_user_data_dir
from .errors import (
    InvalidImportSource,
    InvalidProfileField,
    InvalidProfileName,
    ProfileExists,
    ProfileInUse,
    ProfileLocked,
    ProfileNotFound,
    StoreWriteError,
)
from .identity import IdentityCache
from .locks import (
    LAST_USED_FILE,
    LOCK_FILE,
    ProfileLock,
    chrome_singleton_pid,
    holder_alive,
    read_holder,
)
from .meta import (
    META_FILE,
    ProfileInfo,
    ProfileMeta,
    check_text,
    read_meta,
)
from .names import is_valid_name, looks_like_id, profile_id, validate_name
from .paths import child_dir, inside_profile
from .times import iso_from_timestamp, utc_now_iso
from .usage import DEFAULT_CHANGED_AFTER_S, DEFAULT_TTL_S, UsageCache

log = logging.getLogger(__name__)

MAX_OWNER = 200
# What ``reset`` removes: browsing state (sessions, cookies, history, site storage) and caches.
# Preferences, Local State, saved logins and bookmarks stay, and so does the account identity.
RESET_PATHS = tuple(f"Default/{p}" for p in (
    "Sessions", "Session Storage", "Cache", "Code Cache", "GPUCache", "Service Worker",
    "blob_storage", "Cookies", "Cookies-journal", "History", "History-journal", "Visited Links",
    "Local Storage", "IndexedDB",
)) + ("Cache",)
# Files whose newest mtime says when the profile was last used: Chrome rewrites Preferences and
# Local State while it runs and on exit; the lock file exists while pinchtab runs it, and the
# last-used stamp is touched when pinchtab releases it.
LAST_USED_FILES = ("Default/Preferences", "Local State", LOCK_FILE, LAST_USED_FILE)
TRASH_PREFIX = ".trash-"
IMPORT_PREFIX = ".import-"
LEFTOVER_MAX_AGE_S = 3600.0  # an import older than this is a crashed one, not a slow one

class ProfileStore:
    """Profiles under ``base_dir``: create, list, get, update (rename), delete, import, reset, lock.

    Safe to share between threads; several processes may share one ``base_dir`` (changes are
    atomic renames and locks are files). Call :meth:`close` to stop the disk-usage thread.
    """

    def __init__(self, base_dir: Path, *, usage_ttl_s: float = DEFAULT_TTL_S,
                 usage_changed_after_s: float = DEFAULT_CHANGED_AFTER_S) -> None:
        base_dir = Path(base_dir)
        try:
            base_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        except OSError as exc:
            raise StoreWriteError(f"cannot create the profile store dir: {describe(exc)}") from exc
        self.base_dir = base_dir.resolve()
        self._usage = UsageCache(usage_ttl_s, usage_changed_after_s)
        self._identity = IdentityCache()
        # Serialises this process's create/rename/import/delete so their "is the name free"
        # checks and their renames cannot interleave (other processes: the renames still refuse).
        self._mutex = threading.RLock()
        self._warned: set[str] = set()
        self._sweep_leftovers()

    def close(self) -> None:
        """Stop the background disk-usage walker."""
        self._usage.close()

    # --- reading -----------------------------------------------------------------------------
    def list(self, refresh: bool = False) -> builtins.list[ProfileInfo]:
        """Every profile, sorted by name; ``refresh`` walks every dir now for exact disk usage.

        Without ``refresh`` the disk usage is the cached figure (``None`` before the first walk)
        and ``diskUsageStale`` is True while a background walk is pending. A profile whose
        ``profile.json`` is broken is still listed, with ``error`` set.
        """
        result: builtins.list[ProfileInfo] = []
        with self._usage.deferred():
            for name in sorted(self._names(warn=True), key=lambda n: (n.lower(), n)):
                info = self._info(name, self.base_dir / name, refresh)
                if info is not None:  # None: deleted behind our back mid-list
                    result.append(info)
        return result

    def get(self, id_or_name: str) -> ProfileInfo:
        """One profile by id or name; raises :class:`ProfileNotFound`."""
        name, path = self._find(id_or_name)
        return self._info_or_404(name, path)

    # --- changing ----------------------------------------------------------------------------
    def create(self, name: str, description: str = "", use_when: str = "") -> ProfileInfo:
        """Create an empty profile; raises :class:`ProfileExists` if the name is taken."""
        name = validate_name(name)
        description = check_text("description", description)
        use_when = check_text("useWhen", use_when)
        with self._mutex:
            path = child_dir(self.base_dir, name)
            self._check_free(name)
            try:
                os.mkdir(path, 0o700)
            except FileExistsError as exc:
                raise ProfileExists(f"profile {name!r} already exists") from exc
            except OSError as exc:
                raise StoreWriteError(f"could not create profile {name!r}: {describe(exc)}") from exc
            meta: ProfileMeta = {"id": profile_id(name), "name": name, "description": description,
                                 "useWhen": use_when, "created": utc_now_iso(), "source": "created"}
            try:
                write_json_atomic(path / META_FILE, meta)
            except StoreWriteError:
                shutil.rmtree(path, ignore_errors=True)  # no half-made profile left listed
                raise
            fsync_dir(self.base_dir)
        log.info("profile %s created", name)
        return self._info_or_404(name, path)

    def update(self, id_or_name: str, description: str | None = None, use_when: str | None = None,
               name: str | None = None) -> ProfileInfo:
        """Change the description, useWhen and/or name; a rename moves the dir and changes the id.

        Raises :class:`ProfileExists` when the new name is taken and :class:`ProfileInUse` when
        renaming a profile that is locked or open in Chrome. A broken ``profile.json`` is
        rewritten from what is known.
        """
        new_description = None if description is None else check_text("description", description)
        new_use_when = None if use_when is None else check_text("useWhen", use_when)
        new_name = None if name is None else validate_name(name)
        with self._mutex:
            current, path = self._find(id_or_name)
            meta, error = read_meta(current, path)
            if error:
                log.warning("profile %s: %s; rewriting it", current, error)
            if new_description is not None:
                meta["description"] = new_description
            if new_use_when is not None:
                meta["useWhen"] = new_use_when
            if new_name is not None and new_name != current:
                path = self._rename(current, path, new_name, meta)
                current = new_name
            else:
                write_json_atomic(path / META_FILE, meta)
        return self._info_or_404(current, path)

    def delete(self, id_or_name: str) -> None:
        """Delete a profile and everything in it; raises :class:`ProfileInUse` while it runs."""
        with self._mutex:
            name, path = self._find(id_or_name)
            trash = self.base_dir / f"{TRASH_PREFIX}{secrets.token_hex(6)}"
            with self._exclusive(name, path, "delete") as held:
                try:
                    os.rename(path, trash)  # the profile vanishes in one step
                except FileNotFoundError as exc:
                    raise ProfileNotFound(f"profile {name!r} does not exist") from exc
                except OSError as exc:
                    raise StoreWriteError(f"could not delete profile {name!r}: {describe(exc)}") from exc
                held._forget()
            fsync_dir(self.base_dir)
            self._forget_caches(path)
        shutil.rmtree(trash, onerror=_log_rmtree_error)
        log.info("profile %s deleted", name)

    def reset(self, id_or_name: str) -> ProfileInfo:
        """Remove sessions, cookies, history, site storage and caches; keep the profile itself.

        Raises :class:`ProfileInUse` while it runs and :class:`UnsafePath` when ``Default`` (or
        a parent of a target) is a symlink leading out of the profile.
        """
        name, path = self._find(id_or_name)
        removed: builtins.list[str] = []
        with self._exclusive(name, path, "reset"):
            # Prove every target safe before removing any, so a refusal changes nothing.
            targets = [(rel, inside_profile(path, rel)) for rel in RESET_PATHS]
            for rel, target in targets:
                try:
                    st = os.lstat(target)
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise StoreWriteError(f"could not reset profile {name!r}: {describe(exc)}") from exc
                try:
                    if stat.S_ISDIR(st.st_mode):
                        shutil.rmtree(target)
                    else:
                        os.unlink(target)  # files and symlinks alike: never follow a link
                except FileNotFoundError:
                    continue
                except OSError as exc:
                    raise StoreWriteError(f"could not reset profile {name!r} ({rel}): {describe(exc)}") from exc
                removed.append(rel)
        self._usage.invalidate(path)
        log.info("profile %s reset: removed %s", name, ", ".join(removed) or "nothing")
        return self._info_or_404(name, path)

    def import_(self, name: str, source_path: str | os.PathLike[str], description: str = "",
                use_when: str = "") -> ProfileInfo:
        """Copy the Chrome user-data dir at ``source_path`` into a new profile ``name``.

        The source must be an absolute path to a directory holding ``Local State`` or
        ``Default/Preferences``, and must not be in use. Caches, Chrome's lock files and symlinks
        are left out. The copy lands in a temp dir and is renamed into place, so a half-copied
        profile is never visible; on failure (a full disk) nothing is left behind.
        """
        name = validate_name(name)
        description = check_text("description", description)
        use_when = check_text("useWhen", use_when)
        target = child_dir(self.base_dir, name)
        source = self._check_source(source_path)
        with self._mutex:
            self._check_free(name)  # before the copy, which may take a while
        self._check_source_idle(source)
        try:
            tmp = Path(tempfile.mkdtemp(prefix=IMPORT_PREFIX, dir=self.base_dir))
        except OSError as exc:
            raise StoreWriteError(f"could not import profile {name!r}: {describe(exc)}") from exc
        try:
            stats = copy_user_data_dir(source, tmp)
            meta: ProfileMeta = {"id": profile_id(name), "name": name, "description": description,
                                 "useWhen": use_when, "created": utc_now_iso(), "source": "imported",
                                 "sourcePath": os.fspath(source)}
            write_json_atomic(tmp / META_FILE, meta)
            with self._mutex:
                self._check_free(name)
                self._rename_into_free(tmp, target, name)
            fsync_dir(self.base_dir)
        except OSError as exc:
            if isinstance(exc, StoreWriteError):
                raise
            raise StoreWriteError(f"could not import profile {name!r}: {describe(exc)}") from exc
        finally:
            if os.path.lexists(tmp):
                shutil.rmtree(tmp, onerror=_log_rmtree_error)
        log.info("profile %s imported: %d files, %d bytes copied, %d skipped, %d unreadable",
                 name, stats.files, stats.bytes, stats.skipped, len(stats.unreadable))
        return self._info_or_404(name, target)

    def lock(self, id_or_name: str, owner: str) -> ProfileLock:
        """Lock the profile for ``owner`` (e.g. ``"bridge:9867"``) and return the held lock.

        Use it as a context manager or call ``release()``. Raises :class:`ProfileLocked` naming
        the holder when a live process holds it (or a live Chrome has it open); a lock left by a
        dead process is taken over.
        """
        if not isinstance(owner, str) or not owner.strip():
            raise InvalidProfileField("lock owner must be a non-empty string")
        name, path = self._find(id_or_name)
        return ProfileLock(path, name, owner[:MAX_OWNER]).acquire()

    # --- internals: lookup -------------------------------------------------------------------
    def _names(self, warn: bool = False) -> builtins.list[str]:
        """Names of the profile dirs now in the store (no scratch dirs, no symlinks)."""
        try:
            entries = list(os.scandir(self.base_dir))
        except FileNotFoundError:
            return []
        except OSError as exc:
            log.error("cannot read the profile store: %s", exc)
            return []
        names = []
        for entry in entries:
            if entry.name.startswith(".") or not is_valid_name(entry.name):
                continue
            try:
                if entry.is_symlink():
                    if warn and entry.name not in self._warned:
                        self._warned.add(entry.name)
                        log.warning("profile store: %r is a symlink; ignored", entry.name)
                    continue
                if entry.is_dir(follow_symlinks=False):
                    names.append(entry.name)
            except OSError:
                continue
        return names

    def _find(self, id_or_name: str) -> tuple[str, Path]:
        if not isinstance(id_or_name, str) or not id_or_name:
            raise InvalidProfileName("a profile id or name is required")
        if is_valid_name(id_or_name):
            path = child_dir(self.base_dir, id_or_name)
            if path.is_dir():
                return id_or_name, path
        if looks_like_id(id_or_name):
            for name in self._names():
                if profile_id(name) == id_or_name:
                    return name, child_dir(self.base_dir, name)
        validate_name(id_or_name)  # a traversal attempt is a bad request, not a missing profile
        raise ProfileNotFound(f"no profile {id_or_name!r}")

    def _check_free(self, name: str, ignore: str | None = None) -> None:
        """Refuse a name that exists, differs only in case (the store may move to macOS or
        Windows), or whose id collides with an existing profile's."""
        wanted_id = profile_id(name)
        for existing in self._names():
            if existing == ignore:
                continue
            if existing.lower() == name.lower():
                raise ProfileExists(f"profile {existing!r} already exists")
            if profile_id(existing) == wanted_id:
                raise ProfileExists(f"profile {existing!r} already has the id {wanted_id}")

    # --- internals: state --------------------------------------------------------------------
    def _last_used(self, path: Path) -> str | None:
        newest = 0.0
        for rel in LAST_USED_FILES:
            try:
                newest = max(newest, os.stat(path / rel, follow_symlinks=False).st_mtime)
            except OSError:
                continue
        return iso_from_timestamp(newest) if newest else None

    def _info(self, name: str, path: Path, refresh: bool) -> ProfileInfo | None:
        try:
            meta, error = read_meta(name, path)
        except ProfileNotFound:
            return None
        holder = read_holder(path / LOCK_FILE)
        held = holder is not None and holder_alive(holder)
        chrome = chrome_singleton_pid(path)
        last_used = self._last_used(path)
        if refresh:
            size: int | None = self._usage.measure(path, last_used)
            stale = False
        else:
            usage = self._usage.peek(path, last_used)
            size, stale = usage.bytes, usage.stale
        identity = self._identity.get(path)
        if not path.is_dir():
            return None
        info: ProfileInfo = {
            "id": meta["id"], "name": name, "path": os.fspath(path),
            "description": meta["description"], "useWhen": meta["useWhen"],
            "created": meta["created"], "source": meta["source"],
            "pathExists": True,
            "diskUsage": size,
            "diskUsageMB": None if size is None else round(size / (1024 * 1024), 2),
            "diskUsageStale": stale,
            "lastUsed": last_used,
            "running": held or chrome is not None,
            "lockedBy": holder.info() if held and holder is not None else None,
            "chromePid": chrome,
            "accountEmail": identity["accountEmail"], "accountName": identity["accountName"],
            "hasAccount": identity["hasAccount"], "chromeProfileName": identity["chromeProfileName"],
            "identitySource": identity["source"],
            "consentedPrimaryAccount": identity["consentedPrimaryAccount"],
        }
        if "sourcePath" in meta:
            info["sourcePath"] = meta["sourcePath"]
        if error:
            info["error"] = error
        return info

    def _info_or_404(self, name: str, path: Path) -> ProfileInfo:
        info = self._info(name, path, refresh=False)
        if info is None:
            raise ProfileNotFound(f"profile {name!r} does not exist")
        return info

    def _forget_caches(self, path: Path) -> None:
        self._usage.invalidate(path)
        self._identity.forget(path)

    # --- internals: changing -----------------------------------------------------------------
    @contextmanager
    def _exclusive(self, name: str, path: Path, action: str) -> Iterator[ProfileLock]:
        """Hold the profile's lock for a store operation; a held lock means ProfileInUse."""
        held = ProfileLock(path, name, f"pinchtab store ({action})", stamp_last_use=False)
        try:
            held.acquire()
        except ProfileLocked as exc:
            raise ProfileInUse(name, exc.holder) from exc
        try:
            yield held
        finally:
            held.release()

    def _rename_into_free(self, src: Path, target: Path, name: str) -> None:
        """Rename ``src`` to ``target``, refusing (never replacing) an existing ``target``.

        ``os.rename`` would silently replace an empty directory, so the target is first reserved
        with ``mkdir`` (which fails if anything is there) and the rename then replaces exactly
        that empty reservation, atomically (POSIX).
        """
        try:
            os.mkdir(target, 0o700)
        except FileExistsError as exc:
            raise ProfileExists(f"profile {name!r} already exists") from exc
        except OSError as exc:
            raise StoreWriteError(f"could not create profile {name!r}: {describe(exc)}") from exc
        try:
            os.rename(src, target)
        except OSError as exc:
            try:
                os.rmdir(target)
            except OSError:
                pass
            raise StoreWriteError(f"could not move profile {name!r} into place: {describe(exc)}") from exc

    def _rename(self, current: str, path: Path, new_name: str, meta: ProfileMeta) -> Path:
        new_path = child_dir(self.base_dir, new_name)
        self._check_free(new_name, ignore=current)
        with self._exclusive(current, path, "rename") as held:
            self._rename_into_free(path, new_path, new_name)
            held._moved(new_path, new_name)
            meta["id"], meta["name"] = profile_id(new_name), new_name
            try:
                write_json_atomic(new_path / META_FILE, meta)
            except StoreWriteError:
                # Put the dir back so the old name, id and profile.json all still agree.
                try:
                    os.rename(new_path, path)
                    held._moved(path, current)
                except OSError as exc:
                    # The dir name is the truth on read, so the profile stays usable as new_name.
                    log.error("profile %s: could not undo the rename to %s: %s", current, new_name, exc)
                raise
        fsync_dir(self.base_dir)
        self._forget_caches(path)
        log.info("profile %s renamed to %s", current, new_name)
        return new_path

    def _check_source(self, source_path: str | os.PathLike[str]) -> Path:
        """The resolved import source, once it is proven to be a usable Chrome user-data dir."""
        try:
            raw = os.fspath(source_path)
        except TypeError as exc:
            raise InvalidImportSource("the source path must be a string") from exc
        if not isinstance(raw, str) or not raw or "\x00" in raw:
            raise InvalidImportSource("the source path must be a non-empty path without NUL characters")
        given = Path(raw)
        if not given.is_absolute():
            raise InvalidImportSource(f"the source path {raw!r} must be absolute")
        try:
            source = given.resolve(strict=True)
        except FileNotFoundError as exc:
            raise InvalidImportSource(f"the source path {raw!r} does not exist") from exc
        except RuntimeError as exc:  # Python 3.11 reports a symlink loop this way
            raise InvalidImportSource(f"the source path {raw!r} is a symlink loop") from exc
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                raise InvalidImportSource(f"the source path {raw!r} is a symlink loop") from exc
            raise InvalidImportSource(f"the source path {raw!r} cannot be read: {exc.strerror}") from exc
        if not source.is_dir():
            raise InvalidImportSource(f"the source path {raw!r} is not a directory")
        # Copying the store (or a dir holding it) into itself would recurse into its own temp dir.
        if self.base_dir.is_relative_to(source):
            raise InvalidImportSource(f"the source path {raw!r} contains the profile store")
        if source.is_relative_to(self.base_dir):
            first = source.relative_to(self.base_dir).parts[0]
            if not is_valid_name(first):
                raise InvalidImportSource(f"the source path {raw!r} is inside the store's scratch space")
        if not ((source / "Local State").is_file() or (source / "Default" / "Preferences").is_file()):
            hint = ""
            if (source / "Preferences").is_file():
                hint = "; it looks like one profile inside a user-data dir: use the folder above it"
            raise InvalidImportSource(
                f"{raw!r} is not a Chrome user-data dir: it has neither 'Local State' nor 'Default/Preferences'{hint}"
            )
        return source

    def _check_source_idle(self, source: Path) -> None:
        """Refuse to copy a profile that a browser is writing to (its databases would tear)."""
        chrome = chrome_singleton_pid(source)
        if chrome is not None:
            raise ProfileInUse(source.name, f"a Chrome process (pid {chrome})")
        holder = read_holder(source / LOCK_FILE)
        if holder is not None and holder_alive(holder):
            raise ProfileInUse(source.name, holder.describe())

    def _sweep_leftovers(self) -> None:
        """Remove trash and crashed imports that an earlier process left behind."""
        now = time.time()
        try:
            entries = list(os.scandir(self.base_dir))
        except OSError:
            return
        for entry in entries:
            try:
                if not entry.is_dir(follow_symlinks=False):
                    continue
                old_import = (entry.name.startswith(IMPORT_PREFIX)
                              and now - entry.stat(follow_symlinks=False).st_mtime > LEFTOVER_MAX_AGE_S)
            except OSError:
                continue
            if entry.name.startswith(TRASH_PREFIX) or old_import:
                log.info("profile store: removing leftover %s", entry.name)
                shutil.rmtree(entry.path, ignore_errors=True)


def _log_rmtree_error(func: Any, path: str, exc_info: Any) -> None:
    log.warning("could not remove %s: %s", os.path.basename(path), exc_info[1])
