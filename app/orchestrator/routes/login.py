"""POST /api/auth/login|logout|elevate: the dashboard's cookie login (``app.orchestrator.login``).

A person types the token once on the login page; the answer sets the ``pinchtab_auth_token``
cookie (HttpOnly, SameSite=Strict; Secure per ``server.cookieSecure``, by default when the request
came over https: TLS here, or a trusted proxy's ``X-Forwarded-Proto``), and ``app.access.auth`` accepts it
from then on on the dashboard's routes (with its CSRF rule for changes; ``auth.require_admin`` and
``auth.require_elevation`` ask for the token again, ``/api/auth/elevate``, before the changes that
matter most). The answers are the original's (``{"status": "ok"}``, ``elevationWindowSec``) with
our CSRF value and elevation end added.
"""
from __future__ import annotations

import hmac
from typing import Any

from flask import Flask, Response, after_this_request, current_app, g, request
from marshmallow import Schema, fields, validate

from profiles.times import utc_iso

from ...access import auth, forwarded
from ...config import Config
from ...web.errors import APIError, BadRequest, Forbidden, Unauthorized
from ...web.openapi import Blueprint
from ...web.schemas import Strict
from ..login import LoginStore


class LoginSchema(Strict):
    """``POST /api/auth/login`` and ``/api/auth/elevate``: the server's token, typed by a person."""

    token = fields.String(required=True, validate=validate.Length(min=1, max=4096))


class LoginResponse(Schema):
    status = fields.String(required=True, metadata={"description": "ok"})
    csrfToken = fields.String(metadata={"description": "send it as X-CSRF-Token on changes (or rely on Origin)"})
    elevationWindowSec = fields.Integer(metadata={"description": "how long an elevation lasts"})
    elevatedUntil = fields.String(metadata={"description": "elevate: when this login's elevation ends"})


bp = Blueprint("login", __name__)


def init_app(app: Flask, config: Config) -> LoginStore:
    """Give the app its login table (its limits from ``sessions.dashboard``). The login and logout
    calls need no token: they are public routes (``app.web.public``)."""
    limits = config.sessions.dashboard
    store = LoginStore(idle_s=limits.idle_timeout_sec, max_age_s=limits.max_lifetime_sec,
                       elevation_s=limits.elevation_window_sec, limiter=auth.guess_limiter(app))
    app.extensions[auth.LOGINS] = store
    return store


def logins() -> LoginStore:
    return current_app.extensions[auth.LOGINS]


def _config() -> Config:
    return current_app.extensions["pinchtab.config"]


def _cross_site() -> bool:
    # A login or logout from another site's page: never ours (the page sends Origin on POST).
    return bool(request.headers.get("Origin")) and not auth.same_origin(request)


def _secure() -> bool:
    """The cookie's Secure flag: ``server.cookieSecure`` when set, else whether the request came
    over https (the proxy's word only under ``server.trustProxyHeaders``)."""
    setting = _config().server.cookie_secure
    return setting if setting is not None else forwarded.request_scheme(request) == "https"


def _check_token(given: str, *, at_login: bool) -> None:
    token = _config().server.token
    if not token:
        raise APIError("this server has no token: there is nothing to log in to", status=409, code="no_token")
    # Behind a proxy, the client it forwarded (X-Forwarded-For, with server.trustProxyHeaders), not
    # the proxy: else one guesser would lock every person out, and all of them share one allowance.
    client = forwarded.request_client(request)
    auth.refuse_if_guessing(current_app, client, "too many failed logins from this address", login=at_login)
    if not hmac.compare_digest(given.encode(), token.encode()):
        auth.count_guess(current_app, client)
        raise Unauthorized("bad token", code="bad_token")


def _set_cookie(value: str, max_age: int) -> None:
    """Set the login cookie on this request's answer (``value`` empty: delete it)."""
    secure = _secure()

    @after_this_request
    def cookie(resp: Response) -> Response:
        if value:
            resp.set_cookie(auth.COOKIE, value, max_age=max_age, path="/", httponly=True, samesite="Strict",
                            secure=secure)
        else:
            resp.delete_cookie(auth.COOKIE, path="/", httponly=True, samesite="Strict", secure=secure)
        return resp


@bp.post("/api/auth/login")
@bp.arguments(LoginSchema)
@bp.response(200, LoginResponse)
def login(req: dict[str, str]) -> dict[str, Any]:
    """Trade the token for a login cookie (HttpOnly, SameSite=Strict; Secure over https)."""
    if _cross_site():
        raise Forbidden("login from another site's page", code="origin_forbidden")
    if _config().server.cookie_secure and forwarded.request_scheme(request) != "https":
        # The browser would drop a Secure cookie set over http: say why instead of a login that never sticks.
        raise BadRequest("server.cookieSecure is true: log in over https (a TLS proxy in front also needs "
                         "server.trustProxyHeaders)", code="secure_cookie_requires_https",
                         details={"setting": "server.cookieSecure"})
    _check_token(req["token"], at_login=True)
    old = request.cookies.get(auth.COOKIE, "")
    if old:  # this browser's previous login is replaced, not left alive beside the new one
        logins().revoke(old)
    cookie, made = logins().create()
    _set_cookie(cookie, int(logins().max_age_s))
    return {"status": "ok", "csrfToken": made.csrf, "elevationWindowSec": int(logins().elevation_s)}


@bp.post("/api/auth/logout")
@bp.response(200, LoginResponse)
def logout() -> dict[str, Any]:
    """End this browser's login (its cookie stops working at once)."""
    if _cross_site():
        raise Forbidden("logout from another site's page", code="origin_forbidden")
    cookie = request.cookies.get(auth.COOKIE, "")
    if cookie:
        logins().revoke(cookie)
    _set_cookie("", 0)
    return {"status": "ok"}


@bp.post("/api/auth/elevate")
@bp.arguments(LoginSchema)
@bp.response(200, LoginResponse)
def elevate(req: dict[str, str]) -> dict[str, Any]:
    """Type the token again: for a few minutes this login may make the changes that need it."""
    if g.get("auth") != "cookie":
        raise BadRequest("only a dashboard login elevates (a bearer token already may do everything)",
                         code="not_a_login")
    _check_token(req["token"], at_login=False)
    until = logins().elevate(g.login)
    return {"status": "ok", "elevationWindowSec": int(logins().elevation_s), "elevatedUntil": utc_iso(until)}
