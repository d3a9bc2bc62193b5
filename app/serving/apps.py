"""The server's app as it is served: built with the bridge app it forwards to.

Server mode forwards every bridge route to the instance that owns it, and learns those routes
from the bridge app itself, so a route added to the bridge is served there with no change. This
module builds that reference copy (its routes and their documentation, never a browser) and hands
it to the server's app. It sits here, beside the gunicorn applications that build both apps, so
that the server's package (``app.orchestrator``) never imports the bridge's (``app.api``).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from flask import Flask

from ..config import Config, load_config


def reference_bridge(config: Config) -> Flask:
    """The bridge app, built only to read its routes and their documentation: no browser, no activity log."""
    from ..api import create_app

    obs = config.observability
    quiet = dataclasses.replace(config, observability=dataclasses.replace(
        obs, activity=dataclasses.replace(obs.activity, enabled=False)))
    return create_app(quiet, start_browser=False)


def server_app(config: Config | None = None, **options: Any) -> Flask:
    """``pinchtab server``'s Flask app (``options``: those of
    :func:`app.orchestrator.app.create_server_app`, e.g. a manager client for tests)."""
    from ..orchestrator.app import create_server_app

    config = config or load_config()
    return create_server_app(config, bridge=reference_bridge(config), **options)
