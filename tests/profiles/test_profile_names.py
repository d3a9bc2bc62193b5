"""Profile names: one safe path component, and the ids derived from them."""
from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from profiles.errors import InvalidProfileName
from profiles.names import is_valid_name, looks_like_id, profile_id, validate_name
from profiles.store import ProfileStore

BAD_NAMES = [
    "", "../x", "a/b", "..", ".", " a", "a ", ".hidden", "a\x00b", "x" * 65, "a\\b", "a..b",
    "tab\tname", "new\nline", "caf\u00e9", "emoji\U0001F600", "C:", "a*b", "a?b", "/abs", "~home",
]
GOOD_NAMES = ["work", "Work 2", "agent-1_test.v2", "a", "x" * 64, "123", "a.b", "-dash", "_under"]


@pytest.mark.parametrize("name", BAD_NAMES)
def test_bad_names_are_refused(name: str) -> None:
    with pytest.raises(InvalidProfileName):
        validate_name(name)
    assert not is_valid_name(name)


@pytest.mark.parametrize("name", GOOD_NAMES)
def test_good_names_pass(name: str) -> None:
    assert validate_name(name) == name
    assert is_valid_name(name)


def test_non_strings_are_refused() -> None:
    for value in (None, 5, b"work", ["work"]):
        with pytest.raises(InvalidProfileName):
            validate_name(value)


def test_error_message_does_not_echo_control_characters() -> None:
    with pytest.raises(InvalidProfileName) as err:
        validate_name("a\x00b\x1b[31m")
    assert "\x00" not in str(err.value) and "\x1b" not in str(err.value)


def test_id_is_prof_and_the_first_8_hex_of_sha256_of_the_name() -> None:
    assert profile_id("work") == "prof_" + hashlib.sha256(b"work").hexdigest()[:8]
    assert profile_id("work") != profile_id("Work")
    assert looks_like_id(profile_id("anything"))
    assert not looks_like_id("prof_XYZ") and not looks_like_id("work")


@pytest.mark.parametrize("name", BAD_NAMES)
def test_store_refuses_bad_names_everywhere_and_writes_nothing(tmp_path: Path, name: str) -> None:
    base = tmp_path / "store" / "profiles"
    store = ProfileStore(base)
    try:
        store.create("ok")
        before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
        with pytest.raises(InvalidProfileName):
            store.create(name)
        with pytest.raises(InvalidProfileName):
            store.update("ok", name=name)
        with pytest.raises(InvalidProfileName):
            store.import_(name, str(tmp_path))
        if name:  # "" is refused as a missing id or name, with the same error class
            with pytest.raises(InvalidProfileName):
                store.get(name)
        after = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
        assert after == before
        assert [p["name"] for p in store.list()] == ["ok"]
    finally:
        store.close()
