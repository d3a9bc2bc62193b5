"""Disk usage: cached, computed off the list's thread, never a walk of every cache per list."""
from __future__ import annotations

import threading
from pathlib import Path

import pytest
from support.waits import wait_until

import profiles.usage as usage
from profiles.store import ProfileStore

N_PROFILES = 200
BIG_FILES = 400
FILE_BYTES = 1000


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """Every call of the walker, as (thread name, dir name)."""
    calls: list[tuple[str, str]] = []
    real = usage.directory_size

    def counting(path: Path) -> int:
        calls.append((threading.current_thread().name, Path(path).name))
        return real(path)

    monkeypatch.setattr(usage, "directory_size", counting)
    return calls


def make_many(store: ProfileStore, base: Path) -> int:
    """200 profiles, one of them with a big cache; returns the big one's exact size."""
    for i in range(N_PROFILES):
        store.create(f"p{i:03d}")
    cache = base / "p007" / "Default" / "Cache" / "Cache_Data"
    cache.mkdir(parents=True)
    for i in range(BIG_FILES):
        (cache / f"f_{i:06x}").write_bytes(b"x" * FILE_BYTES)
    return BIG_FILES * FILE_BYTES + (base / "p007" / "profile.json").stat().st_size


def test_list_never_walks_on_the_callers_thread(store: ProfileStore, base: Path,
                                                walks: list[tuple[str, str]]) -> None:
    big = make_many(store, base)
    wait_until(store._usage.idle)
    store = ProfileStore(base)  # a fresh process: nothing cached yet
    walks.clear()
    me = threading.current_thread().name
    cold = store.list()
    assert len(cold) == N_PROFILES
    assert not [c for c in walks if c[0] == me], "a cold list walked a profile on the caller's thread"
    assert all(p["diskUsageStale"] or p["diskUsage"] is not None for p in cold)

    wait_until(lambda: store._usage.idle(), timeout_s=60)
    assert {c[0] for c in walks} == {"profile-usage"}
    assert sorted(c[1] for c in walks) == [f"p{i:03d}" for i in range(N_PROFILES)]  # each walked once

    walked_before = len(walks)
    warm = {p["name"]: p for p in store.list()}
    warm_again = store.list()
    assert len(walks) == walked_before, "a warm list walked again"
    assert warm["p007"]["diskUsage"] == big and warm["p007"]["diskUsageStale"] is False
    assert warm["p007"]["diskUsageMB"] == round(big / 1048576, 2)
    assert all(p["diskUsage"] is not None and not p["diskUsageStale"] for p in warm_again)
    store.close()


def test_a_profile_used_since_its_walk_is_rewalked(base: Path, walks: list[tuple[str, str]]) -> None:
    store = ProfileStore(base, usage_changed_after_s=0.0)
    try:
        store.create("a")
        wait_until(store._usage.idle)
        size = store.get("a")["diskUsage"]
        assert size is not None
        walks.clear()
        assert store.get("a")["diskUsageStale"] is False and walks == []  # unchanged: no walk
        with store.lock("a", "bridge"):  # a browser session: Chrome writes, lastUsed moves
            (base / "a" / "Default").mkdir()
            (base / "a" / "Default" / "Cookies").write_bytes(b"x" * 5000)
        assert store.get("a")["diskUsageStale"] is True
        wait_until(store._usage.idle)
        assert store.get("a")["diskUsage"] == size + 5000
        assert [c[1] for c in walks] == ["a"]
    finally:
        store.close()


def test_refresh_walks_every_profile_now(store: ProfileStore, base: Path, walks: list[tuple[str, str]]) -> None:
    big = make_many(store, base)
    me = threading.current_thread().name
    listed = {p["name"]: p for p in store.list(refresh=True)}
    mine = [c for c in walks if c[0] == me]
    assert len(mine) == N_PROFILES
    assert listed["p007"]["diskUsage"] == big and not listed["p007"]["diskUsageStale"]


def test_reset_and_delete_forget_the_cached_size(store: ProfileStore, base: Path,
                                                 walks: list[tuple[str, str]]) -> None:
    store.create("a")
    (base / "a" / "Default" / "Cache").mkdir(parents=True)
    (base / "a" / "Default" / "Cache" / "blob").write_bytes(b"x" * 50_000)
    assert (store.list(refresh=True)[0]["diskUsage"] or 0) > 50_000
    store.reset("a")
    after = store.get("a")["diskUsage"]
    assert after is None or after < 50_000  # never the figure from before the reset
    rewalked = wait_until(lambda: not store.get("a")["diskUsageStale"] and store.get("a")["diskUsage"])
    assert 0 < rewalked < 50_000
    store.delete("a")
    assert store._usage._entries.get(str(base / "a")) is None


def test_an_expired_size_is_reported_stale_until_rewalked(base: Path, walks: list[tuple[str, str]]) -> None:
    store = ProfileStore(base, usage_ttl_s=0.0)
    try:
        store.create("a")
        first = store.list(refresh=True)[0]["diskUsage"]
        again = store.list()[0]
        assert again["diskUsage"] == first and again["diskUsageStale"] is True  # old figure, marked stale
        wait_until(lambda: store._usage.idle())
        assert any(c[0] == "profile-usage" for c in walks)
    finally:
        store.close()


def test_directory_size_counts_files_and_never_follows_symlinks(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "huge").write_bytes(b"x" * 100_000)
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True)
    (root / "one").write_bytes(b"1" * 10)
    (root / "a" / "b" / "two").write_bytes(b"2" * 20)
    (root / "link-dir").symlink_to(outside)
    (root / "link-file").symlink_to(outside / "huge")
    assert usage.directory_size(root) == 30
    assert usage.directory_size(tmp_path / "missing") == 0


def test_a_failing_walker_does_not_kill_the_worker(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cache = usage.UsageCache()
    boom = {"left": 1}
    real = usage.directory_size

    def flaky(path: Path) -> int:
        if boom["left"]:
            boom["left"] -= 1
            raise RuntimeError("walker bug")
        return real(path)

    monkeypatch.setattr(usage, "directory_size", flaky)
    (tmp_path / "f").write_bytes(b"x" * 7)
    try:
        cache.peek(tmp_path)
        wait_until(cache.idle)
        assert cache.peek(tmp_path).bytes is None  # failed walk: no figure, and a new walk queued
        wait_until(cache.idle)
        assert cache.peek(tmp_path) == usage.Usage(7, False)
    finally:
        cache.close()
