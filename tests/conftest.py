"""Shared fixtures: pages served on 127.0.0.1, one real headless Chromium per session, the app,
pinchtab servers in subprocesses, the profile store. The helpers behind them live in ``support``.

Every browser test drives a real Chromium (Debian's ``chromium`` or ``CHROME_BIN``) against pages
this process serves; nothing reaches the internet and nothing sleeps: waits poll a predicate
with a deadline.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from support.config import make_config
from support.servers import BridgeProcess, ServerProcess
from support.site import Site


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    s = Site()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def site2() -> Iterator[Site]:
    """A second origin (another port) for cross-origin frames."""
    s = Site()
    yield s
    s.stop()


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    from cdp.browser import Browser

    b = Browser()
    b.start()
    yield b
    b.stop()


@pytest.fixture
def tab(browser: Any) -> Iterator[Any]:
    t = browser.new_tab()
    yield t
    try:
        browser.close_tab(t.id)
    except Exception:
        pass


@pytest.fixture
def app_factory(browser: Any, tmp_path: Path) -> Iterator[Callable[..., Any]]:
    """Build a Flask app on the session's browser; tabs a test opens are closed after it."""
    from app.api import create_app

    before = {p["targetId"] for p in browser.pages()}

    def build(**overrides: Any) -> Any:
        app = create_app(make_config(tmp_path, **overrides), start_browser=False, browser_factory=lambda: browser)
        app.extensions["pinchtab"].start(background=False)
        app.testing = True
        return app

    yield build
    browser.url_check = None  # an app's navigation policy must not judge the next test's popups
    for p in browser.pages():
        if p["targetId"] not in before:
            try:
                browser.close_tab(p["targetId"])
            except Exception:
                pass


@pytest.fixture
def client(app_factory: Callable[..., Any]) -> Any:
    return app_factory().test_client()


@pytest.fixture
def bridge_process(tmp_path: Path) -> Iterator[Callable[..., BridgeProcess]]:
    """Start ``pinchtab bridge`` processes (``env`` on top of the test's, ``args`` after ``bridge``);
    each is stopped after the test."""
    started: list[BridgeProcess] = []

    def start(env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> BridgeProcess:
        bp = BridgeProcess(tmp_path, env, args)
        started.append(bp)
        return bp

    yield start
    for bp in started:
        bp.stop()


@pytest.fixture
def server_process(tmp_path: Path) -> Iterator[Callable[..., ServerProcess]]:
    """Start ``pinchtab server`` processes (``config``: the JSON config; ``token``: PINCHTAB_TOKEN;
    ``args``: the command line, ``()`` for plain ``pinchtab``); each is stopped, with its instances,
    after the test."""
    started: list[ServerProcess] = []

    def start(config: dict[str, Any] | None = None, token: str = "", args: tuple[str, ...] = ("server",),
              home: Path | None = None) -> ServerProcess:
        sp = ServerProcess(home or tmp_path, config, token, args)
        started.append(sp)
        return sp

    yield start
    for sp in started:
        sp.stop()


# --- the profile store (tests/profiles) ------------------------------------------------------------
@pytest.fixture
def base(tmp_path: Path) -> Path:
    """Where a test's profiles live."""
    return tmp_path / "profiles"


@pytest.fixture
def store(base: Path) -> Iterator[Any]:
    """A profile store under the test's tmp dir, closed after the test."""
    from profiles.store import ProfileStore

    s = ProfileStore(base)
    yield s
    s.close()
