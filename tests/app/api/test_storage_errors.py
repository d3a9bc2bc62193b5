"""A write that meets a full (or failing) disk answers 507 with a clear code, everywhere: saved state,
output=file, the profile store; nothing half-written is left behind."""
from __future__ import annotations

import contextlib
import errno
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.web.errors import StorageError, body, from_exception
from app.web.files import write_atomic
from profiles.errors import StoreWriteError


# --- the mapping ---------------------------------------------------------------------------------
def test_a_full_disk_is_507_storage_full_naming_what_could_not_be_written() -> None:
    err = from_exception(StorageError("saved state 'cart'", OSError(errno.ENOSPC, "No space left on device")))
    assert err is not None
    assert (err.status, err.code, err.retryable) == (507, "storage_full", True)
    assert body(err)["error"] == "could not write saved state 'cart': the disk is full"


def test_a_quota_is_full_too_and_a_read_only_disk_is_storage_failed() -> None:
    quota = from_exception(StorageError("'a.png'", OSError(errno.EDQUOT, "Disk quota exceeded")))
    assert quota is not None and quota.code == "storage_full"
    ro = from_exception(StorageError("'a.png'", OSError(errno.EROFS, "Read-only file system")))
    assert ro is not None
    assert (ro.status, ro.code, ro.retryable) == (507, "storage_failed", False)
    assert "read-only" in ro.message


def test_the_profile_store_answers_the_same_507() -> None:
    try:
        raise StoreWriteError("could not write profile.json in 'work': the disk is full") \
            from OSError(errno.ENOSPC, "No space left on device")
    except StoreWriteError as exc:
        err = from_exception(exc)
    assert err is not None
    assert (err.status, err.code) == (507, "storage_full")
    assert "work" in err.message


def test_a_bare_full_disk_oserror_is_507_without_its_path() -> None:
    err = from_exception(OSError(errno.ENOSPC, "No space left on device", "/somewhere/private/sessions"))
    assert err is not None
    assert (err.status, err.code) == (507, "storage_full")
    assert "/somewhere" not in err.message


def test_other_os_errors_are_not_storage_errors() -> None:
    assert from_exception(ConnectionRefusedError(errno.ECONNREFUSED, "refused")) is None


def test_write_atomic_raises_storage_error_and_leaves_the_old_file(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "state.json"
    target.write_bytes(b"old")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    with pytest.raises(StorageError) as caught:
        write_atomic(target, b"new" * 100, what="saved state 'x'")
    assert caught.value.errno == errno.ENOSPC and caught.value.what == "saved state 'x'"
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


# --- a real full disk ----------------------------------------------------------------------------
def _can_mount() -> str:
    """Why a small tmpfs cannot be mounted here ('' when it can)."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "mounting a tmpfs needs root"
    return ""


@contextlib.contextmanager
def small_disk(where: Path, size: str = "64k") -> Iterator[Path]:
    where.mkdir(parents=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0700", "tmpfs", str(where)],
                          capture_output=True, text=True, timeout=10)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=10)


def fill(disk: Path) -> None:
    """Take every free byte of ``disk``."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        for size in (4096, 512, 1):  # unbuffered, down to the last byte
            with contextlib.suppress(OSError):
                while os.write(fd, b"\0" * size):
                    pass
    finally:
        os.close(fd)


@pytest.fixture
def full_disk(tmp_path: Path) -> Iterator[Path]:
    reason = _can_mount()
    if reason:
        pytest.skip(reason)
    with small_disk(tmp_path / "disk") as disk:
        yield disk


def test_saving_state_on_a_full_disk_is_507_and_the_old_state_survives(app_factory, full_disk, site) -> None:
    app = app_factory(**{"security.allowStateExport": True, "server.stateDir": str(full_disk)})
    client = app.test_client()
    r = client.post("/navigate", json={"url": site.url("storage.html?set=1")})
    assert r.status_code == 200, r.json
    r = client.post("/state/save", json={"name": "cart"})
    assert r.status_code == 200, r.json
    before = (full_disk / "sessions" / "cart.json").read_bytes()
    fill(full_disk)

    r = client.post("/state/save", json={"name": "cart", "metadata": {"pad": "x" * 20000}})
    assert r.status_code == 507, r.json
    assert r.json["code"] == "storage_full"
    assert r.json["error"] == "could not write saved state 'cart': the disk is full"
    assert str(full_disk) not in r.json["error"]
    assert (full_disk / "sessions" / "cart.json").read_bytes() == before
    assert sorted(p.name for p in (full_disk / "sessions").iterdir()) == ["cart.json"]  # no temp file left


def test_output_file_on_a_full_disk_is_507_naming_the_file_asked_for(app_factory, full_disk, site) -> None:
    app = app_factory(**{"server.stateDir": str(full_disk)})
    client = app.test_client()
    r = client.post("/navigate", json={"url": site.url("storage.html")})
    assert r.status_code == 200, r.json
    fill(full_disk)
    r = client.get("/screenshot?output=file&path=shots/full.png")
    assert r.status_code == 507, r.json
    assert r.json["code"] == "storage_full"
    assert "'full.png'" in r.json["error"] and str(full_disk) not in r.json["error"]


def test_the_profile_store_on_a_full_disk_is_the_same_507(full_disk) -> None:
    from profiles.store import ProfileStore

    store = ProfileStore(full_disk / "profiles")
    try:
        fill(full_disk)
        with pytest.raises(StoreWriteError) as caught:
            store.create("work")
    finally:
        store.close()
    err = from_exception(caught.value)
    assert err is not None
    assert (err.status, err.code) == (507, "storage_full")
