"""Who may call: the bearer token on every route but ``GET /health``, compared in constant time.

Two more credentials are accepted where the app provides their store (server mode does):

* ``Authorization: Session <token>``, an agent session (``app.orchestrator.sessions``): the caller
  is that session's agent (``g.session_agent``), whatever ``X-Agent-Id`` it sends;
* the dashboard's login cookie (``app.orchestrator.login``), for people in a browser. A cookie is
  sent by the browser on its own, so a request that changes something must also prove it comes
  from our own page: a same-origin ``Origin`` (or ``Referer``), or the login's CSRF header.

``g.auth`` says which one a request used: ``"bearer"``, ``"session"`` or ``"cookie"``.
"""
from __future__ import annotations

import hmac
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

from flask import Flask, Request, current_app, g, request

from .errors import Forbidden, Unauthorized

PUBLIC = {("GET", "/health"), ("HEAD", "/health")}
_EXTRA = "pinchtab.public_requests"
SESSIONS = "pinchtab.agent_sessions"
LOGINS = "pinchtab.dashboard_logins"
COOKIE = "pinchtab_session"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})


class SessionResolver(Protocol):
    """Turns an agent-session token into its agent id (None: unknown, expired or revoked)."""

    def resolve(self, token: str) -> str | None: ...


class LoginResolver(Protocol):
    """Turns a login cookie into its login (None: unknown or expired); the login has ``csrf``."""

    def resolve(self, cookie: str) -> Any | None: ...

    def is_elevated(self, login: Any) -> bool: ...


def allow_public(app: Flask, predicate: Callable[[Request], bool]) -> None:
    """Let requests ``predicate`` accepts through without the token (they carry another capability)."""
    app.extensions.setdefault(_EXTRA, []).append(predicate)


def same_origin(req: Request) -> bool:
    """Whether the request's ``Origin`` (else ``Referer``) is this server's own origin."""
    source = req.headers.get("Origin") or req.headers.get("Referer") or ""
    if not source or source == "null":
        return False
    try:
        parts = urlsplit(source)
    except ValueError:
        return False
    return f"{parts.scheme}://{parts.netloc}".lower() == req.host_url.rstrip("/").lower()


TOKEN = "pinchtab.auth_token"
SESSION_AGENT = "pinchtab.session_agent"  # the WSGI environ key naming a session caller's agent


def register(app: Flask, token: str) -> None:
    if token:
        app.extensions[TOKEN] = token.encode()

    @app.before_request
    def check_token() -> None:
        if (request.method, request.path) in PUBLIC:
            return
        if any(allowed(request) for allowed in app.extensions.get(_EXTRA, ())):
            return
        if not token:
            # Loopback-only servers may run without a token (the start refuses it elsewhere). An
            # agent session still names its agent there, so a revoked or unknown one is refused.
            if request.headers.get("Authorization", "").lower().startswith("session "):
                authenticate(app, request)
            return
        if authenticate(app, request) is None:
            raise Unauthorized("missing bearer token: send 'Authorization: Bearer <token>'", code="missing_token")


def authenticate(app: Flask, req: Request) -> str | None:
    """Check the request's credentials: ``"bearer"``, ``"session"`` or ``"cookie"`` (also set as
    ``g.auth``), None when it carries none. Raises Unauthorized for bad ones and Forbidden for a
    cookie-borne change that does not come from our own page."""
    expected: bytes = app.extensions.get(TOKEN, b"")
    header = req.headers.get("Authorization", "")
    if header:
        scheme, _, given = header.partition(" ")
        scheme = scheme.lower()
        if scheme == "bearer" and expected and hmac.compare_digest(given.strip().encode(), expected):
            g.auth = "bearer"
            return g.auth
        sessions: SessionResolver | None = app.extensions.get(SESSIONS)
        if scheme == "session":
            if sessions is None:
                raise Unauthorized("agent sessions are off on this server (sessions.agent.enabled, "
                                   "sessions.agent.mode)", code="sessions_disabled")
            agent = sessions.resolve(given.strip())
            if agent is None:
                raise Unauthorized("bad, expired or revoked session token", code="bad_session")
            g.auth, g.session_agent = "session", agent
            req.environ[SESSION_AGENT] = agent  # for the activity log, which sees the WSGI environ only
            return g.auth
        raise Unauthorized("bad token", code="bad_token")
    logins: LoginResolver | None = app.extensions.get(LOGINS)
    cookie = req.cookies.get(COOKIE, "")
    if logins is None or not cookie:
        return None
    login = logins.resolve(cookie)
    if login is None:
        return None
    if req.method not in SAFE_METHODS and not (
            same_origin(req) or hmac.compare_digest(req.headers.get(CSRF_HEADER, "").encode(), login.csrf.encode())):
        raise Forbidden("a cookie-authenticated request that changes something must come from the dashboard "
                        f"(same-origin Origin or Referer, or the {CSRF_HEADER} header)", code="csrf_failed")
    g.auth, g.login = "cookie", login
    return g.auth


def require_admin(what: str, *, elevated: bool = True) -> None:
    """Refuse ``what`` to an agent session, and (``elevated``) to a dashboard login whose token was
    not typed lately (``POST /api/auth/elevate``). Bearer callers, and everyone on a server
    without a token, pass."""
    how = g.get("auth")
    if how == "session":
        raise Forbidden(f"an agent session may not {what}", code="session_forbidden")
    if elevated and how == "cookie" and not current_app.extensions[LOGINS].is_elevated(g.login):
        raise Forbidden(f"type the token again to {what} (POST /api/auth/elevate)", code="elevation_required",
                        details={"hint": "POST /api/auth/elevate {\"token\"}"})
