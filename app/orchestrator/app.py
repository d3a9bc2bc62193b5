"""``create_server_app``: the server's Flask app (server mode's one gunicorn worker).

It answers the instance API itself, reads lifecycle events from the manager, serves the
dashboard, and forwards every browser route to the instance that owns it. Instances are the
manager's (``app.orchestrator``); this process only keeps a copy of their table for routing.
Auth, agent sessions, the error shape and the config are the ones the bridge uses too
(``app.access``, ``app.web.errors``, ``app.config``); the bridge's routes are read from the
reference app ``app.serving.apps`` builds, so this package never imports the bridge's.
"""
from __future__ import annotations

import time
from typing import Any

from flask import Flask, Response, g, request

from ..access import auth, web_origin
from ..config import Config
from ..web import activity, errors, public
from ..web.flask_app import App
from ..web.openapi import init_api
from .client import ManagerClient
from .mirror import InstanceMirror
from .state import ServerState
from .upstream import TabLocator, Upstream


class _FrontDoor:
    """WSGI in front of the token check for the dashboard's static files: public, they hold no
    data. (``/api/events``, which an ``EventSource`` reads without headers, takes the login cookie;
    a ``?token=`` in the query is no credential, as in the original: URLs end up in logs.)"""

    def __init__(self, app: Any, public: Any) -> None:
        self.app = app
        self.public = public

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ.get("PATH_INFO", "")
        if public.is_dashboard_page(path):
            return self.public(environ, start_response)
        return self.app(environ, start_response)


# The server's own changes, logged here because no instance sees them: instances started and
# stopped, agent sessions made or revoked, profiles changed. Browser calls are the instances' to log.
CHANGE_BLUEPRINTS = frozenset({"instances", "profiles", "sessions", "server"})
CHANGE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
FORWARDED_CHANGES = ("/tabs/open",)  # done by the instance's own POST /tab, which it logs


def _record_changes(app: Flask, store: Any) -> None:
    """Log each change made through the server's own routes, as an instance logs a browser call."""

    @app.after_request
    def record_change(resp: Response) -> Response:
        if (request.method not in CHANGE_METHODS or request.blueprint not in CHANGE_BLUEPRINTS
                or request.path.endswith(FORWARDED_CHANGES)):
            return resp
        answer = resp.get_json(silent=True) if resp.is_json and not resp.is_streamed else None
        answer = answer if isinstance(answer, dict) else {}
        args = request.view_args or {}
        instance = args.get("instance_id") or (answer.get("id") if request.path.startswith("/instances") else "")
        store.record({"agentId": g.get("session_agent") or request.headers.get("X-Agent-Id", ""),
                      "method": request.method, "path": request.path, "status": resp.status_code,
                      "instanceId": instance if isinstance(instance, str) else "",
                      "profileName": answer.get("profileName") if isinstance(answer.get("profileName"), str) else "",
                      "action": request.endpoint or ""})
        return resp


def create_server_app(config: Config, *, bridge: Flask, client: ManagerClient | None = None,
                      start_watch: bool = True) -> Flask:
    """The server app, forwarding ``bridge``'s routes (the reference copy :func:`app.serving.apps.server_app`
    builds); ``client`` reaches the manager (default: the socket under the state dir)."""
    from ..access import session_routes as sessions
    from .routes import dashboard, debug, events, instances, login, profiles, proxy, screencast, server, tasks

    app = App("pinchtab-server", static_folder=None)
    app.config["MAX_CONTENT_LENGTH"] = config.server.max_body_bytes
    client = client or ManagerClient.for_state_dir(config.server.state_dir)
    mirror = InstanceMirror(client)
    upstream = Upstream(config)
    locator = TabLocator(mirror, upstream)
    mirror.on_change(locator.forget_instances)
    app.extensions["pinchtab.config"] = config
    app.extensions["pinchtab.server"] = ServerState(config=config, client=client, mirror=mirror, upstream=upstream,
                                                    locator=locator, started=time.monotonic())

    api = init_api(app, "Pinchtab server", "Browser instances, profiles and the browser API of each instance.")
    errors.register(app)  # after the Api: its HTTP error handler gives way to our one error shape
    auth.register(app, config.server.token)
    login.init_app(app, config)
    sessions.init_app(app, config)
    modules = [instances, profiles, events, login, sessions, server]
    if config.scheduler.enabled:
        tasks.init_app(app)
        modules.append(tasks)
    for module in modules:
        api.register_blueprint(module.bp)
    app.register_blueprint(proxy.build_blueprint(bridge, debug.VIEWS))
    debug.init_app(app, config)  # debug sessions live in instances: routed by session, WebSocket relayed
    screencast.init_app(app)  # the screencast WebSocket, relayed to the tab's instance
    proxy.document(api.document(), bridge, app)  # the server starts once: describe it now

    @app.after_request
    def retry_after(resp: Response) -> Response:
        if g.get("retry_after_s"):
            resp.headers["Retry-After"] = str(g.retry_after_s)
        return resp

    if config.observability.activity.enabled:
        # Read-only here: every instance appends its browser calls to this same dir (the manager
        # links each instance's activity dir to it), under the instance's own profile name. Logging
        # proxied calls here as well would write each one twice.
        from profiles import ActivityLog

        app.extensions["pinchtab.activity"] = ActivityLog(activity.server_dir(config.server.state_dir),
                                                          config.observability.activity.retention_days)
        _record_changes(app, app.extensions["pinchtab.activity"])
    app.wsgi_app = _FrontDoor(app.wsgi_app, dashboard.public_app())  # type: ignore[method-assign]
    # The dashboard's page and files hold no data (and may not be framed): a link from anywhere may open them.
    web_origin.admit(app, web_origin.Door(public.DASHBOARD_PAGE, prefix=True))
    web_origin.admit(app, web_origin.Door(public.LOGIN_PAGE))
    web_origin.install(app, config.server)  # outermost: a page's request is refused before any work
    if start_watch:
        mirror.start()
    return app

