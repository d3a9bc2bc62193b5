"""Helpers the browser blueprints share: running work on a tab and checking URLs."""
from __future__ import annotations

from typing import Any, Callable
from urllib.parse import urlparse

from cdp.tab import Tab

from ..browser_state import bridge
from ...errors import BadRequest, Forbidden


def on_tab(tab: Tab, fn: Callable[[Tab], Any], timeout_s: float | None = None) -> Any:
    """Run ``fn(tab)`` on the tab's worker, bounded by the action timeout."""
    return tab.run(lambda: fn(tab), timeout_s or bridge().config.timeouts.action_sec)


def check_url(url: str) -> str:
    """A URL we may navigate to: http(s) and about:blank, file: only when allowed."""
    parsed = urlparse(url)
    scheme = parsed.scheme.lower()
    if not scheme and url and not url.startswith(("/", ".")):
        url = "https://" + url  # "example.com" as people type it
        parsed = urlparse(url)
        scheme = "https"
    if url == "about:blank":
        return url
    if scheme in ("http", "https"):
        if not parsed.hostname:
            raise BadRequest(f"invalid URL: {url!r} has no host", code="bad_url")
        return url
    if scheme == "file":
        if not bridge().config.security.allow_file_scheme:
            raise Forbidden("file: URLs are disabled; enable security.allowFileScheme in config",
                            code="file_scheme_disabled", details={"setting": "security.allowFileScheme"})
        return url
    raise BadRequest(f"invalid URL scheme: {scheme or '(none)'}; only http, https and about:blank are allowed",
                     code="bad_url")
