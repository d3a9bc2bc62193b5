"""What the debug tests that load SDK pages share: the pages' server and a standalone debug server
for the module's ``SESSION``."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.config import make_config
from support.debug_pages import NPM_SDK, DebugPages

from app.debug.standalone import StandaloneServer


@pytest.fixture(scope="module")
def pages() -> Iterator[DebugPages]:
    if not NPM_SDK.exists():
        pytest.fail("the npm SDK is not installed: npm ci --prefix tests/js (scripts/dev.sh test does it)")
    p = DebugPages()
    yield p
    p.stop()


@pytest.fixture
def standalone(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StandaloneServer]:
    """``pinchtab debug connect``'s server for the test module's ``SESSION``."""
    with StandaloneServer(make_config(tmp_path), "127.0.0.1", 0, request.module.SESSION) as srv:
        yield srv
