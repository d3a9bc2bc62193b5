"""Live telemetry between a web app and coding agents: the public debug bridge's protocol (v1).

:func:`init_debug` puts the debug sessions on a Flask app: the WebSocket ``/debug`` (app and
agent peers), ``/debug/sessions``, ``/events`` (SSE) and ``/debug/sdk.js``. The bridge and the
standalone ``pinchtab debug connect`` serve the same blueprints.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:   # Flask loads with the servers, not with every `pinchtab` verb
    from flask import Flask

    from ..config import Config
    from .hub import Hub


def init_debug(app: Flask, api: Any, config: Config, *, strict_sessions: bool = True,
               store: Path | None = None) -> Hub:
    """Serve debug sessions on ``app``; ``store`` keeps the ids of made sessions across restarts."""
    from . import admission, routes, sockets
    from .hub import Hub

    hub = Hub(max_connections=config.debug.max_connections, max_session_bytes=config.debug.max_session_bytes,
              max_frame_bytes=config.debug.max_frame_bytes, strict_sessions=strict_sessions, store=store)
    sockets.init_sockets(app, hub, config.debug.max_frame_bytes)
    routes.init_routes(app, api)
    admission.install(app, config)
    return hub
