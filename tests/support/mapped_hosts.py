"""Test host names the browser maps to this machine while the policies take them for public hosts.

Downloads and the scrape's HTTP fetches refuse hosts on this machine, and every test server listens
on 127.0.0.1. So the tests that need such fetches run a browser whose host-resolver rules send
``fixtures.test`` (and any other name they list) to 127.0.0.1, and give the policies a resolver that
answers a public address for ``fixtures.test``.
"""
from __future__ import annotations

from collections.abc import Iterator

from cdp.browser import Browser

PUBLIC = "93.184.216.34"
FIXTURES = "fixtures.test"


class OnceBrowser(Browser):
    """Started once by its module; a bridge's start() finds it running and leaves it be."""

    def start(self) -> None:
        if not self.alive():
            super().start()


def mapped_browser(*names: str) -> Iterator[Browser]:
    """A module fixture's body: a browser that sends ``fixtures.test`` and ``names`` to 127.0.0.1."""
    rules = ", ".join(f"MAP {name} 127.0.0.1" for name in (FIXTURES, *names))
    b = OnceBrowser(extra_flags=(f"--host-resolver-rules={rules}",))
    b.start()
    yield b
    b.stop()


def fixtures_resolver(host: str) -> list[str]:
    """The policies' view of names: fixtures.test is a public host."""
    return [PUBLIC] if host == FIXTURES else []
