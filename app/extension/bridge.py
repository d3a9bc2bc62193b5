"""``pinchtab bridge --extension``: the extension's own port beside the browser API.

The extension's endpoints (``/extension/info``, the relay, and the polling daemon's ``/poll``,
``/response``, ``/health``, with the pairing token required) are served on a port of their own,
loopback only, by a small threaded server inside the bridge's process: the relay's connection and
the Browser that runs over it must live in the same process. The browser API keeps its port, its
token and its routes; only its Browser differs: it runs over the relay once the extension connects.
"""
from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Self

from flask import Flask

from cdp.browser import Browser

from ..access import web_origin
from ..config import Config
from ..process.local_server import LocalServer
from ..web import errors
from ..web.flask_app import App
from ..web.openapi import init_api
from . import pairing
from .channel import init_channel
from .commands import CommandQueue
from .http import init_endpoints
from .relay import Relay, init_relay

log = logging.getLogger(__name__)

DEFAULT_PORT = 19222
LOOPBACK = "127.0.0.1"


def create_extension_app(relay: Relay, config: Config) -> Flask:
    """The extension port's app: the relay, and the polling daemon's endpoints with pairing on."""
    app = App("pinchtab.extension")
    app.config["MAX_CONTENT_LENGTH"] = config.server.max_body_bytes
    api = init_api(app, "Pinchtab extension port", "Where the Pinchtab extension connects to a bridge.")
    errors.register(app)
    init_relay(app, relay, allowed_ids=config.extension.allowed_ids)
    init_endpoints(app, api, relay.commands, allowed_ids=config.extension.allowed_ids, pairing=relay.pairing_token)
    init_channel(app)   # our extension's way in: a WebSocket instead of a poll and a POST per command
    web_origin.install(app, config.server)
    return app


class ExtensionServer(LocalServer):
    """The extension port, on loopback, for this user's programs only (another user's connections
    are closed unread: the pairing token is a file they cannot read, but they need not try)."""

    def __init__(self, app: Flask, port: int, host: str = LOOPBACK) -> None:
        super().__init__(app, host, port, name="extension-port", quiet=True, same_user_only=True)

    def start(self) -> Self:
        super().start()
        log.info("extension port: listening on %s:%d", LOOPBACK, self.port)
        return self


def serve_extension(app: Flask, config: Config, port: int = DEFAULT_PORT,
                    connect_wait_s: float = 5.0) -> Callable[[], Browser]:
    """Start the extension port for the bridge ``app``; returns the bridge's browser factory.

    The factory's Browser reaches the person's Chrome through the relay; it raises LaunchError
    ("waiting for the extension ...") when no extension connects within ``connect_wait_s``.
    Raises OSError when the port is taken or the pairing token cannot be written.
    """
    relay = Relay(pairing.load_or_create(config.server.state_dir), connect_wait_s=connect_wait_s)
    # The polling side's queue: the original commands, for whoever submits them (tests, future clients).
    relay.commands = CommandQueue(timeout_s=float(config.extension.command_timeout_sec),
                                  queue_ttl_s=float(config.extension.queue_ttl_sec) or None)
    server = ExtensionServer(create_extension_app(relay, config), port).start()
    app.extensions["pinchtab.relay"] = relay
    app.extensions["pinchtab.extension_port"] = server.port
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(server.stop)

    def connected() -> None:
        # Start the browser over the new connection now, not on the next request: /health turns ok.
        state = app.extensions.get("pinchtab")
        if state is not None:
            try:
                state.ensure()
            except Exception as exc:  # the next request tries again, and says why
                log.warning("extension port: the browser did not start over the relay: %s", exc)

    relay.on_connect = connected

    def browser() -> Browser:
        # The person's own Chrome: no stealth (it is no automated browser) and nothing launched.
        return Browser(transport_factory=relay.transport, stealth_level="off")

    return browser

