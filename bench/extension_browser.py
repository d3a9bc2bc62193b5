"""A real Chromium with our extension loaded, for the extension-mode tests and benchmarks.

Chromium runs ``--headless=new`` (MV3 service workers run there) with a fresh profile and only our
extension. Its ``--remote-debugging-port`` is the harness's alone: it reaches the extension's service
worker to set ``pinchtab_url`` and ``pinchtab_pairing`` in ``chrome.storage.local`` (as the options
page would) and to play the person (detach the debugger); Pinchtab never uses it, unless a benchmark
attaches a second, direct bridge to compare with.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from importlib import resources
from typing import Any

import requests
import websocket

from bench.common import wait_for
from cdp.launcher import find_browser

FLAGS = (
    "--headless=new",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-dev-shm-usage",
    "--remote-debugging-port=0",
)


def extension_dir() -> str:
    return str(resources.files("app.extension").joinpath("static"))


class ExtensionBrowser:
    """Chromium with our extension; ``configure`` points the extension at a Pinchtab."""

    def __init__(self) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="pt-ext-")
        self.proc: subprocess.Popen | None = None
        self.http = ""
        self._worker: websocket.WebSocket | None = None
        self._ids = 0

    def start(self, timeout_s: float = 20.0) -> ExtensionBrowser:
        ext = extension_dir()
        flags = [*FLAGS, f"--user-data-dir={self.data_dir}", f"--load-extension={ext}",
                 f"--disable-extensions-except={ext}"]
        if os.geteuid() == 0:
            flags.append("--no-sandbox")
        self.proc = subprocess.Popen([find_browser(), *flags, "about:blank"], stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        port_file = os.path.join(self.data_dir, "DevToolsActivePort")
        deadline = time.monotonic() + timeout_s

        def port() -> str | None:
            if self.proc is not None and self.proc.poll() is not None:
                raise RuntimeError("chromium exited at start")
            try:
                with open(port_file, encoding="utf-8") as f:
                    return f.readline().strip() or None
            except FileNotFoundError:
                return None

        self.http = f"http://127.0.0.1:{wait_for(port, timeout_s, 0.05)}"
        self._worker = websocket.create_connection(wait_for(self._worker_ws, max(1.0, deadline - time.monotonic()),
                                                            0.05),
                                                   timeout=10, suppress_origin=True)
        # The worker's scope exists a moment before the extension APIs are bound into it.
        wait_for(lambda: self.evaluate("typeof chrome !== 'undefined' && !!chrome.storage && typeof OPS === 'object'"),
                 max(1.0, deadline - time.monotonic()), 0.05)
        return self

    def _worker_ws(self) -> str | None:
        """The service worker's DevTools websocket, once Chromium lists it."""
        for t in requests.get(f"{self.http}/json/list", timeout=2).json():
            if t.get("type") == "service_worker" and t.get("url", "").startswith("chrome-extension://"):
                return str(t["webSocketDebuggerUrl"])
        return None

    def evaluate(self, expression: str, timeout_s: float = 10.0) -> Any:
        """Run ``expression`` in the extension's service worker (promises awaited); its JSON value."""
        assert self._worker is not None
        self._ids += 1
        call_id = self._ids
        self._worker.settimeout(timeout_s)
        self._worker.send(json.dumps({"id": call_id, "method": "Runtime.evaluate", "params": {
            "expression": expression, "awaitPromise": True, "returnByValue": True}}))
        while True:
            msg = json.loads(self._worker.recv())
            if msg.get("id") == call_id:
                result = msg.get("result", {})
                if "exceptionDetails" in result:
                    raise RuntimeError(f"service worker: {result['exceptionDetails']}")
                return result.get("result", {}).get("value")

    def configure(self, url: str, pairing: str) -> None:
        """Set the extension's settings, as its options page does; it reconnects on the change."""
        self.evaluate(f"chrome.storage.local.set({json.dumps({'pinchtab_url': url, 'pinchtab_pairing': pairing})})"
                      ".then(() => true)")

    def stop(self) -> None:
        if self._worker is not None:
            self._worker.close()
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.data_dir, ignore_errors=True)
