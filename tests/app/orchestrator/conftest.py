"""One ``pinchtab server`` shared by the server-route, login and session tests (a server start
costs a browser launch; these tests need the same policy): a token, attach allowed for loopback,
the task queue on, screencasts allowed, forwarded headers believed from this machine (the tests
play the proxy's part, each client its own X-Forwarded-For), and an extension that does nothing loaded
into its browsers (``browser.extensionPaths``)."""
from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from support.servers import ServerProcess

SHARED_TOKEN = "shared-server-t0ken-for-tests"
BLANK_EXTENSION = "blank-extension"  # in the shared server's HOME (test_server_routes looks for it there)


@pytest.fixture(scope="session")
def shared_token() -> str:
    return SHARED_TOKEN


@pytest.fixture(scope="session")
def shared_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    home = tmp_path_factory.mktemp("shared-server-home")
    extension = home / BLANK_EXTENSION
    extension.mkdir()
    (extension / "manifest.json").write_text(json.dumps({"manifest_version": 3, "name": "pinchtab blank",
                                                         "version": "1.0"}))  # no scripts: pages never see it
    config = {"security": {"attach": {"enabled": True}, "allowScreencast": True},
              "browser": {"extensionPaths": [str(extension)]},
              "scheduler": {"enabled": True, "workers": 2, "maxPerAgent": 50},
              "server": {"trustProxyHeaders": True}}
    sp = ServerProcess(home, config, token=SHARED_TOKEN)
    try:
        sp.wait_ready()
        yield sp
    finally:
        sp.stop()
    assert SHARED_TOKEN not in sp.output()  # never in a log, whatever the tests sent
