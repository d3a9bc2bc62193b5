"""Importing a person's Chrome user-data dir: checks on the source, what is copied, faults."""
from __future__ import annotations

import errno
import json
import os
import socket
from pathlib import Path

import pytest
from support.chrome_shapes import dead_pid, make_user_data_dir, preferences, write_json

import profiles.copying as copying
from profiles.errors import InvalidImportSource, ProfileExists, ProfileInUse, StoreWriteError
from profiles.locks import LOCK_FILE
from profiles.store import ProfileStore


@pytest.fixture
def source(tmp_path: Path) -> Path:
    return make_user_data_dir(tmp_path / "chrome-data")


def scratch(base: Path) -> list[str]:
    return [p.name for p in base.iterdir() if p.name.startswith(".")]


def test_import_copies_the_profile_without_caches_locks_or_links(store: ProfileStore, base: Path,
                                                                 source: Path, tmp_path: Path) -> None:
    (source / "Default" / "link-out").symlink_to(tmp_path)
    info = store.import_("imported", str(source), description="from my laptop", use_when="shopping")
    dst = base / "imported"
    assert info["source"] == "imported" and info["sourcePath"] == str(source.resolve())
    assert (info["description"], info["useWhen"]) == ("from my laptop", "shopping")
    meta = json.loads((dst / "profile.json").read_text())
    assert meta["source"] == "imported" and meta["sourcePath"] == str(source.resolve())
    for rel in ("Local State", "Default/Preferences", "Default/Cookies", "Default/History",
                "Default/Login Data", "Default/Bookmarks", "Default/Local Storage/leveldb/000003.log",
                "Default/Sessions/Session_13350000000000000"):
        assert (dst / rel).read_bytes() == (source / rel).read_bytes(), rel
    for rel in ("Default/Cache", "Default/Code Cache", "Default/GPUCache", "GrShaderCache",
                "SingletonLock", "SingletonSocket", "SingletonCookie", "Default/link-out"):
        assert not os.path.lexists(dst / rel), rel
    # mtimes survive, so "last used" is the person's last use
    assert (dst / "Default/Preferences").stat().st_mtime_ns == (source / "Default/Preferences").stat().st_mtime_ns
    assert info["accountEmail"] == "ada@example.com" and info["chromeProfileName"] == "Person 1"
    assert scratch(base) == []
    assert (source / "Default" / "Cache").is_dir()  # the source is never modified


def test_import_through_a_symlinked_source_path(store: ProfileStore, source: Path, tmp_path: Path) -> None:
    (tmp_path / "alias").symlink_to(source)
    assert store.import_("x", str(tmp_path / "alias"))["sourcePath"] == str(source.resolve())


def test_a_dir_with_only_local_state_is_a_user_data_dir(store: ProfileStore, tmp_path: Path) -> None:
    src = tmp_path / "ls-only"
    write_json(src / "Local State", {"profile": {"info_cache": {}}})
    assert store.import_("x", str(src))["name"] == "x"


def test_a_half_copied_profile_is_never_visible(store: ProfileStore, base: Path, source: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[list[str]] = []
    real = copying._copy_file

    def spying(src: str, dst: str, st: os.stat_result) -> int:
        seen.append([p["name"] for p in store.list()])
        return real(src, dst, st)

    monkeypatch.setattr(copying, "_copy_file", spying)
    store.import_("new", str(source))
    assert len(seen) > 5 and all("new" not in names for names in seen)
    assert [p["name"] for p in store.list()] == ["new"]


@pytest.mark.parametrize("case", ["missing", "file", "empty-dir", "relative", "loop", "nul", "empty"])
def test_bad_sources_are_refused_and_leave_nothing(store: ProfileStore, base: Path, tmp_path: Path,
                                                   case: str) -> None:
    path = {
        "missing": str(tmp_path / "nope"),
        "file": str(tmp_path / "a-file"),
        "empty-dir": str(tmp_path / "empty"),
        "relative": "chrome-data",
        "loop": str(tmp_path / "loop-a"),
        "nul": str(tmp_path / "x\x00y"),
        "empty": "",
    }[case]
    (tmp_path / "a-file").write_text("{}")
    (tmp_path / "empty").mkdir()
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    with pytest.raises(InvalidImportSource) as err:
        store.import_("x", path)
    expected = {"missing": "does not exist", "file": "not a directory", "empty-dir": "not a Chrome user-data dir",
                "relative": "absolute", "loop": "symlink loop", "nul": "NUL", "empty": "non-empty"}[case]
    assert expected in str(err.value)
    assert list(base.iterdir()) == []


def test_a_single_profile_dir_gets_a_hint(store: ProfileStore, tmp_path: Path) -> None:
    write_json(tmp_path / "Default" / "Preferences", preferences())
    with pytest.raises(InvalidImportSource, match="folder above"):
        store.import_("x", str(tmp_path / "Default"))


def test_the_store_itself_or_a_dir_holding_it_is_refused(store: ProfileStore, base: Path, tmp_path: Path) -> None:
    write_json(tmp_path / "Local State", {})  # make tmp_path look like a user-data dir
    write_json(base / "Local State", {})
    for src in (tmp_path, base):
        with pytest.raises(InvalidImportSource, match="profile store"):
            store.import_("x", str(src))
    assert sorted(p.name for p in base.iterdir()) == ["Local State"]


def test_a_store_profile_can_be_cloned(store: ProfileStore, base: Path) -> None:
    store.create("orig")
    write_json(base / "orig" / "Default" / "Preferences", preferences(email="bo@example.com"))
    clone = store.import_("clone", str(base / "orig"))
    assert clone["accountEmail"] == "bo@example.com" and clone["source"] == "imported"
    assert json.loads((base / "clone" / "profile.json").read_text())["name"] == "clone"


def test_an_existing_name_is_refused_before_copying(store: ProfileStore, base: Path, source: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    store.create("taken")
    calls: list[str] = []

    def record(src: str, dst: str, st: os.stat_result) -> int:
        calls.append(src)
        return 0

    monkeypatch.setattr(copying, "_copy_file", record)
    with pytest.raises(ProfileExists):
        store.import_("taken", str(source))
    assert calls == [] and scratch(base) == []


def test_a_source_in_use_by_chrome_or_pinchtab_is_refused(store: ProfileStore, base: Path, tmp_path: Path) -> None:
    live = make_user_data_dir(tmp_path / "live", singleton=f"{socket.gethostname()}-{os.getpid()}")
    with pytest.raises(ProfileInUse, match="Chrome"):
        store.import_("x", str(live))
    store.create("busy")
    write_json(base / "busy" / "Local State", {})
    with store.lock("busy", "bridge:1"):
        with pytest.raises(ProfileInUse, match="bridge:1"):
            store.import_("y", str(base / "busy"))
    assert sorted(p["name"] for p in store.list()) == ["busy"] and scratch(base) == []


def test_full_disk_during_the_copy_leaves_nothing_behind(store: ProfileStore, base: Path, source: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    writes = {"n": 0}
    real = copying.write_all

    def fill_up(fd: int, data: bytes) -> None:
        writes["n"] += 1
        if writes["n"] > 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(fd, data)

    monkeypatch.setattr(copying, "write_all", fill_up)
    with pytest.raises(StoreWriteError, match="disk is full"):
        store.import_("x", str(source))
    assert writes["n"] == 4
    assert list(base.iterdir()) == [] and store.list() == []


def test_an_unreadable_source_file_is_skipped_not_fatal(store: ProfileStore, base: Path, source: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    real_open = os.open

    def deny_bookmarks(path: str | Path, flags: int, *args: int) -> int:
        if str(path).endswith("Bookmarks") and str(path).startswith(str(source)):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", deny_bookmarks)
    store.import_("x", str(source))
    monkeypatch.undo()
    assert not (base / "x" / "Default" / "Bookmarks").exists()
    assert (base / "x" / "Default" / "Cookies").exists()


def test_a_lock_file_in_the_source_is_not_copied(store: ProfileStore, base: Path, source: Path) -> None:
    (source / LOCK_FILE).write_text(json.dumps({"pid": dead_pid(), "owner": "gone"}))
    store.import_("x", str(source))
    assert not (base / "x" / LOCK_FILE).exists()
    assert store.get("x")["running"] is False
