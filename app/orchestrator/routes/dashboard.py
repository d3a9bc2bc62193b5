"""GET /dashboard: one page for people (instances, their tabs with live screenshots, events).

The page and its files ship as package data (``app/orchestrator/static/dashboard``), read with
``importlib.resources``: no CDN, it works offline. They hold no data, so they are served without
the token, by a small app of their own in front of the token check; the page asks for the token
and sends it as a bearer header on every API call.
"""
from __future__ import annotations

import mimetypes
from importlib import resources

from flask import Blueprint, Flask, Response, redirect

from ...web import errors
from ...web.errors import NotFound
from ...web.flask_app import App

bp = Blueprint("dashboard", __name__)

# The page's scripts, in the order index.html loads them (they share one scope).
SCRIPTS = ("dashboard.js", "dashboard_instances.js", "dashboard_activity.js", "dashboard_debug.js",
           "dashboard_debug_sessions.js", "dashboard_sessions.js", "dashboard_start.js")
FILES = ("index.html", "dashboard.css", *SCRIPTS)
# The page loads only its own files and talks only to this server; screenshots are blob: URLs.
CSP = ("default-src 'self'; img-src 'self' blob: data:; connect-src 'self'; style-src 'self'; "
       "script-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")


def asset(name: str) -> bytes:
    """One of the dashboard's files; raises NotFound for anything else."""
    if name not in FILES:
        raise NotFound(f"no dashboard file {name!r}")
    return resources.files("app.orchestrator").joinpath("static", "dashboard", name).read_bytes()


def _serve(name: str) -> Response:
    mime = mimetypes.guess_type(name)[0] or "application/octet-stream"
    resp = Response(asset(name), mimetype=mime)
    resp.headers["Content-Security-Policy"] = CSP
    resp.headers["X-Content-Type-Options"] = "nosniff"
    resp.headers["X-Frame-Options"] = "DENY"
    resp.headers["Cache-Control"] = "no-cache"
    return resp


@bp.get("/dashboard")
def page() -> Response:
    """The dashboard page (no token needed; it asks for one)."""
    return _serve("index.html")


@bp.get("/login")
def login_page() -> Response:
    """The login page: the dashboard, which asks for the token once and then keeps a cookie."""
    return _serve("index.html")


@bp.get("/dashboard/")
def page_slash() -> Response:
    return redirect("/dashboard", code=308)


@bp.get("/dashboard/<name>")
def static_file(name: str) -> Response:
    return _serve(name)


def public_app() -> Flask:
    """The dashboard's files as an app of their own (no token check), for the server's front door."""
    app = App("pinchtab-dashboard", static_folder=None)
    errors.register(app)
    app.register_blueprint(bp)
    return app
