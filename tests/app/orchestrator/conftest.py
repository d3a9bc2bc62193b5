"""One ``pinchtab server`` shared by the server-route, login and session tests (a server start
costs a browser launch; these tests need the same policy): a token, attach allowed for loopback,
the task queue on, screencasts allowed."""
from __future__ import annotations

from collections.abc import Iterator

import pytest
from support.servers import ServerProcess

SHARED_TOKEN = "shared-server-t0ken-for-tests"


@pytest.fixture(scope="session")
def shared_token() -> str:
    return SHARED_TOKEN


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    home = tmp_path_factory.mktemp("shared-server-home")
    config = {"security": {"attach": {"enabled": True}, "allowScreencast": True},
              "scheduler": {"enabled": True, "workers": 2, "maxPerAgent": 50}}
    sp = ServerProcess(home, config, token=SHARED_TOKEN)
    try:
        sp.wait_ready()
        yield sp
    finally:
        sp.stop()
    assert SHARED_TOKEN not in sp.output()  # never in a log, whatever the tests sent
