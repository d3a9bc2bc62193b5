"""Our extension against ``pinchtab ext daemon``, driven by ``pinchtab ext`` over the Unix socket, on a
real Chromium: the original protocols end to end, with our extension's held poll."""
from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import pytest
from support.config import make_config
from support.extension_browser import ExtensionBrowser
from support.waits import wait_until

from app.clients.cli import main
from app.extension.commands import CommandQueue
from app.extension.daemon import Daemon
from app.extension.http import init_endpoints
from app.process.local_server import LocalServer
from app.web import errors
from app.web.flask_app import App
from app.web.openapi import init_api


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Daemon, ExtensionBrowser]]:
    tmp = tmp_path_factory.mktemp("ext-daemon")
    daemon = Daemon(make_config(tmp), socket_path=tmp / "browser" / "browser.sock", port=0).start()
    chrome = ExtensionBrowser().start()
    chrome.configure(daemon.url, "")   # the daemon is not paired: the original extension cannot be
    wait_until(lambda: daemon.commands.extension_seen_ago_s() is not None, 15)
    yield daemon, chrome
    chrome.stop()
    daemon.stop()


def ext(daemon: Daemon, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    """``pinchtab ext --socket S <args>``: its exit status and the answer it printed."""
    code = main(["ext", "--socket", str(daemon.sockets.path), *args])
    out = capsys.readouterr().out
    return code, json.loads(out)


def test_the_cli_drives_our_extension_through_the_daemon(setup, site, capsys):
    daemon, chrome = setup
    code, opened = ext(daemon, capsys, "open_tab", site.url("login.html"))
    assert code == 0 and opened["success"] is True, opened
    tab = str(opened["data"]["tabId"])
    code, tabs = ext(daemon, capsys, "get_tabs")
    assert code == 0 and int(tab) in [t["id"] for t in tabs["data"]]
    code, found = ext(daemon, capsys, "query", "input", "exists")
    assert found["data"] == {"exists": True, "count": 2}
    assert ext(daemon, capsys, "type", "#u", "agent", tab)[0] == 0
    assert ext(daemon, capsys, "type", "#p", "s3cret", tab)[0] == 0
    code, clicked = ext(daemon, capsys, "click", "button", "0", tab)
    assert code == 0 and clicked["data"]["clicked"] is True
    wait_until(lambda: "Welcome" in ext(daemon, capsys, "query", "body", "page_text")[1]["data"], 10)


def test_a_missing_selector_fails_with_the_reason(setup, site, capsys):
    daemon, _ = setup
    code, answer = ext(daemon, capsys, "click", "#no-such-thing")
    assert code == 1 and answer["success"] is False and "Element not found: #no-such-thing" in answer["error"]


def test_the_held_poll_brings_commands_without_the_originals_gaps(setup, capsys):
    daemon, _ = setup
    times = []
    for _ in range(20):
        t0 = time.monotonic()
        code, _answer = ext(daemon, capsys, "get_tabs")
        times.append(time.monotonic() - t0)
        assert code == 0
    # The original extension polls every 100 ms at best, with gaps of seconds; held, every command
    # goes out at once (a generous bound for a loaded machine).
    assert max(times) < 1.0, times


def test_without_the_command_channel_our_extension_polls(setup):
    # A server with only the original's endpoints (as the original daemon has): the channel's
    # upgrade is refused, and our extension takes its commands by polling instead.
    daemon, chrome = setup
    app = App("polling-only")
    errors.register(app)
    commands = CommandQueue(timeout_s=15)
    init_endpoints(app, init_api(app, "t", "t"), commands)
    with LocalServer(app, "127.0.0.1", 0, name="polling-only") as srv:
        chrome.configure(f"http://127.0.0.1:{srv.port}", "")
        try:
            answer = commands.submit({"type": "get_tabs", "data": {}, "requestId": "p1"}).wait()
            assert answer["success"] is True and isinstance(answer["data"], list), answer
        finally:
            chrome.configure(daemon.url, "")


def test_our_extension_comes_back_after_a_daemon_restart(setup, tmp_path, capsys):
    daemon, chrome = setup
    sock = tmp_path / "restart" / "browser.sock"
    first = Daemon(make_config(tmp_path), socket_path=sock, port=0).start()
    port = first.port
    try:
        chrome.configure(first.url, "")
        assert ext(first, capsys, "get_tabs")[0] == 0
        first.stop()
        again = Daemon(make_config(tmp_path), socket_path=sock, port=port).start()
        try:
            # The extension finds the new daemon by itself (its channel closed; it tries again).
            wait_until(lambda: again.commands.extension_seen_ago_s() is not None, 15)
            assert ext(again, capsys, "get_tabs")[0] == 0
        finally:
            again.stop()
    finally:
        first.stop()
        chrome.configure(daemon.url, "")
