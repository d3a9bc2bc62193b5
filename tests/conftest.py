"""Shared fixtures: pages served on 127.0.0.1, one real headless Chromium per session, the app,
pinchtab servers in subprocesses, the profile store. The helpers behind them live in ``support``.

Every browser test drives a real Chromium (Debian's ``chromium`` or ``CHROME_BIN``) against pages
this process serves; nothing reaches the internet and nothing sleeps: waits poll a predicate
with a deadline.
"""
from __future__ import annotations

from collections import Counter
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


# --- running in parallel (pytest-xdist; scripts/dev.sh test passes -n and --dist loadfile) -----------
# Each worker is a pytest process of its own: its own session browser and pages' servers (the
# session fixtures above), its own tmp dirs under the run's basetemp, servers on ports the kernel
# picks. ``--dist loadfile`` keeps a module on one worker, so a module-scoped server starts once.
# Two refinements of it, in ``_ModulesHeaviestFirst``: the modules that share the orchestrator's
# session-scoped ``shared_server`` go to one worker together (one server start, not one a worker),
# and the modules that take longest are handed out first, so that none of them starts last and
# keeps one worker busy after the others are done.
SHARED_SERVER_MODULES = frozenset(f"tests/app/orchestrator/{name}.py" for name in (
    "test_server_routes", "test_server_auth", "test_login", "test_sessions", "test_screencast_relay"))
# A module's rough seconds in a parallel run (4 workers on the 2-core machine, 2026-11-27); only the
# order of the hand-out depends on them. A module not named here counts a second a test.
SLOW_MODULES = {
    "tests/app/clients/test_cli.py": 257, "tests/app/api/test_site_tools.py": 207,
    "tests/app/orchestrator/test_profile_routes.py": 140, "tests/app/orchestrator/test_server_mode.py": 137,
    "tests/app/api/test_api_browser.py": 103, "tests/cdp/test_snapshot_js.py": 96, "tests/app/api/test_contract.py": 80,
    "tests/app/api/test_idpi.py": 78, "tests/deploy/test_deploy.py": 77, "tests/app/api/test_transfer.py": 70,
    "tests/app/api/test_abuse_inputs.py": 64, "tests/app/orchestrator/test_server_routes.py": 62,
    "tests/app/api/test_navigation_policy.py": 61, "tests/app/api/test_network.py": 60,
    "tests/e2e/test_bridge_server.py": 56, "tests/app/clients/test_debug_cli.py": 54,
    "tests/app/orchestrator/test_extension_instances.py": 47, "tests/app/orchestrator/test_dashboard_debug.py": 46,
    "tests/app/api/test_storage_clipboard.py": 46, "tests/app/api/test_emulation.py": 43,
    "tests/deploy/test_slow_clients.py": 39, "tests/app/orchestrator/test_dashboard_activity.py": 38,
    "tests/app/debug/test_tab_app.py": 36, "tests/app/extension/test_daemon.py": 35,
    "tests/e2e/test_debug_bridge.py": 34,
    "tests/app/orchestrator/test_server_auth.py": 31, "tests/e2e/test_closed_to_web.py": 30,
}


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None  # xdist's own scheduler for the other modes
    from xdist.scheduler import LoadFileScheduling

    class _ModulesHeaviestFirst(LoadFileScheduling):
        ordered = False

        def _split_scope(self, nodeid: str) -> str:
            module = super()._split_scope(nodeid)
            return "tests/app/orchestrator (shared_server)" if module in SHARED_SERVER_MODULES else module

        def _assign_work_unit(self, node: Any) -> None:
            if not self.ordered:  # the first hand-out: the queue is complete, put the heaviest first
                self.ordered = True
                def weight(scope: str) -> float:
                    modules = Counter(nodeid.split("::")[0] for nodeid in self.workqueue[scope])
                    return sum(SLOW_MODULES.get(module, n) for module, n in modules.items())

                for scope in sorted(self.workqueue, key=weight, reverse=True):
                    self.workqueue.move_to_end(scope)
            super()._assign_work_unit(node)

    return _ModulesHeaviestFirst(config, log)
