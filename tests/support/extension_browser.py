"""``pinchtab bridge --extension`` in the test process, with a real Chromium running our extension
(``bench.extension_browser``, shared with the benchmarks)."""
from __future__ import annotations

from typing import Any

from bench.extension_browser import ExtensionBrowser, extension_dir

__all__ = ["ExtensionBridge", "ExtensionBrowser", "extension_dir"]


class ExtensionBridge:
    """``pinchtab bridge --extension`` in this process: the API app (reached with Flask's test client)
    and its extension port (a real server on a free port), with ``chrome``'s extension connected."""

    def __init__(self, tmp_path: Any, chrome: ExtensionBrowser, **overrides: Any) -> None:
        from app.api import create_app
        from support.config import make_config

        self.app = create_app(make_config(tmp_path, **overrides), extension_port=0)
        self.app.testing = True
        self.relay = self.app.extensions["pinchtab.relay"]
        self.url = f"http://127.0.0.1:{self.app.extensions['pinchtab.extension_port']}"
        self.chrome = chrome

    def connect(self, timeout_s: float = 15.0) -> ExtensionBridge:
        """Point the extension here and wait until the bridge's browser runs over it."""
        from support.waits import wait_until

        self.chrome.configure(self.url, self.relay.pairing_token)
        client = self.client()
        wait_until(lambda: client.get("/health").json["status"] == "ok", timeout_s, 0.05)
        return self

    def client(self, agent: str | None = None) -> Any:
        """A test client (one per thread), as ``agent`` when given (X-Agent-Id)."""
        c = self.app.test_client()
        if agent:
            c.environ_base["HTTP_X_AGENT_ID"] = agent
        return c

    def stop(self) -> None:
        self.app.extensions["pinchtab"].stop()
        for hook in self.app.extensions.get("pinchtab.on_shutdown", ()):
            hook()
