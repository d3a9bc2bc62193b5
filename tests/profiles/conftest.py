"""Fixtures for the profile store tests: a store under tmp_path, closed after the test."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from chrome_shapes import ROOT  # noqa: F401  (puts the project root on sys.path)

from profiles.store import ProfileStore


@pytest.fixture
def base(tmp_path: Path) -> Path:
    return tmp_path / "profiles"


@pytest.fixture
def store(base: Path) -> Iterator[ProfileStore]:
    s = ProfileStore(base)
    yield s
    s.close()
