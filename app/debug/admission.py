"""Who may join a debug session: apps with the session id as their capability, from the pages the
policy admits; agents with the bearer token too. One place for the bridge and the server alike.

A page cannot send a bearer token, so an app's WebSocket is public to the token check and is judged
by its Origin instead (the web-origin policy's doors): a loopback dev server (``localhost:*``,
``127.0.0.1:*``) or ``debug.allowedOrigins``. The page SDK's script is served to any page (it holds
no data). An agent's socket and every HTTP route need the token, as everywhere.
"""
from __future__ import annotations

from typing import Any

from flask import Flask

from ..access import auth, web_origin
from ..config import Config


def doors(allowed_origins: tuple[str, ...]) -> list[web_origin.Door]:
    """What the debug bridge takes from pages beyond the server's own: apps from a loopback dev
    server (``localhost:*``, ``127.0.0.1:*``) or ``debug.allowedOrigins``, and the page SDK's script
    from anywhere (it holds no data). An agent with a web Origin needs ``server.allowedOrigins``."""
    listed = frozenset(web_origin.normalize_origin(o) for o in allowed_origins)

    def app_origin(origin: str) -> bool:
        return web_origin.is_loopback_origin(origin) or web_origin.normalize_origin(origin) in listed

    return [web_origin.Door("/debug", app_origin, when=lambda q: q.get("role", ["app"])[0] != "agent"),
            web_origin.Door("/debug/sdk.js")]


def is_public(req: Any) -> bool:
    """An app joins with the session id as its capability (a page cannot send a bearer token)."""
    return req.path == "/debug" and req.args.get("role", "app") != "agent"


def install(app: Flask, config: Config) -> None:
    """Let apps in on ``app`` (a bridge's, a server's, ``pinchtab debug connect``'s) as above."""
    auth.allow_public(app, is_public)
    for door in doors(config.debug.allowed_origins):
        web_origin.admit(app, door)
