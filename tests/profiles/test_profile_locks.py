"""Profile locks: exclusive, stale-lock takeover, Chrome's SingletonLock, and ProfileInUse."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from support import ROOT
from support.chrome_shapes import dead_pid

from profiles.errors import InvalidProfileField, ProfileInUse, ProfileLocked
from profiles.locks import LAST_USED_FILE, LOCK_FILE, ProfileLock, pid_alive
from profiles.store import ProfileStore


def lock_content(base: Path, name: str) -> dict:
    return json.loads((base / name / LOCK_FILE).read_text())


def test_lock_writes_pid_owner_since_and_release_removes_it(store: ProfileStore, base: Path) -> None:
    store.create("work")
    held = store.lock("work", "bridge:9867")
    assert isinstance(held, ProfileLock) and held.held and held.path == base / "work"
    content = lock_content(base, "work")
    assert (content["pid"], content["owner"]) == (os.getpid(), "bridge:9867")
    assert content["since"].endswith("Z")
    info = store.get("work")
    assert info["running"] is True
    assert info["lockedBy"] == {"pid": os.getpid(), "owner": "bridge:9867", "since": content["since"]}
    held.release()
    held.release()  # idempotent
    assert not (base / "work" / LOCK_FILE).exists()
    assert store.get("work")["running"] is False
    assert (base / "work" / LAST_USED_FILE).exists() and store.get("work")["lastUsed"] is not None


def test_lock_is_a_context_manager(store: ProfileStore, base: Path) -> None:
    store.create("work")
    with store.lock("work", "cli") as held:
        assert held.held and (base / "work" / LOCK_FILE).exists()
    assert not held.held and not (base / "work" / LOCK_FILE).exists()


def test_a_second_lock_names_the_holder(store: ProfileStore) -> None:
    store.create("work")
    with store.lock("work", "bridge:9867"):
        with pytest.raises(ProfileLocked) as err:
            store.lock("work", "bridge:9868")
        assert "bridge:9867" in str(err.value) and err.value.pid == os.getpid()
        assert err.value.owner == "bridge:9867"
    store.lock("work", "bridge:9868").release()  # free again once released


def test_concurrent_lock_attempts_exactly_one_wins(store: ProfileStore) -> None:
    store.create("work")
    n = 16
    barrier = threading.Barrier(n)
    winners: list[ProfileLock] = []
    losers: list[ProfileLocked] = []
    guard = threading.Lock()

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            held = store.lock("work", f"thread-{i}")
        except ProfileLocked as exc:
            with guard:
                losers.append(exc)
        else:
            with guard:
                winners.append(held)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(winners) == 1 and len(losers) == n - 1
    assert all(exc.owner == winners[0].owner and winners[0].owner in exc.holder for exc in losers)
    winners[0].release()


def test_concurrent_lock_attempts_on_a_stale_lock_exactly_one_wins(store: ProfileStore, base: Path) -> None:
    store.create("work")
    (base / "work" / LOCK_FILE).write_text(json.dumps({"pid": dead_pid(), "owner": "crashed", "since": "x"}))
    n = 12
    barrier = threading.Barrier(n)
    results: list[object] = []

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            results.append(store.lock("work", f"thread-{i}"))
        except ProfileLocked as exc:
            results.append(exc)

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    won = [r for r in results if isinstance(r, ProfileLock)]
    assert len(won) == 1 and len(results) == n
    assert lock_content(base, "work")["owner"] == won[0].owner


def test_a_stale_lock_of_an_exited_process_is_taken_over(store: ProfileStore, base: Path) -> None:
    store.create("work")
    pid = dead_pid()
    assert not pid_alive(pid)
    (base / "work" / LOCK_FILE).write_text(json.dumps({"pid": pid, "owner": "crashed-bridge",
                                                       "since": "2024-01-01T00:00:00Z"}))
    assert store.get("work")["running"] is False
    with store.lock("work", "new-bridge"):
        content = lock_content(base, "work")
        assert (content["pid"], content["owner"]) == (os.getpid(), "new-bridge")
    assert not (base / "work" / LOCK_FILE).exists()
    assert [p.name for p in (base / "work").iterdir() if p.name.endswith(".tmp")] == []


def test_an_unparsable_lock_is_respected_briefly_then_taken_over(store: ProfileStore, base: Path) -> None:
    store.create("work")
    lock = base / "work" / LOCK_FILE
    lock.write_text("")  # another writer between its O_EXCL create and its write
    with pytest.raises(ProfileLocked, match="unknown holder"):
        store.lock("work", "me")
    os.utime(lock, (1, 1))  # ... or a writer that crashed long ago
    store.lock("work", "me").release()


def test_a_lock_from_another_host_is_respected(store: ProfileStore, base: Path) -> None:
    store.create("work")
    (base / "work" / LOCK_FILE).write_text(json.dumps({"pid": dead_pid(), "owner": "far", "host": "elsewhere"}))
    with pytest.raises(ProfileLocked, match="far"):
        store.lock("work", "me")


def test_delete_reset_and_rename_refuse_a_locked_profile(store: ProfileStore, base: Path) -> None:
    store.create("work", description="d")
    (base / "work" / "Default").mkdir()
    (base / "work" / "Default" / "Cookies").write_bytes(b"c")
    with store.lock("work", "bridge:1"):
        for call in (lambda: store.delete("work"), lambda: store.reset("work"),
                     lambda: store.update("work", name="other")):
            with pytest.raises(ProfileInUse, match="bridge:1"):
                call()
        store.update("work", description="metadata may change while it runs")
    assert (base / "work" / "Default" / "Cookies").exists()
    assert sorted(p.name for p in base.iterdir()) == ["work"]
    store.delete("work")
    assert list(base.iterdir()) == []


def test_a_lock_held_by_another_process_blocks_until_it_exits(store: ProfileStore, base: Path) -> None:
    store.create("work")
    code = ("import sys; from pathlib import Path; from profiles.store import ProfileStore;"
            "s = ProfileStore(Path(sys.argv[1])); l = s.lock('work', 'child');"
            "print('locked', flush=True); sys.stdin.readline(); l.release(); s.close()")
    child = subprocess.Popen([sys.executable, "-c", code, str(base)], cwd=str(ROOT),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "locked"
        with pytest.raises(ProfileLocked) as err:
            store.lock("work", "parent")
        assert err.value.pid == child.pid and err.value.owner == "child"
        with pytest.raises(ProfileInUse):
            store.delete("work")
        child.communicate("\n", timeout=30)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    assert child.returncode == 0
    store.lock("work", "parent").release()


def test_a_killed_holder_leaves_a_stale_lock_that_is_taken_over(store: ProfileStore, base: Path) -> None:
    store.create("work")
    code = ("import sys, time; from pathlib import Path; from profiles.store import ProfileStore;"
            "s = ProfileStore(Path(sys.argv[1])); l = s.lock('work', 'doomed');"
            "print('locked', flush=True); sys.stdin.readline()")
    child = subprocess.Popen([sys.executable, "-c", code, str(base)], cwd=str(ROOT),
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "locked"
    assert store.get("work")["running"] is True
    child.kill()
    child.wait(timeout=30)
    assert lock_content(base, "work")["owner"] == "doomed"  # left behind by the crash
    assert store.get("work")["running"] is False
    with store.lock("work", "survivor"):
        assert lock_content(base, "work")["owner"] == "survivor"


# --- Chrome's own SingletonLock ------------------------------------------------------------------
def test_a_live_chrome_singleton_lock_means_running(store: ProfileStore, base: Path) -> None:
    store.create("work")
    os.symlink(f"{socket.gethostname()}-{os.getpid()}", base / "work" / "SingletonLock")
    info = store.get("work")
    assert info["running"] is True and info["chromePid"] == os.getpid() and info["lockedBy"] is None
    with pytest.raises(ProfileLocked, match="Chrome"):
        store.lock("work", "bridge")
    with pytest.raises(ProfileInUse, match="Chrome"):
        store.delete("work")
    assert (base / "work").is_dir()


@pytest.mark.parametrize("target", ["{host}-{dead}", "otherhost-{me}", "garbage", "{host}-notapid"])
def test_a_dead_or_foreign_chrome_singleton_lock_is_not_running(store: ProfileStore, base: Path,
                                                                target: str) -> None:
    store.create("work")
    link = target.format(host=socket.gethostname(), dead=dead_pid(), me=os.getpid())
    os.symlink(link, base / "work" / "SingletonLock")
    info = store.get("work")
    assert info["running"] is False and info["chromePid"] is None
    store.lock("work", "bridge").release()


def test_release_leaves_a_lock_that_was_taken_over_alone(store: ProfileStore, base: Path) -> None:
    store.create("work")
    held = store.lock("work", "first")
    other = {"pid": os.getpid(), "owner": "usurper", "since": "x", "token": "different"}
    (base / "work" / LOCK_FILE).write_text(json.dumps(other))
    held.release()
    assert lock_content(base, "work")["owner"] == "usurper"


def test_a_lock_needs_an_owner(store: ProfileStore, base: Path) -> None:
    store.create("work")
    for owner in ("", "   ", None):
        with pytest.raises(InvalidProfileField):
            store.lock("work", owner)  # type: ignore[arg-type]
    assert not (base / "work" / LOCK_FILE).exists()
