"""The ``browser`` field of navigate and actions: which engine a request asks for.

Only Chromium runs here. The original's engine names are still known, so a request naming one
that this server has not configured gets 409 ``browser_conflict`` (the caller picked a real
engine we cannot serve), while a name nobody knows is a plain 400. As in the original, every route
also takes the engine as ``?browser=`` (``/text?browser=...``, ``/snapshot?browser=...``): checked the
same way before the route runs, so an unknown name is never silently served by the default engine.
"""
from __future__ import annotations

from flask import Flask, current_app, request

from ..config.settings import ENGINES, Config
from ..web.errors import BadRequest, Conflict


def check_engine(config: Config, name: str | None) -> str:
    """The engine a request runs on: ``name`` when configured, the default when omitted."""
    if name is None or name == "":
        return config.browsers.default
    engine = name.strip().lower()
    if engine not in ENGINES:
        raise BadRequest(f"unknown browser {name!r}; known: {', '.join(ENGINES)}", code="bad_browser",
                         details={"known": list(ENGINES)})
    if engine not in config.browsers.available:
        raise Conflict(f"browser {engine!r} is not configured on this server",
                       code="browser_conflict",
                       details={"available": list(config.browsers.available),
                                "hint": f'add "{engine}" to browsers.available in the config file'})
    return engine


def register(app: Flask) -> None:
    """Check ``?browser=`` on every request of the bridge (an empty value: the default engine)."""

    @app.before_request
    def _query_engine() -> None:
        if b"browser" not in request.query_string:  # most calls: no query to parse
            return
        name = request.args.get("browser")
        if name:
            check_engine(current_app.extensions["pinchtab.config"], name)
