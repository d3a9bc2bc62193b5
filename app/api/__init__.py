"""The browser API of one bridge: ``create_app`` builds it around one browser."""
from __future__ import annotations

import atexit
import os
from collections.abc import Callable

from flask import Flask, Response, g, request

from cdp.browser import Browser

from ..access import auth, web_origin
from ..config import Config, load_config
from ..debug import init_debug
from ..policy import netguard
from ..web import activity, errors
from ..web.activity import SESSION_AGENT
from ..web.flask_app import App
from ..web.openapi import init_api
from . import caller_gone, engines, idpi_hooks, tab_policy
from .browser_state import BrowserState, Caller


def create_app(config: Config | None = None, *, start_browser: bool = True,
               browser_factory: Callable[[], Browser] | None = None, extension_port: int | None = None) -> Flask:
    """The bridge app. Starts the browser in the background unless ``start_browser`` is False.

    With ``extension_port`` (``pinchtab bridge --extension``), the browser is the person's own
    Chrome, reached through our extension, which connects to that port (0: any free one).
    """
    config = config or load_config()
    app = App("pinchtab")
    app.config["MAX_CONTENT_LENGTH"] = config.server.max_body_bytes
    if extension_port is not None:
        from ..extension.bridge import serve_extension

        browser_factory = serve_extension(app, config, extension_port)
    # Names resolve through the app's resolver, looked up when used: tests put a stub in its place.
    state = BrowserState(config, browser_factory,
                         resolver=lambda host: app.extensions.get(netguard.RESOLVER_EXTENSION,
                                                                  netguard.system_resolver)(host))
    app.extensions["pinchtab"] = state
    app.extensions["pinchtab.config"] = config

    api = init_api(app, "Pinchtab", "A browser API for AI agents.")
    errors.register(app)  # after the Api: its HTTP error handler gives way to our one error shape
    auth.register(app, config.server.token)
    caller_gone.register(app)  # a request whose client left stops waiting for (and skips) its tab work
    idpi_hooks.register(app, config)  # the prompt-injection policy's warnings on responses
    engines.register(app)  # ?browser= names an engine on every route, checked as navigate's field is

    from ..access import session_routes as sessions
    from .routes import (
        actions,
        browser_admin,
        capture,
        clipboard,
        content,
        cookies,
        debug,
        dialogs,
        emulation,
        evaluate,
        frame,
        handoff,
        inspect,
        locate,
        locks,
        logs,
        macro,
        meta,
        navigation,
        network,
        record,
        screencast,
        site,
        snapshot,
        stealth,
        storage,
        tabs,
        transfer,
    )
    from .routes import (
        state as saved_state,
    )

    for module in (tabs, navigation, snapshot, actions, content, capture, screencast, record, evaluate, locate, meta,
                   transfer, saved_state, inspect, logs, cookies, dialogs, stealth, debug, site, locks, handoff, macro,
                   storage, clipboard, emulation, browser_admin, frame, network, sessions):
        api.register_blueprint(module.bp)
    sessions.init_app(app, config)  # agent sessions: ``Authorization: Session <token>`` acts as one agent
    site.register_counters(app)  # the request counters GET /metrics reports
    hub = init_debug(app, api, config, store=config.server.state_dir / "debug" / "sessions.json")
    app.extensions.setdefault("pinchtab.on_shutdown", []).append(hub.close_all)
    screencast.init_screencast(app)  # its WebSocket, beside the JSON routes

    @app.before_request
    def identify() -> None:
        # An agent session (``Authorization: Session``) is its own agent, whatever X-Agent-Id says
        # (auth notes the session's agent in the environ; one look there finds either).
        environ = request.environ
        g.caller = Caller(agent=environ.get(SESSION_AGENT) or environ.get("HTTP_X_AGENT_ID") or None)

    @app.after_request
    def annotate(resp: Response) -> Response:
        caller: Caller | None = g.get("caller")
        if caller is None:
            return resp
        if caller.tab_id:
            resp.headers["X-PinchTab-Tab-Id"] = caller.tab_id
        if caller.browser_restarted:
            # The browser died and this request restarted it: its tabs are gone; say so.
            resp.headers["X-PinchTab-Browser-Restarted"] = "true"
            if resp.is_json and isinstance(resp.get_json(silent=True), dict):
                data = resp.get_json()
                data["browserRestarted"] = True
                resp.set_data(app.json.dumps(data))
        return resp

    activity.register(app, config)
    tab_policy.register(app, state)  # tabPolicy.lifecycle: close_idle
    if start_browser:
        state.lock_profile(owner=f"bridge:{config.server.port}:{os.getpid()}")
        state.start(background=True)
        atexit.register(state.stop)
    web_origin.install(app, config.server)  # outermost: a page's request is refused before any work
    return app
