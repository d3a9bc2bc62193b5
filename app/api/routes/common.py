"""What the browser API's views share: the browser state, the caller, running work on a tab, URLs."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from flask import current_app, g

from cdp.tab import Tab

from ... import netguard, urls
from ...errors import BadRequest, Forbidden
from .. import idpi_hooks
from ..browser_state import BrowserState, Caller

View = TypeVar("View", bound=Callable[..., Any])


def state() -> BrowserState:
    """This app's browser state."""
    return current_app.extensions["pinchtab"]


def caller() -> Caller:
    """Who sent the current request (its ``X-Agent-Id``)."""
    return g.caller


def tab(tab_id: str | None) -> Tab:
    """The tab the request names, or the caller's current tab."""
    return state().tab(tab_id, caller())


def on_tab(tab: Tab, fn: Callable[[Tab], Any], timeout_s: float | None = None) -> Any:
    """Run ``fn(tab)`` on the tab's worker, bounded by the action timeout."""
    return tab.run(lambda: fn(tab), timeout_s or state().config.timeouts.action_sec)


def before_reading(check: Callable[[], None]) -> Callable[[View], View]:
    """Run ``check`` before the view's ``@bp.arguments`` read the request (put it above them).

    For the capabilities the config turns off: such a route answers its 403 whatever the request
    holds, and a request too big to read is refused before it is parsed.
    """

    def wrap(view: View) -> View:
        @functools.wraps(view)  # keeps the view's OpenAPI notes and its docstring for flask-smorest
        def checked(*args: Any, **kwargs: Any) -> Any:
            check()
            return view(*args, **kwargs)

        return cast(View, checked)

    return wrap


def check_url(url: str, field: str = "url") -> str:
    """The URL to hand the browser: http(s) with a valid host and port, about:blank, file: only when
    allowed. 400 ``bad_url`` naming the problem otherwise (``app.urls`` is the one parser); a host
    off ``security.allowedDomains`` is refused or flagged by the IDPI policy."""
    try:
        parsed = urls.parse(url)
    except urls.BadURL as exc:
        raise BadRequest(exc.message, code="bad_url", details={"field": field}) from None
    if parsed.scheme == "file" and not state().config.security.allow_file_scheme:
        raise Forbidden("file: URLs are disabled; enable security.allowFileScheme in config",
                        code="file_scheme_disabled", details={"setting": "security.allowFileScheme"})
    idpi_hooks.check_navigation(parsed.text)
    if parsed.host:
        allowlist = state().config.security.allowed_domains
        try:
            netguard.check_navigation_host(parsed.host, allowlist,
                                           current_app.extensions.get(netguard.RESOLVER_EXTENSION,
                                                                      netguard.system_resolver))
        except netguard.UnsafeURL as exc:
            raise Forbidden(exc.message, code="navigation_blocked",
                            details={"field": field, "host": exc.host, "setting": "security.allowedDomains"}) from None
    return parsed.text
