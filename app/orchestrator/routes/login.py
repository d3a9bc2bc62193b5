"""POST /api/auth/login|logout|elevate: the dashboard's cookie login (``app.orchestrator.login``).

A person types the token once on the login page; the answer sets an HttpOnly, SameSite=Strict
cookie (Secure when served over https), and ``app.auth`` accepts it from then on (with its CSRF
rule for changes; ``auth.require_admin`` asks for the token again before the changes that matter
most).
"""
from __future__ import annotations

import hmac

from flask import Flask, Response, current_app, g, jsonify, request

from profiles.times import utc_iso

from ... import auth, forwarded
from ...config import Config
from ...errors import APIError, BadRequest, Forbidden, Unauthorized
from ...openapi import Blueprint
from ..login import LoginStore
from .schemas import LoginResponse, LoginSchema

bp = Blueprint("login", __name__)
PUBLIC_PATHS = frozenset({"/api/auth/login", "/api/auth/logout"})


def init_app(app: Flask, config: Config) -> LoginStore:
    """Give the app its login table (its limits from ``sessions.dashboard``) and let the login and
    logout calls through without a token."""
    limits = config.sessions.dashboard
    store = LoginStore(idle_s=limits.idle_timeout_sec, max_age_s=limits.max_lifetime_sec,
                       elevation_s=limits.elevation_window_sec, limiter=auth.guess_limiter(app))
    app.extensions[auth.LOGINS] = store
    auth.allow_public(app, lambda req: req.method == "POST" and req.path in PUBLIC_PATHS)
    return store


def logins() -> LoginStore:
    return current_app.extensions[auth.LOGINS]


def _cross_site() -> bool:
    # A login or logout from another site's page: never ours (the page sends Origin on POST).
    return bool(request.headers.get("Origin")) and not auth.same_origin(request)


def _check_token(given: str) -> None:
    token = current_app.extensions["pinchtab.config"].server.token
    if not token:
        raise APIError("this server has no token: there is nothing to log in to", status=409, code="no_token")
    # Behind a proxy, the client it forwarded (X-Forwarded-For), not the proxy: else one guesser
    # would lock every person out, and all of them would share one allowance.
    client = forwarded.request_client(request)
    auth.refuse_if_guessing(current_app, client, "too many failed logins from this address")
    if not hmac.compare_digest(given.encode(), token.encode()):
        auth.count_guess(current_app, client)
        raise Unauthorized("bad token", code="bad_token")


@bp.post("/api/auth/login")
@bp.arguments(LoginSchema)
@bp.response(200, LoginResponse)
def login(req: dict[str, str]) -> Response:
    """Trade the token for a login cookie (HttpOnly, SameSite=Strict; Secure over https)."""
    if _cross_site():
        raise Forbidden("login from another site's page", code="csrf_failed")
    _check_token(req["token"])
    cookie, made = logins().create()
    resp = jsonify({"status": "ok", "csrfToken": made.csrf, "elevatedUntil": utc_iso(made.elevated_until)})
    resp.set_cookie(auth.COOKIE, cookie, max_age=int(logins().max_age_s), path="/", httponly=True, samesite="Strict",
                    secure=request.is_secure)
    return resp


@bp.post("/api/auth/logout")
@bp.response(200, LoginResponse)
def logout() -> Response:
    """End this browser's login (its cookie stops working at once)."""
    if _cross_site():
        raise Forbidden("logout from another site's page", code="csrf_failed")
    cookie = request.cookies.get(auth.COOKIE, "")
    if cookie:
        logins().revoke(cookie)
    resp = jsonify({"status": "logged_out"})
    resp.delete_cookie(auth.COOKIE, path="/", httponly=True, samesite="Strict", secure=request.is_secure)
    return resp


@bp.post("/api/auth/elevate")
@bp.arguments(LoginSchema)
@bp.response(200, LoginResponse)
def elevate(req: dict[str, str]) -> Response:
    """Type the token again: for a few minutes this login may change the config, sessions, shutdown."""
    if g.get("auth") != "cookie":
        raise BadRequest("only a dashboard login elevates (a bearer token already may do everything)",
                         code="not_a_login")
    _check_token(req["token"])
    until = logins().elevate(g.login)
    return jsonify({"status": "elevated", "elevatedUntil": utc_iso(until)})
