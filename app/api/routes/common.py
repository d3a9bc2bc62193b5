"""What the browser API's views share: the browser state, the caller, running work on a tab, URLs."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar, cast

from flask import current_app, g

from cdp.tab import Tab

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


def tab_command(tab: Tab, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One CDP command on the tab (straight from this thread when the tab is idle: ``Tab.command``),
    bounded by the action timeout."""
    return tab.command(method, params, state().config.timeouts.action_sec)


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
    """The URL to hand the browser, as the navigation policy judges it (:mod:`app.policy.navigation`:
    400 ``bad_url`` or a 403 naming the rule when it refuses). Its warning (a host off
    ``security.allowedDomains`` outside strict mode) goes on the response."""
    allowed = state().navigation.check(url, field)
    idpi_hooks.record(allowed.warning)
    return allowed.url
