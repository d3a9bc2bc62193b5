"""``pinchtab debug connect``'s server: the debug blueprints alone, no browser, one session.

It is the original ``debug-bridge connect``: a WebSocket server at ``/debug`` for one session id
(the user's, else a random one: the original's ``default`` would admit any page that guessed it),
whose one agent is this process (its stdin and stdout). It runs on werkzeug's
threaded server in a thread of the CLI's process rather than under gunicorn: the agent is this
process's terminal, and a forking server would take stdin from it. Beyond loopback it needs the
bearer token, like every Pinchtab server; apps are then admitted by the session id alone (and
``debug.allowedOrigins``), so the id must be long enough not to be guessed.
"""
from __future__ import annotations

from flask import Flask

from ..access import auth, web_origin
from ..config import Config, ConfigError, is_loopback
from ..process.local_server import LocalServer
from ..web import errors
from ..web.flask_app import App
from ..web.openapi import init_api
from . import init_debug
from .hub import Hub, Session

MIN_EXPOSED_SESSION_LEN = 16


def create_debug_app(config: Config) -> Flask:
    app = App("pinchtab-debug")
    api = init_api(app, "Pinchtab debug bridge", "Live telemetry sessions between web apps and agents.")
    errors.register(app)
    auth.register(app, config.server.token)
    init_debug(app, api, config, strict_sessions=False)
    web_origin.install(app, config.server)
    return app


def check_exposure(host: str, session_id: str, token: str) -> None:
    if is_loopback(host) or host == "localhost":
        return
    if not token:
        raise ConfigError("server.token", f"listening on {host} needs a token: set PINCHTAB_TOKEN or server.token "
                                          "(agents must send it; apps join with the session id)")
    if len(session_id) < MIN_EXPOSED_SESSION_LEN:
        raise ConfigError("--session", f"beyond loopback the session id is what admits an app: use one of at least "
                                       f"{MIN_EXPOSED_SESSION_LEN} random characters")


class StandaloneServer(LocalServer):
    """The WebSocket server of one session, serving on a thread from :meth:`start` until :meth:`stop`."""

    def __init__(self, config: Config, host: str, port: int, session_id: str) -> None:
        check_exposure(host, session_id, config.server.token)
        self.app = create_debug_app(config)
        self.hub: Hub = self.app.extensions["pinchtab.debug"]
        self.session: Session = self.hub.create(session_id)
        super().__init__(self.app, host, port, name="debug-server")

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"ws://{host}:{self.port}/debug"

    def stop(self) -> None:
        self.hub.close_all()
        super().stop()
