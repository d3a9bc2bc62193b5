"""Profile locks: who runs a profile, and a lock file so two browsers never share one.

``<profile>/.pinchtab.lock`` holds ``{"pid", "owner", "since", "host", "token"}``. It is created
with ``O_CREAT | O_EXCL``; a lock whose pid is dead is stale and is taken over with a fresh file
and ``os.replace``, then re-read to prove the takeover won. Deciding "stale" and replacing must not
interleave between two acquirers, so every acquire and release runs under a short ``flock`` on
the profile directory itself (no extra file; the kernel drops it if the process dies).

Chrome's own ``SingletonLock`` (a symlink whose target is ``hostname-pid``) also counts: a
profile that a live Chrome on this host has open is running, whoever started it.
"""
from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TypedDict

from .atomic import write_all
from .errors import ProfileLocked, ProfileNotFound, StoreWriteError
from .times import utc_now_iso

try:
    import fcntl
except ImportError:  # Windows: no flock; the O_EXCL create still guards the common case
    fcntl = None  # type: ignore[assignment]

log = logging.getLogger(__name__)

LOCK_FILE = ".pinchtab.lock"
LAST_USED_FILE = ".pinchtab.last-used"
CHROME_SINGLETON = "SingletonLock"
# A lock file that exists but does not parse is being written by a writer outside our guard
# (or was cut short by a crash). Treat it as held for this long, then as stale.
UNPARSABLE_GRACE_S = 5.0
_MAX_LOCK_BYTES = 4096
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


class LockInfo(TypedDict):
    """Who holds a profile's pinchtab lock, as the API shows it."""

    pid: int | None
    owner: str
    since: str


@dataclass(frozen=True, slots=True)
class LockHolder:
    """The parsed content of a lock file (``pid`` is None when the file did not parse)."""

    pid: int | None
    owner: str = ""
    since: str = ""
    host: str = ""
    token: str = ""
    age_s: float = 0.0

    def describe(self) -> str:
        """A short phrase naming the holder, for error messages."""
        if self.pid is None:
            return "an unknown holder (unreadable lock file)"
        who = self.owner or "an unnamed owner"
        return f"{who} (pid {self.pid}{', since ' + self.since if self.since else ''})"

    def info(self) -> LockInfo:
        """The holder as an API payload."""
        return {"pid": self.pid, "owner": self.owner, "since": self.since}


def _zombie(pid: int) -> bool:
    """A process that has exited but was not reaped yet: dead for a lock's purposes."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] == b"Z"
    except (OSError, IndexError):
        return False


def pid_alive(pid: int) -> bool:
    """True when a live process with ``pid`` exists on this machine (a zombie is not alive)."""
    if pid <= 0:
        return False
    if pid == os.getpid():
        return True
    if os.name == "nt":
        # os.kill on Windows terminates the process whatever the signal; never probe that way.
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, but belongs to another user
        return not _zombie(pid)
    except OSError:
        return False
    return not _zombie(pid)


def read_holder(lock_path: Path) -> LockHolder | None:
    """The lock file's holder, ``None`` when there is no lock file."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError:
        # A symlink (ELOOP) or an unreadable file: present but not ours to parse.
        return LockHolder(pid=None, age_s=UNPARSABLE_GRACE_S + 1)
    try:
        st = os.fstat(fd)
        raw = os.read(fd, _MAX_LOCK_BYTES)
    except OSError:
        return LockHolder(pid=None, age_s=UNPARSABLE_GRACE_S + 1)
    finally:
        os.close(fd)
    age = max(0.0, time.time() - st.st_mtime)
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return LockHolder(pid=None, age_s=age)
    if not isinstance(data, dict):
        return LockHolder(pid=None, age_s=age)
    pid = data.get("pid")
    if not isinstance(pid, int) or isinstance(pid, bool):
        return LockHolder(pid=None, age_s=age)

    def text(key: str) -> str:
        value = data.get(key)
        return value[:200] if isinstance(value, str) else ""

    return LockHolder(pid=pid, owner=text("owner"), since=text("since"), host=text("host"),
                      token=text("token"), age_s=age)


def holder_alive(holder: LockHolder) -> bool:
    """True when the holder may still be running (unknown counts as alive until proven stale)."""
    if holder.pid is None:
        return holder.age_s < UNPARSABLE_GRACE_S
    if holder.host and holder.host != socket.gethostname():
        return True  # another machine's process (a shared disk): we cannot probe it, so respect it
    return pid_alive(holder.pid)


def chrome_singleton_pid(profile_dir: Path) -> int | None:
    """The pid of a live Chrome on this host that holds ``SingletonLock`` in ``profile_dir``."""
    try:
        target = os.readlink(profile_dir / CHROME_SINGLETON)
    except OSError:
        return None
    host, sep, pid_text = target.rpartition("-")
    if not sep or not pid_text.isdigit() or host != socket.gethostname():
        return None
    pid = int(pid_text)
    return pid if pid_alive(pid) else None


@contextmanager
def _guard(directory: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``directory`` (best effort where flock is unavailable)."""
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _CLOEXEC)
    except FileNotFoundError as exc:
        raise ProfileNotFound(f"profile dir {directory.name!r} does not exist") from exc
    except OSError:
        yield  # cannot open a directory here (Windows): O_EXCL alone guards the common case
        return
    try:
        if fcntl is not None:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
            except OSError as exc:  # e.g. NFS without flock on read-only fds
                log.debug("flock on %s unavailable: %s", directory, exc)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock


class ProfileLock:
    """An exclusive claim on one profile dir; a context manager that releases on exit.

    ``ProfileStore.lock`` returns one already acquired; ``release`` is idempotent.
    """

    def __init__(self, profile_dir: Path, name: str, owner: str, *, stamp_last_use: bool = True) -> None:
        self.path = profile_dir
        self.name = name
        self.owner = owner
        # The store's own short locks (delete, rename, reset) are not a use of the profile.
        self._stamp_last_use = stamp_last_use
        self.since = ""
        self._token = ""
        self._held = False

    @property
    def held(self) -> bool:
        """True between a successful ``acquire`` and ``release``."""
        return self._held

    @property
    def lock_file(self) -> Path:
        """The lock file's path (it moves with the profile dir)."""
        return self.path / LOCK_FILE

    def acquire(self) -> ProfileLock:
        """Take the lock or raise :class:`ProfileLocked` naming the holder."""
        if self._held:
            return self
        with _guard(self.path):
            # A few rounds: a lock file can vanish between our failed create and our read.
            for _ in range(3):
                if self._try_acquire():
                    self._held = True
                    log.debug("profile %s locked by %s", self.name, self.owner)
                    return self
        raise ProfileLocked(self.name, "a holder that keeps changing")

    def _content(self) -> bytes:
        self._token = secrets.token_hex(8)
        self.since = utc_now_iso()
        body = {"pid": os.getpid(), "owner": self.owner, "since": self.since,
                "host": socket.gethostname(), "token": self._token}
        return json.dumps(body).encode("utf-8")

    def _try_acquire(self) -> bool:
        holder = read_holder(self.lock_file)
        if holder is not None and holder_alive(holder):
            raise ProfileLocked(self.name, holder.describe(), holder.pid, holder.owner, holder.since)
        chrome = chrome_singleton_pid(self.path)
        if chrome is not None:
            raise ProfileLocked(self.name, f"a Chrome process (pid {chrome})", chrome, "chrome")
        if holder is None:
            return self._create()
        log.warning("profile %s: taking over the stale lock of %s", self.name, holder.describe())
        return self._take_over()

    def _create(self) -> bool:
        data = self._content()
        try:
            fd = os.open(self.lock_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644)
        except FileExistsError:
            return False  # someone outside our guard won the race; look again
        except FileNotFoundError as exc:
            raise ProfileNotFound(f"profile dir {self.name!r} does not exist") from exc
        except OSError as exc:
            raise StoreWriteError(f"could not create the lock of profile {self.name!r}: {exc.strerror}") from exc
        try:
            write_all(fd, data)
        except OSError as exc:
            os.close(fd)
            _unlink_quietly(self.lock_file)
            raise StoreWriteError(f"could not write the lock of profile {self.name!r}: {exc.strerror}") from exc
        os.close(fd)
        return True

    def _take_over(self) -> bool:
        tmp = self.path / f"{LOCK_FILE}.{secrets.token_hex(6)}.tmp"
        data = self._content()
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o644)
            try:
                write_all(fd, data)
            finally:
                os.close(fd)
            os.replace(tmp, self.lock_file)
        except OSError as exc:
            _unlink_quietly(tmp)
            raise StoreWriteError(f"could not take over the lock of profile {self.name!r}: {exc.strerror}") from exc
        # Re-check: an acquirer outside our guard may have replaced it in the same instant.
        now = read_holder(self.lock_file)
        return now is not None and now.token == self._token and now.pid == os.getpid()

    def release(self) -> None:
        """Give the lock up (only removes the lock file if it is still ours) and stamp last use."""
        if not self._held:
            return
        self._held = False
        try:
            with _guard(self.path):
                holder = read_holder(self.lock_file)
                if holder is not None and holder.token == self._token:
                    _unlink_quietly(self.lock_file)
                else:
                    log.warning("profile %s: lock was no longer ours at release", self.name)
                if self._stamp_last_use:
                    _touch(self.path / LAST_USED_FILE)
        except ProfileNotFound:
            pass  # the profile dir is gone (deleted while held): nothing to release
        log.debug("profile %s unlocked by %s", self.name, self.owner)

    def _moved(self, new_dir: Path, new_name: str) -> None:
        """The store renamed the dir while holding this lock; follow it."""
        self.path = new_dir
        self.name = new_name

    def _forget(self) -> None:
        """The store is deleting the dir while holding this lock; there is nothing to release."""
        self._held = False

    def __enter__(self) -> ProfileLock:
        return self.acquire()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()

    def __repr__(self) -> str:
        return f"ProfileLock(name={self.name!r}, owner={self.owner!r}, held={self._held})"


def _unlink_quietly(path: Path) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not remove %s: %s", path.name, exc)


def _touch(path: Path) -> None:
    # Best effort: a full disk must not turn a clean release into an error.
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o644)
        try:
            # Through the descriptor: the name could be swapped for a symlink after the open.
            if os.utime in os.supports_fd:
                os.utime(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        log.debug("could not stamp last use in %s: %s", path.parent.name, exc)
