"""A tab of a test's shared browser on one of our own pages (the dashboard, its login), driven over
CDP as a person would: go, fill, click, read the DOM."""
from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any


class Page:
    """One tab of ``browser``; :meth:`close` when done."""

    def __init__(self, browser: Any) -> None:
        self.tab = browser.new_tab()
        self.browser = browser

    def run(self, fn: Any) -> Any:
        return self.tab.run(lambda: fn(self.tab), 30)

    def go(self, url: str) -> None:
        from cdp import navigation

        self.run(lambda t: navigation.navigate(t, url, timeout_s=20))

    def dom(self, expr: str) -> Any:
        res = self.run(lambda t: t.call("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                                             "awaitPromise": True}))
        return res["result"].get("value")

    def fill(self, selector: str, text: str) -> None:
        from cdp import actions
        from cdp.input import Target

        self.run(lambda t: actions.fill(t, Target(selector=selector), text))

    def click(self, selector: str) -> None:
        from cdp import actions
        from cdp.input import Target

        self.run(lambda t: actions.click(t, Target(selector=selector)))

    def shows(self, selector: str) -> bool:
        """Whether the element is laid out (its ``hidden`` not overruled by a stylesheet)."""
        return bool(self.dom(f"(() => {{ const e = document.querySelector({json.dumps(selector)});"
                             " return !!e && getComputedStyle(e).display !== 'none'; })()"))

    def cookies(self) -> list[dict[str, Any]]:
        return self.run(lambda t: t.call("Network.getCookies", {}))["cookies"]

    def screenshot(self, path: Path) -> None:
        shot = self.run(lambda t: t.call("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}))
        path.write_bytes(base64.b64decode(shot["data"]))

    def close(self) -> None:
        self.browser.close_tab(self.tab.id)
