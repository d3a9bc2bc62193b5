"""Real engines the fleet tests lease browsers from: Browserless (two of them are two machines) and
chromedriver, each on a port of its own on 127.0.0.1."""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.engines import BrowserlessProcess, ChromedriverProcess


def start(engine, timeout_s: float = 60.0):  # type: ignore[no-untyped-def]
    try:
        engine.wait_healthy(timeout_s)
    except BaseException:
        engine.stop()
        raise
    return engine


@pytest.fixture()
def browserless(tmp_path: Path) -> Iterator[BrowserlessProcess]:
    """A Browserless of its own, room for two browsers."""
    engine = start(BrowserlessProcess(tmp_path / "browserless", concurrent=2))
    yield engine
    engine.stop()


@pytest.fixture()
def chromedriver(tmp_path: Path) -> Iterator[ChromedriverProcess]:
    engine = start(ChromedriverProcess(tmp_path / "chromedriver"), 20.0)
    yield engine
    engine.stop()
