"""Real engines the fleet tests lease browsers from: Browserless (two of them are two machines) and
chromedriver, each on a port of its own on 127.0.0.1, and the ``pinchtab server`` that leases from them.

Each costs seconds to start and to stop, so a module shares its engines and its server: a test
leaves them as it found them (its instances stopped, the engines running no browser of its), and a
test that ends an engine, as its scenario, runs on an engine no other test needs afterwards.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from support.servers import ServerProcess
from support.waits import wait_until

from bench.engines import BrowserlessProcess, ChromedriverProcess

ENGINE_START_S = 60.0


class FleetServer(ServerProcess):
    """A ``pinchtab server`` with the fleet tests' two steps: start instances, stop them."""

    def start_instances(self, *bodies: dict[str, Any]) -> list[dict[str, Any]]:
        """``POST /instances/start`` with each body in turn (each is placed before the next is
        asked for), then their records once all run: their bridges start side by side."""
        ids = []
        for body in bodies:
            r = self.post("/instances/start", json=body)
            assert r.status_code == 201, r.text
            ids.append(r.json()["id"])
        return [self.wait_status(instance_id, "running", 60) for instance_id in ids]

    def stop_instances(self, *instances: dict[str, Any]) -> None:
        """Stop them all at once; each stop answers 200."""
        with ThreadPoolExecutor(max(len(instances), 1)) as pool:
            answers = list(pool.map(lambda i: self.post(f"/instances/{i['id']}/stop"), instances))
        for answer in answers:
            assert answer.status_code == 200, answer.text


def start_all(engines: list[Any], timeout_s: float = ENGINE_START_S) -> list[Any]:
    """Wait until every engine (started together: their starts overlap) is healthy; stop them all
    if one is not."""
    try:
        for engine in engines:
            engine.wait_healthy(timeout_s)
    except BaseException:
        for engine in engines:
            engine.stop()
        raise
    return engines


@pytest.fixture(scope="module")
def browserless_engines(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., list[BrowserlessProcess]]]:
    """Start Browserless engines for the module: ``start("east", "west", token=..., concurrent=2)``
    starts one per name at once and returns them healthy; all are stopped when the module ends."""
    started: list[BrowserlessProcess] = []

    def start(*names: str, token: str = "T", concurrent: int = 2) -> list[BrowserlessProcess]:
        work = tmp_path_factory.mktemp("engines")
        engines: list[BrowserlessProcess] = []
        try:
            for name in names:
                engines.append(BrowserlessProcess(work / name, concurrent=concurrent, token=token))
        finally:
            started.extend(engines)
        return start_all(engines)

    yield start
    stop_all(started)


@pytest.fixture(scope="module")
def fleet_servers(browserless_engines: Any,
                  tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., list[FleetServer]]]:
    """Start ``pinchtab server`` processes for the module, one per config, at once (``env``: the
    variables their ``${NAME}``s read; ``token``: PINCHTAB_TOKEN), and return them ready, with no
    default instance; each is stopped, with its instances, when the module ends (before the
    module's engines)."""
    started: list[FleetServer] = []

    def start(*configs: dict[str, Any], env: dict[str, str] | None = None, token: str = "") -> list[FleetServer]:
        servers: list[FleetServer] = []
        with pytest.MonkeyPatch.context() as patch:
            for name, value in (env or {}).items():
                patch.setenv(name, value)   # read once, as each server's environment is built
            for config in configs:
                servers.append(FleetServer(tmp_path_factory.mktemp("fleet-server"), config, token=token))
                started.append(servers[-1])
        for server in servers:
            server.wait_ready(default_instance=False)
        return servers

    yield start
    stop_all(started)


def stop_all(processes: list[Any]) -> None:
    """Stop them all at once (each stop waits on its own process's graceful exit)."""
    with ThreadPoolExecutor(max(len(processes), 1)) as pool:
        list(pool.map(lambda p: p.stop(), processes))


@pytest.fixture(scope="module")
def browserless_pair(browserless_engines: Callable[..., list[BrowserlessProcess]]) -> list[BrowserlessProcess]:
    """Two Browserless for the module, room for two browsers each, started together: one the tests
    share, one for the test that ends it."""
    return browserless_engines("shared", "spare")


@pytest.fixture()
def browserless(browserless_pair: list[BrowserlessProcess]) -> BrowserlessProcess:
    """The module's shared Browserless, running no browser when the test starts."""
    shared = browserless_pair[0]
    wait_until(lambda: shared.browsers() == set(), 15)   # the last test's close as their connections end
    return shared


@pytest.fixture()
def doomed_browserless(browserless_pair: list[BrowserlessProcess]) -> BrowserlessProcess:
    """The module's spare Browserless, for the one test whose scenario ends it."""
    spare = browserless_pair[1]
    spare.raise_if_exited()
    return spare


@pytest.fixture(scope="session")
def chromedriver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ChromedriverProcess]:
    """One chromedriver for the run: each session it makes is a browser and a profile of its own."""
    engine = start_all([ChromedriverProcess(tmp_path_factory.mktemp("chromedriver"))], 20.0)[0]
    yield engine
    engine.stop()
