"""ProfileStore: create, list, get, update, rename, delete, reset, and the faults around them."""
from __future__ import annotations

import errno
import json
import os
import shutil
from pathlib import Path

import pytest
from support.chrome_shapes import make_user_data_dir, preferences, write_json

import profiles.atomic as atomic
from profiles.errors import (
    InvalidProfileField,
    ProfileExists,
    ProfileNotFound,
    StoreWriteError,
    UnsafePath,
)
from profiles.meta import CORRUPT_META, MISSING_META, UNSAFE_META
from profiles.names import profile_id
from profiles.store import RESET_PATHS, ProfileStore


def meta_of(base: Path, name: str) -> dict:
    return json.loads((base / name / "profile.json").read_text())


def temp_files(directory: Path) -> list[str]:
    return [p.name for p in directory.iterdir() if p.name.endswith(".tmp")]


# --- create / get / list ---------------------------------------------------------------------
def test_create_writes_metadata_and_an_empty_user_data_dir(store: ProfileStore, base: Path) -> None:
    info = store.create("work", description="Work account", use_when="for the CRM")
    meta = meta_of(base, "work")
    assert meta["id"] == info["id"] == profile_id("work")
    assert (meta["name"], meta["description"], meta["useWhen"], meta["source"]) == (
        "work", "Work account", "for the CRM", "created")
    assert meta["created"].endswith("Z") and meta["created"][:4].isdigit()
    assert "sourcePath" not in meta
    assert info["path"] == str(base / "work") and info["pathExists"] is True
    assert info["running"] is False and info["lockedBy"] is None and "error" not in info
    assert (base / "work").stat().st_mode & 0o777 == 0o700


def test_create_twice_or_case_variant_is_refused(store: ProfileStore) -> None:
    store.create("work")
    with pytest.raises(ProfileExists):
        store.create("work")
    with pytest.raises(ProfileExists):
        store.create("WORK")  # would clash on case-insensitive file systems


def test_get_by_name_and_by_id(store: ProfileStore) -> None:
    created = store.create("Personal 2")
    assert store.get("Personal 2")["id"] == created["id"]
    assert store.get(created["id"])["name"] == "Personal 2"
    with pytest.raises(ProfileNotFound):
        store.get("nope")
    with pytest.raises(ProfileNotFound):
        store.get("prof_00000000")


def test_list_is_sorted_and_skips_scratch_dirs_and_files(store: ProfileStore, base: Path) -> None:
    for name in ("b", "A", "c"):
        store.create(name)
    (base / ".import-abc").mkdir()
    (base / "stray-file").write_text("x")
    assert [p["name"] for p in store.list()] == ["A", "b", "c"]


def test_field_values_are_checked(store: ProfileStore) -> None:
    with pytest.raises(InvalidProfileField):
        store.create("a", description="x" * 2001)
    with pytest.raises(InvalidProfileField):
        store.create("a", use_when=5)  # type: ignore[arg-type]
    assert store.list() == []


def test_identity_and_last_used_appear_in_the_listing(store: ProfileStore, base: Path) -> None:
    store.create("work")
    write_json(base / "work" / "Default" / "Preferences", preferences(email="ada@example.com"))
    info = store.get("work")
    assert (info["accountEmail"], info["accountName"], info["hasAccount"]) == ("ada@example.com", "Ada Lovelace", True)
    assert info["identitySource"] == "preferences" and info["chromeProfileName"] == "Person 1"
    assert info["source"] == "created"  # the profile's source, not the identity's
    os.utime(base / "work" / "Default" / "Preferences", (1_700_000_000, 1_700_000_000))
    assert store.get("work")["lastUsed"] == "2023-11-14T22:13:20Z"


# --- update / rename -------------------------------------------------------------------------
def test_update_changes_only_the_given_fields(store: ProfileStore, base: Path) -> None:
    store.create("work", description="old", use_when="always")
    info = store.update("work", description="new")
    assert (info["description"], info["useWhen"]) == ("new", "always")
    assert meta_of(base, "work")["description"] == "new"
    assert temp_files(base / "work") == []


def test_rename_moves_the_dir_changes_the_id_and_keeps_contents(store: ProfileStore, base: Path) -> None:
    old = store.create("work", description="d")
    (base / "work" / "Default").mkdir()
    (base / "work" / "Default" / "Cookies").write_bytes(b"cookie-db")
    new = store.update(old["id"], name="Work 2")
    assert not (base / "work").exists()
    assert (base / "Work 2" / "Default" / "Cookies").read_bytes() == b"cookie-db"
    assert new["id"] == profile_id("Work 2") != old["id"]
    assert meta_of(base, "Work 2")["name"] == "Work 2" and meta_of(base, "Work 2")["id"] == new["id"]
    assert new["description"] == "d"
    with pytest.raises(ProfileNotFound):
        store.get(old["id"])


def test_rename_onto_an_existing_profile_or_empty_dir_is_refused(store: ProfileStore, base: Path) -> None:
    store.create("a")
    store.create("b")
    with pytest.raises(ProfileExists):
        store.update("a", name="b")
    # An empty dir someone made by hand: os.rename would silently replace it, the store must not.
    (base / "c").mkdir()
    with pytest.raises(ProfileExists):
        store.update("a", name="c")
    assert (base / "a" / "profile.json").exists() and meta_of(base, "a")["name"] == "a"


def test_rename_never_replaces_a_dir_that_appears_after_the_name_check(store: ProfileStore, base: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    store.create("a")
    (base / "late").mkdir()  # e.g. made by another process between our check and our rename
    monkeypatch.setattr(store, "_check_free", lambda name, ignore=None: None)
    with pytest.raises(ProfileExists):
        store.update("a", name="late")
    assert (base / "a" / "profile.json").exists() and list((base / "late").iterdir()) == []
    assert store.get("a")["lockedBy"] is None


def test_rename_to_the_same_name_is_a_plain_update(store: ProfileStore) -> None:
    store.create("a")
    assert store.update("a", name="a", use_when="x")["useWhen"] == "x"


# --- delete ----------------------------------------------------------------------------------
def test_delete_removes_everything_and_leaves_no_trash(store: ProfileStore, base: Path) -> None:
    info = store.create("work")
    (base / "work" / "Default" / "Cache").mkdir(parents=True)
    (base / "work" / "Default" / "Cache" / "x").write_bytes(b"1" * 100)
    store.delete(info["id"])
    assert list(base.iterdir()) == []
    with pytest.raises(ProfileNotFound):
        store.delete("work")


def test_leftover_trash_and_old_imports_are_swept_at_start(base: Path) -> None:
    base.mkdir(parents=True)
    (base / ".trash-123").mkdir()
    (base / ".trash-123" / "f").write_text("x")
    (base / ".import-old").mkdir()
    os.utime(base / ".import-old", (1, 1))
    (base / ".import-fresh").mkdir()  # may be another process's import in progress
    store = ProfileStore(base)
    store.close()
    assert sorted(p.name for p in base.iterdir()) == [".import-fresh"]


# --- reset -----------------------------------------------------------------------------------
def test_reset_removes_browsing_state_and_keeps_the_profile(store: ProfileStore, base: Path) -> None:
    store.create("work", description="keep me")
    make_user_data_dir(base / "work", singleton=None)
    (base / "work" / "Cache").mkdir()
    (base / "work" / "Cache" / "x").write_bytes(b"x")
    info = store.reset("work")
    default = base / "work" / "Default"
    for rel in RESET_PATHS:
        assert not os.path.lexists(base / "work" / rel), rel
    assert (default / "Preferences").exists() and (default / "Login Data").exists()
    assert (default / "Bookmarks").exists() and (base / "work" / "Local State").exists()
    assert info["description"] == "keep me" and info["accountEmail"] == "ada@example.com"
    assert meta_of(base, "work")["description"] == "keep me"


def test_reset_never_follows_a_symlink_out_of_the_profile(store: ProfileStore, base: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "Cookies").parent.mkdir(parents=True)
    (outside / "Cookies").write_text("precious")
    store.create("work")
    os.symlink(outside, base / "work" / "Default")
    with pytest.raises(UnsafePath):
        store.reset("work")
    assert (outside / "Cookies").read_text() == "precious"
    # A symlinked target (not parent) is unlinked, and its target is left alone.
    os.unlink(base / "work" / "Default")
    (base / "work" / "Default").mkdir()
    os.symlink(outside, base / "work" / "Default" / "Cache")
    store.reset("work")
    assert not os.path.lexists(base / "work" / "Default" / "Cache")
    assert (outside / "Cookies").read_text() == "precious"


# --- faults: corrupt metadata, vanished dirs, symlinks ------------------------------------
@pytest.mark.parametrize("content", [b"{not json", b"", b"[1, 2]", b"\xff\xfe\x00", b"[" * 100_000])
def test_corrupt_profile_json_still_lists_with_an_error(store: ProfileStore, base: Path, content: bytes) -> None:
    store.create("good")
    store.create("bad")
    (base / "bad" / "profile.json").write_bytes(content)
    listed = {p["name"]: p for p in store.list()}
    assert set(listed) == {"good", "bad"}
    assert listed["bad"]["error"] == CORRUPT_META
    assert listed["bad"]["id"] == profile_id("bad")
    assert "error" not in listed["good"]
    assert store.get("bad")["error"] == CORRUPT_META


def test_a_wrong_typed_field_falls_back_to_its_default(store: ProfileStore, base: Path) -> None:
    store.create("p", description="d")
    (base / "p" / "profile.json").write_text(json.dumps({"description": 5, "useWhen": "u", "source": "alien"}))
    info = store.get("p")
    assert (info["description"], info["useWhen"], info["source"]) == ("", "u", "created")
    assert "error" not in info


def test_missing_profile_json_lists_and_update_repairs_it(store: ProfileStore, base: Path) -> None:
    (base / "handmade").mkdir()
    assert store.get("handmade")["error"] == MISSING_META
    info = store.update("handmade", description="fixed")
    assert "error" not in info and meta_of(base, "handmade")["name"] == "handmade"


def test_corrupt_profile_json_can_be_repaired_by_update(store: ProfileStore, base: Path) -> None:
    store.create("bad")
    (base / "bad" / "profile.json").write_text("{")
    info = store.update("bad", use_when="again")
    assert "error" not in info and meta_of(base, "bad")["useWhen"] == "again"


def test_a_profile_deleted_behind_our_back_disappears(store: ProfileStore, base: Path) -> None:
    store.create("a")
    gone = store.create("b")
    shutil.rmtree(base / "b")
    assert [p["name"] for p in store.list()] == ["a"]
    for call in (lambda: store.get("b"), lambda: store.get(gone["id"]), lambda: store.delete("b"),
                 lambda: store.update("b", description="x"), lambda: store.reset("b"),
                 lambda: store.lock("b", "t")):
        with pytest.raises(ProfileNotFound):
            call()


def test_a_profile_deleted_in_the_middle_of_a_list_is_left_out(store: ProfileStore, base: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("a", "b", "c"):
        store.create(name)
    real_get = store._identity.get

    def get_and_delete_b(path: Path):  # runs inside the list, after b's metadata was read
        if path.name == "b":
            shutil.rmtree(path)
        return real_get(path)

    monkeypatch.setattr(store._identity, "get", get_and_delete_b)
    assert [p["name"] for p in store.list()] == ["a", "c"]


def test_a_symlinked_profile_dir_is_refused(store: ProfileStore, base: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    write_json(outside / "profile.json", {"name": "evil"})
    (outside / "keep").write_text("precious")
    os.symlink(outside, base / "evil")
    store.create("fine")
    assert [p["name"] for p in store.list()] == ["fine"]
    for call in (lambda: store.get("evil"), lambda: store.delete("evil"), lambda: store.reset("evil"),
                 lambda: store.update("evil", description="x"), lambda: store.lock("evil", "t")):
        with pytest.raises(UnsafePath):
            call()
    with pytest.raises(UnsafePath):
        store.create("evil")
    assert (outside / "keep").read_text() == "precious"
    assert json.loads((outside / "profile.json").read_text()) == {"name": "evil"}


def test_a_symlinked_profile_json_is_not_followed(store: ProfileStore, base: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"description": "leaked"}))
    store.create("p")
    os.unlink(base / "p" / "profile.json")
    os.symlink(secret, base / "p" / "profile.json")
    info = store.get("p")
    assert info["error"] == UNSAFE_META and info["description"] == ""
    store.update("p", description="mine")  # replaces the link itself, never writes through it
    assert json.loads(secret.read_text()) == {"description": "leaked"}
    assert not (base / "p" / "profile.json").is_symlink()
    assert meta_of(base, "p")["description"] == "mine"


def test_a_fifo_profile_json_does_not_hang_the_list(store: ProfileStore, base: Path) -> None:
    store.create("p")
    os.unlink(base / "p" / "profile.json")
    os.mkfifo(base / "p" / "profile.json")
    assert store.get("p")["error"] == CORRUPT_META


# --- faults: a full disk ---------------------------------------------------------------------
def enospc(*_args: object, **_kwargs: object) -> None:
    raise OSError(errno.ENOSPC, "No space left on device")


def test_full_disk_on_fsync_keeps_the_old_profile_json(store: ProfileStore, base: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    store.create("work", description="old")
    before = (base / "work" / "profile.json").read_bytes()
    monkeypatch.setattr(os, "fsync", enospc)
    with pytest.raises(StoreWriteError, match="disk is full") as err:
        store.update("work", description="new")
    monkeypatch.undo()
    assert err.value.__cause__.errno == errno.ENOSPC
    assert (base / "work" / "profile.json").read_bytes() == before
    assert temp_files(base / "work") == []
    assert store.get("work")["description"] == "old"


def test_full_disk_half_way_through_the_write(store: ProfileStore, base: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    store.create("work", description="old")
    before = (base / "work" / "profile.json").read_bytes()

    def half_then_full(fd: int, data: bytes) -> None:
        os.write(fd, data[: len(data) // 2])
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic, "write_all", half_then_full)
    with pytest.raises(StoreWriteError, match="disk is full"):
        store.update("work", description="x" * 1000)
    assert (base / "work" / "profile.json").read_bytes() == before
    assert temp_files(base / "work") == []


def test_full_disk_on_create_leaves_no_profile(store: ProfileStore, base: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "write_all", enospc)
    with pytest.raises(StoreWriteError):
        store.create("work")
    monkeypatch.undo()
    assert list(base.iterdir()) == []
    assert store.list() == []


def test_full_disk_on_rename_puts_the_profile_back(store: ProfileStore, base: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    store.create("work", description="d")
    before = (base / "work" / "profile.json").read_bytes()
    monkeypatch.setattr(atomic, "write_all", enospc)
    with pytest.raises(StoreWriteError):
        store.update("work", name="renamed")
    monkeypatch.undo()
    assert sorted(p.name for p in base.iterdir()) == ["work"]
    assert (base / "work" / "profile.json").read_bytes() == before
    assert temp_files(base / "work") == []
    assert store.get("work")["lockedBy"] is None  # the store's own lock was released


def test_store_write_error_is_an_oserror_with_a_clear_message(store: ProfileStore,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    store.create("work")
    monkeypatch.setattr(os, "fsync", enospc)
    with pytest.raises(OSError) as err:
        store.update("work", description="x")
    assert isinstance(err.value, StoreWriteError)
    assert "profile.json" in str(err.value) and "work" in str(err.value)
