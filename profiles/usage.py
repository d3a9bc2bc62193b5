"""Disk usage of profile dirs, cached and refreshed off the request path.

A profile's caches can hold hundreds of thousands of files, so walking every profile on every
list would make listing slow. Sizes are cached in memory per path with the time they were taken;
a missing or expired size is queued for one background thread (a bounded pool of one: walks are
I/O-bound and parallel walks only fight over the disk), and the list reports the cached value
with ``stale=True`` until the walk lands.
"""
from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

DEFAULT_TTL_S = 300.0
# A profile that was used since its last walk is re-walked sooner than the TTL, but not more
# often than this: a running Chrome touches its files constantly.
DEFAULT_CHANGED_AFTER_S = 30.0


def directory_size(path: Path) -> int:
    """Total size in bytes of the regular files under ``path``; symlinks are not followed."""
    total = 0
    stack = [os.fspath(path)]
    while stack:
        current = stack.pop()
        try:
            it = os.scandir(current)
        except OSError:
            continue  # vanished or unreadable mid-walk: count what we can see
        with it:
            for entry in it:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        stack.append(entry.path)
                    elif entry.is_file(follow_symlinks=False):
                        total += entry.stat(follow_symlinks=False).st_size
                except OSError:
                    continue
    return total


@dataclass(frozen=True, slots=True)
class Usage:
    """A cached size: ``bytes`` is None when never measured; ``stale`` while a walk is pending."""

    bytes: int | None
    stale: bool


@dataclass(slots=True)
class _Entry:
    bytes: int
    taken_at: float  # time.monotonic()
    version: object  # what the caller said the dir looked like (e.g. its last-used time)


class UsageCache:
    """Per-path disk usage with lazy background refresh (one worker thread, one queue)."""

    def __init__(self, ttl_s: float = DEFAULT_TTL_S, changed_after_s: float = DEFAULT_CHANGED_AFTER_S) -> None:
        self.ttl_s = ttl_s
        self.changed_after_s = changed_after_s
        self._entries: dict[str, _Entry] = {}
        self._pending: set[str] = set()
        # A generation per path, bumped on invalidate, so a walk that started before a
        # delete or reset cannot store its outdated figure afterwards.
        self._generation: dict[str, int] = {}
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[tuple[str, object] | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._closed = False
        self._deferred: list[tuple[str, object]] | None = None

    def peek(self, path: Path, version: object = None) -> Usage:
        """The cached size of ``path``; queues a background walk when missing or expired.

        ``version`` describes the dir cheaply (the store passes its last-used time): a size taken
        at another version expires after ``changed_after_s`` instead of the full TTL.
        """
        key = os.fspath(path)
        now = time.monotonic()
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                expired = True
            else:
                age = now - entry.taken_at
                expired = age > self.ttl_s or (entry.version != version and age > self.changed_after_s)
            if expired and key not in self._pending and not self._closed:
                self._pending.add(key)
                if self._deferred is not None:
                    self._deferred.append((key, version))
                else:
                    self._queue.put((key, version))
                    self._ensure_worker()
            return Usage(entry.bytes if entry else None, key in self._pending)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Queue the walks that ``peek`` asks for only when the block ends.

        A walk is Python-level work: started mid-list it would share the GIL with the list and
        roughly double the list's time, so a list hands its walks over as it returns.
        """
        with self._lock:
            outer = self._deferred is not None
            if not outer:
                self._deferred = []
        try:
            yield
        finally:
            if not outer:
                with self._lock:
                    items, self._deferred = self._deferred or [], None
                    for item in items:
                        self._queue.put(item)
                    if items:
                        self._ensure_worker()

    def measure(self, path: Path, version: object = None) -> int:
        """Walk ``path`` now, in the caller's thread, and cache the result."""
        key = os.fspath(path)
        with self._lock:
            generation = self._generation.get(key, 0)
        size = directory_size(path)
        self._store(key, generation, size, version)
        return size

    def invalidate(self, path: Path) -> None:
        """Forget ``path``'s size (its dir was deleted, moved or reset)."""
        key = os.fspath(path)
        with self._lock:
            self._entries.pop(key, None)
            self._generation[key] = self._generation.get(key, 0) + 1

    def idle(self) -> bool:
        """True when no walk is queued or running."""
        with self._lock:
            return not self._pending

    def close(self) -> None:
        """Stop the worker thread after its current walk."""
        with self._lock:
            self._closed = True
            thread = self._thread
        if thread is not None:
            self._queue.put(None)
            thread.join(timeout=5)

    def _store(self, key: str, generation: int, size: int, version: object) -> None:
        with self._lock:
            if self._generation.get(key, 0) == generation:
                self._entries[key] = _Entry(size, time.monotonic(), version)

    def _ensure_worker(self) -> None:
        # Called with self._lock held.
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._work, name="profile-usage", daemon=True)
            self._thread.start()

    def _work(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            key, version = item
            with self._lock:
                generation = self._generation.get(key, 0)
            try:
                # Looked up at call time so a test can count walks by patching the module.
                size = directory_size(Path(key))
            except Exception:  # a walker bug must not kill the only worker
                log.exception("disk usage walk of %s failed", key)
                size = None
            if size is not None:
                self._store(key, generation, size, version)
            with self._lock:
                self._pending.discard(key)
