"""Identity discovery on files in the shapes Chrome writes, and on every way they can be bad."""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import BinaryIO

import pytest
from support.chrome_shapes import info_cache_entry, local_state, make_user_data_dir, preferences, write_json

import profiles.identity as identity
from profiles.identity import IdentityCache, discover, no_identity

_read_capped_original = identity._read_capped


def test_a_signed_in_profile(tmp_path: Path) -> None:
    root = make_user_data_dir(tmp_path / "u")
    assert discover(root) == {
        "accountEmail": "ada@example.com", "accountName": "Ada Lovelace", "hasAccount": True,
        "chromeProfileName": "Person 1", "source": "preferences", "consentedPrimaryAccount": True,
    }


def test_preferences_win_over_local_state(tmp_path: Path) -> None:
    state = local_state({"Default": info_cache_entry(user_name="old@example.com", gaia_name="Old", name="LS")})
    root = make_user_data_dir(tmp_path / "u", prefs=preferences(email="new@example.com", full_name="New Name"),
                              state=state)
    found = discover(root)
    assert (found["accountEmail"], found["accountName"], found["source"]) == ("new@example.com", "New Name",
                                                                              "preferences")
    assert found["chromeProfileName"] == "Person 1"


def test_the_first_account_with_an_email_wins(tmp_path: Path) -> None:
    prefs = preferences()
    prefs["account_info"] = [
        "not-a-dict", {"account_id": "1", "email": "", "full_name": "No Mail"},
        {"account_id": "2", "email": 42}, {"account_id": "3", "email": "second@example.com", "given_name": "Sec"},
        {"account_id": "4", "email": "third@example.com", "full_name": "Third"},
    ]
    write_json(tmp_path / "Default" / "Preferences", prefs)
    found = discover(tmp_path)
    assert (found["accountEmail"], found["accountName"]) == ("second@example.com", "Sec")


def test_local_state_alone_gives_the_account(tmp_path: Path) -> None:
    write_json(tmp_path / "Local State", local_state())
    found = discover(tmp_path)
    assert found == {"accountEmail": "ada@example.com", "accountName": "Ada Lovelace", "hasAccount": True,
                     "chromeProfileName": "Work", "source": "local_state", "consentedPrimaryAccount": True}


def test_local_state_without_a_default_entry_uses_the_first(tmp_path: Path) -> None:
    entries = {"Profile 3": info_cache_entry(user_name="three@example.com", name="Three", consented=False,
                                             key="has_consented_primary_account"),
               "Profile 4": info_cache_entry(user_name="four@example.com", name="Four")}
    write_json(tmp_path / "Local State", local_state(entries))
    found = discover(tmp_path)
    assert (found["accountEmail"], found["chromeProfileName"]) == ("three@example.com", "Three")
    assert found["consentedPrimaryAccount"] is False


def test_prefs_email_takes_the_local_state_name_only_for_the_same_account(tmp_path: Path) -> None:
    prefs = preferences(email="ada@example.com", full_name="", given_name="")
    write_json(tmp_path / "Default" / "Preferences", prefs)
    write_json(tmp_path / "Local State", local_state())
    assert discover(tmp_path)["accountName"] == "Ada Lovelace"
    write_json(tmp_path / "Local State",
               local_state({"Default": info_cache_entry(user_name="other@example.com", gaia_name="Other")}))
    assert discover(tmp_path)["accountName"] is None


def test_a_profile_nobody_signed_into(tmp_path: Path) -> None:
    state = local_state({"Default": info_cache_entry(user_name="", gaia_name="", name="Person 1")})
    root = make_user_data_dir(tmp_path / "u", prefs=preferences(email=None, consented=None), state=state)
    assert discover(root) == {**no_identity(), "chromeProfileName": "Person 1"}


def test_missing_files_give_no_identity(tmp_path: Path) -> None:
    assert discover(tmp_path) == no_identity()
    assert discover(tmp_path / "does-not-exist") == no_identity()


@pytest.mark.parametrize("content", [
    b"{", b"", b"null", b"[]", b'"string"', b"\xff\xfe garbage", b"[" * 50_000 + b"]" * 50_000,
    json.dumps({"account_info": {"email": "dict-not-list@example.com"}}).encode(),
    json.dumps({"account_info": [{"email": ["a@b.c"]}], "profile": "not-a-dict"}).encode(),
    json.dumps({"account_info": [{"email": "no-at-sign"}]}).encode(),
])
def test_broken_or_wrong_typed_preferences_give_no_identity(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "Default").mkdir()
    (tmp_path / "Default" / "Preferences").write_bytes(content)
    assert discover(tmp_path) == no_identity()


@pytest.mark.parametrize("state", [
    {"profile": {"info_cache": []}}, {"profile": []}, {"profile": {"info_cache": {"Default": "x"}}},
    {"profile": {"info_cache": {"Default": {"user_name": 5, "name": 7}}}}, {"profile": {"info_cache": {}}},
])
def test_wrong_typed_local_state_gives_no_identity(tmp_path: Path, state: dict) -> None:
    write_json(tmp_path / "Local State", state)
    assert discover(tmp_path) == no_identity()


def test_a_broken_preferences_falls_back_to_local_state(tmp_path: Path) -> None:
    (tmp_path / "Default").mkdir()
    (tmp_path / "Default" / "Preferences").write_text('{"account_info": [{"email": "trunc')
    write_json(tmp_path / "Local State", local_state())
    assert discover(tmp_path)["source"] == "local_state"


def test_a_huge_file_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[int] = []
    real = identity._read_capped

    def spy(fh: BinaryIO, limit: int) -> bytes | None:
        reads.append(limit)
        return real(fh, limit)

    monkeypatch.setattr(identity, "_read_capped", spy)
    # Valid JSON with an account, padded past 20 MB: found only if the limit were ignored.
    prefs = {"account_info": [{"email": "big@example.com"}], "pad": "x" * (identity.MAX_FILE_BYTES + 10)}
    write_json(tmp_path / "Default" / "Preferences", prefs)
    assert discover(tmp_path) == no_identity()
    assert reads == []  # refused on its size, not read and then dropped
    small = {"account_info": [{"email": "big@example.com"}]}
    write_json(tmp_path / "Default" / "Preferences", small)
    assert discover(tmp_path)["accountEmail"] == "big@example.com"
    assert reads == [identity.MAX_FILE_BYTES]


def test_a_file_that_grows_past_the_limit_while_read_is_dropped(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    write_json(tmp_path / "Default" / "Preferences", {"account_info": [{"email": "grow@example.com"}]})
    # As if the file had passed the size check at 10 bytes and then grown.
    monkeypatch.setattr(identity, "_read_capped", lambda fh, limit: _read_capped_original(fh, 10))
    assert discover(tmp_path) == no_identity()


def test_files_that_link_outside_the_profile_are_ignored(tmp_path: Path) -> None:
    outside = write_json(tmp_path / "elsewhere" / "Preferences", preferences(email="leak@example.com"))
    root = tmp_path / "u"
    (root / "Default").mkdir(parents=True)
    (root / "Default" / "Preferences").symlink_to(outside)
    (root / "Local State").symlink_to(outside)
    assert discover(root) == no_identity()


def test_a_default_dir_that_links_outside_is_ignored(tmp_path: Path) -> None:
    write_json(tmp_path / "elsewhere" / "Preferences", preferences(email="leak@example.com"))
    root = tmp_path / "u"
    root.mkdir()
    (root / "Default").symlink_to(tmp_path / "elsewhere")
    assert discover(root) == no_identity()


def test_a_fifo_in_place_of_preferences_does_not_hang(tmp_path: Path) -> None:
    (tmp_path / "Default").mkdir()
    os.mkfifo(tmp_path / "Default" / "Preferences")
    write_json(tmp_path / "Local State", local_state())
    assert discover(tmp_path)["source"] == "local_state"


def test_the_cache_rereads_only_when_a_file_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_user_data_dir(tmp_path / "u")
    calls: list[Path] = []
    real = identity.discover

    def counting(path: Path) -> identity.Identity:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(identity, "discover", counting)
    cache = IdentityCache()
    assert cache.get(root)["accountEmail"] == "ada@example.com"
    assert cache.get(root)["accountEmail"] == "ada@example.com"
    assert len(calls) == 1
    write_json(root / "Default" / "Preferences", preferences(email="changed@example.com", full_name="C"))
    assert cache.get(root)["accountEmail"] == "changed@example.com"
    assert len(calls) == 2
    returned = cache.get(root)
    returned["accountEmail"] = "mutated"
    assert cache.get(root)["accountEmail"] == "changed@example.com"  # callers get copies
