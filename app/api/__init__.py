"""Pinchtab's Flask side: ``create_app`` builds the bridge's HTTP API around one browser."""
from __future__ import annotations

import atexit
import os
from typing import Callable

from flask import Flask, g

from cdp.browser import Browser

from .. import activity, auth, errors
from ..jsonprovider import JSONProvider
from .browser_state import Bridge
from ..config import Config, load_config



def create_app(config: Config | None = None, *, start_browser: bool = True,
               browser_factory: Callable[[], Browser] | None = None) -> Flask:
    """The bridge app. Starts the browser in the background unless ``start_browser`` is False."""
    config = config or load_config()
    app = Flask("pinchtab")
    app.json = JSONProvider(app)
    app.config["MAX_CONTENT_LENGTH"] = config.server.max_body_bytes
    bridge = Bridge(config, browser_factory)
    app.extensions["pinchtab"] = bridge
    app.extensions["pinchtab.config"] = config

    errors.register(app)
    auth.register(app, config.server.token)

    from .routes import (
        actions,
        content,
        cookies,
        dialogs,
        evaluate,
        inspect,
        locate,
        logs,
        meta,
        navigation,
        snapshot,
        state,
        stealth,
        tabs,
        transfer,
    )

    for module in (tabs, navigation, snapshot, actions, content, evaluate, locate, meta, transfer, state, inspect, logs,
                   cookies, dialogs, stealth):
        app.register_blueprint(module.bp)

    @app.after_request
    def annotate(resp):  # type: ignore[no-untyped-def]
        tab_id = g.get("tab_id")
        if tab_id:
            resp.headers["X-PinchTab-Tab-Id"] = tab_id
        if g.get("browser_restarted"):
            # The browser died and this request restarted it: its tabs are gone; say so.
            resp.headers["X-PinchTab-Browser-Restarted"] = "true"
            if resp.is_json and isinstance(resp.get_json(silent=True), dict):
                data = resp.get_json()
                data["browserRestarted"] = True
                resp.set_data(app.json.dumps(data))
        return resp

    activity.register(app, config)
    if start_browser:
        bridge.lock_profile(owner=f"bridge:{config.server.port}:{os.getpid()}")
        bridge.start(background=True)
        atexit.register(bridge.stop)
    return app
