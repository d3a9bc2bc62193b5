"""The bridge app as server mode reads it: its routes and their documentation, never a browser.

Server mode forwards every bridge route to the instance that owns it, and learns those routes
from the bridge app itself, so a route added to the bridge is served there with no change. This
module builds that reference copy. It sits here, beside the gunicorn applications that build both
apps, so that the server's package (``app.orchestrator``) never imports the bridge's (``app.api``).
"""
from __future__ import annotations

import dataclasses

from flask import Flask

from ..config import Config


def reference_bridge(config: Config) -> Flask:
    """The bridge app, built only to read its routes and their documentation: no browser, no activity log."""
    from ..api import create_app

    obs = config.observability
    quiet = dataclasses.replace(config, observability=dataclasses.replace(
        obs, activity=dataclasses.replace(obs.activity, enabled=False)))
    return create_app(quiet, start_browser=False)
