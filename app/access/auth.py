"""Who may call: the bearer token on every route but the public ones (``app.web.public``: ``GET
/health`` and a few more), compared in constant time.

Two more credentials are accepted where the app provides their store (server mode does):

* ``Authorization: Session <token>``, an agent session (``app.access.agent_sessions``): the caller is that
  session's agent (``g.session_agent``, the session itself ``g.agent_session``), whatever
  ``X-Agent-Id`` it sends;
* the dashboard's login cookie (``pinchtab_auth_token``, as the original names it;
  ``app.orchestrator.login``), for people in a browser. It opens only the routes the dashboard
  calls (:data:`COOKIE_ROUTES`); any other is 403 ``header_auth_required`` (a download, say: the
  browser would fetch with the user's cookies on the cookie's word alone). A cookie is sent by the
  browser on its own, so a request that changes something must also prove it comes from our own
  page: a same-origin ``Origin`` (or ``Referer``), or the login's CSRF header, else 403
  ``origin_forbidden``. That holds for every unsafe method, for WebSockets (their upgrade is a GET),
  and for the GETs that act or write a file (:func:`changes_state`).

A token in the query string (``?token=``) is no credential anywhere, as in the original: URLs end
up in logs and browser history.

``g.auth`` says which one a request used: ``"bearer"``, ``"session"`` or ``"cookie"``.

Wrong tokens are limited per client address (``app.access.ratelimit``, the address a trusted proxy
forwarded: ``app.access.forwarded``): past the limit a client gets 429 ``rate_limited`` (at the login,
the original's ``login_rate_limited``) with ``Retry-After``, whatever it sends, until its failures
age out; other clients go on.
"""
from __future__ import annotations

import hmac
import logging
import re
from collections.abc import Callable
from typing import Any, Protocol
from urllib.parse import urlsplit

from flask import Flask, Request, current_app, g, request

from ..web.activity import SESSION_AGENT
from ..web.errors import APIError, Forbidden, Unauthorized
from ..web.public import is_public_route
from . import forwarded, web_origin
from .ratelimit import FailureLimiter

log = logging.getLogger(__name__)

_EXTRA = "pinchtab.public_requests"
SESSIONS = "pinchtab.agent_sessions"
LOGINS = "pinchtab.dashboard_logins"
COOKIE = "pinchtab_auth_token"   # the original's name: its clients and scripts look for it
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
GUESSES = "pinchtab.token_guesses"  # app.extensions key: the FailureLimiter of wrong tokens
# GETs that act on the browser or write a file, by the bridge's path (``/tabs/{id}/...`` alike):
# a cookie alone must not be enough for them, as for a POST. ``output=file`` anywhere writes a file.
STATE_CHANGING_GETS = frozenset({"/navigate", "/action", "/annotate", "/download", "/network/export/stream"})
FILE_BY_DEFAULT = frozenset({"/capture"})  # GETs whose output is a file unless the query says otherwise
_TAB_PREFIX = re.compile(r"^/tabs/[^/]+(?=/)")


class AgentSessionLike(Protocol):
    """What auth needs of an agent session: its id and its agent."""

    id: str
    agent_id: str


class SessionResolver(Protocol):
    """Turns an agent-session token into its live session (None: unknown, expired or revoked)."""

    def lookup(self, token: str) -> AgentSessionLike | None: ...


class LoginResolver(Protocol):
    """Turns a login cookie into its login (None: unknown or expired); the login has ``csrf``."""

    elevation_s: float

    def resolve(self, cookie: str) -> Any | None: ...

    def is_elevated(self, login: Any) -> bool: ...


def allow_public(app: Flask, predicate: Callable[[Request], bool]) -> None:
    """Let requests ``predicate`` accepts through without the token (they carry another capability)."""
    app.extensions.setdefault(_EXTRA, []).append(predicate)


def same_origin(req: Request) -> bool:
    """Whether the request's ``Origin`` (else ``Referer``) is this server's own origin: the host and
    port of ``Host``, and the scheme when we know it (TLS here, or a trusted proxy's
    ``X-Forwarded-Proto``, :mod:`app.access.forwarded`). Without either the scheme is not compared, as
    :mod:`app.access.web_origin` does not: no other server answers on our host and port."""
    source = req.headers.get("Origin") or req.headers.get("Referer") or ""
    if not source or source == "null":
        return False
    try:
        parts = urlsplit(source)
    except ValueError:
        return False
    if not web_origin.same_origin(f"{parts.scheme}://{parts.netloc}", req.host):
        return False
    if req.scheme == "https" or forwarded.from_trusted_proxy(req):
        return parts.scheme.lower() == forwarded.request_scheme(req)
    return True


def is_websocket(req: Request) -> bool:
    """Whether the request asks to become a WebSocket."""
    return "websocket" in req.headers.get("Upgrade", "").lower()


def changes_state(req: Request) -> bool:
    """Whether the request may change something: an unsafe method, a WebSocket (the screencast and
    debug sockets drive the browser), or a GET that acts (``/navigate``, ``/action``, ...) or writes
    a file (``output=file``, and ``/capture``, whose default that is)."""
    if req.method not in SAFE_METHODS:
        return True
    if req.method == "OPTIONS":
        return False
    if is_websocket(req):
        return True
    path = _TAB_PREFIX.sub("", req.path)
    outputs = req.args.getlist("output") or (["file"] if path in FILE_BY_DEFAULT else [])
    return "file" in outputs or path in STATE_CHANGING_GETS


# The routes a login cookie opens: what the dashboard calls (the original's list and ours: debug
# sessions, the telemetry stream, agent sessions, instance restarts, a profile's use for its chart).
# (methods, path pattern).
_ID = r"[^/]+"
COOKIE_ROUTES: tuple[tuple[frozenset[str], re.Pattern[str]], ...] = tuple(
    (frozenset(methods), re.compile(f"^(?:{pattern})$")) for methods, pattern in (
        (("GET", "HEAD"), "|".join((
            r"/health", r"/metrics", r"/api/metrics", r"/api/activity", r"/api/events", r"/api/config",
            rf"/api/agents(?:/{_ID}(?:/events)?)?", r"/sessions(?:/.+)?", r"/profiles", rf"/profiles/{_ID}/analytics",
            r"/instances", r"/instances/tabs", r"/instances/metrics", r"/providers",
            rf"/instances/{_ID}/(?:tabs|logs|logs/stream|proxy/screencast)", r"/screencast",
            rf"/tabs/{_ID}/(?:screenshot|pdf)", rf"/debug/sessions(?:/{_ID})?", r"/events"))),
        (("POST",), "|".join((
            r"/api/auth/elevate", rf"/api/agents/{_ID}/events", r"/action", r"/instances/start",
            r"/instances/launch", rf"/instances/{_ID}/(?:stop|restart|start)", rf"/tabs/{_ID}/(?:close|debug)",
            r"/profiles", r"/sessions", rf"/sessions/{_ID}/revoke", r"/debug/sessions",
            rf"/debug/sessions/{_ID}/commands"))),
        (("PUT",), r"/api/config"),
        (("PATCH",), rf"/profiles/{_ID}"),
        (("DELETE",), "|".join((rf"/profiles/{_ID}", rf"/sessions/{_ID}", rf"/debug/sessions/{_ID}"))),
    ))


def cookie_opens(req: Request) -> bool:
    """Whether a login cookie alone may call this route (:data:`COOKIE_ROUTES`)."""
    return any(req.method in methods and pattern.match(req.path) for methods, pattern in COOKIE_ROUTES)


TOKEN = "pinchtab.auth_token"


def guess_limiter(app: Flask) -> FailureLimiter:
    """The app's count of wrong tokens per client (bearer headers, logins and elevations share it)."""
    found: FailureLimiter | None = app.extensions.get(GUESSES)
    if found is None:
        found = app.extensions[GUESSES] = FailureLimiter()
    return found


def refuse_if_guessing(app: Flask, client: str, message: str = "too many wrong tokens from this address", *,
                       login: bool = False) -> None:
    """429 (with ``Retry-After``) while ``client`` is past the wrong-token limit: ``rate_limited``,
    or for the login page ``login_rate_limited`` (the original's code and details)."""
    limiter = guess_limiter(app)
    if limiter.retry_after(client) > 0:
        wait = limiter.retry_after_header(client)
        details: dict[str, Any] = {"retryAfterSec": int(wait), "windowSec": int(limiter.window_s)}
        details["maxAttempts" if login else "max"] = limiter.max_failures
        raise APIError(f"{message}; wait before trying again", status=429,
                       code="login_rate_limited" if login else "rate_limited", retryable=True, details=details,
                       headers={"Retry-After": wait})


def count_guess(app: Flask, client: str) -> None:
    """One wrong token from ``client``; logged once, when it reaches the limit (never the token)."""
    limiter = guess_limiter(app)
    limiter.failed(client)
    if not limiter.allow(client):
        log.warning("wrong tokens from %.64s: refused for up to %d s", client, int(limiter.window_s))


def register(app: Flask, token: str) -> None:
    if token:
        app.extensions[TOKEN] = token.encode()
    guess_limiter(app)

    @app.before_request
    def check_token() -> None:
        if not token and "HTTP_AUTHORIZATION" not in request.environ:
            return  # no token to ask for and no agent session to check: nothing below refuses it
        # A public route (app.web.public) where this app serves it (the URL matched a rule).
        if request.url_rule is not None and is_public_route(request.method, request.path):
            return
        extra = app.extensions.get(_EXTRA)
        if extra and any(allowed(request) for allowed in extra):
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
    ``g.auth``), None when it carries none. Raises Unauthorized for bad ones, a 429 ``rate_limited``
    while the client is past the wrong-token limit, and Forbidden for a cookie-borne change that
    does not come from our own page."""
    expected: bytes = app.extensions.get(TOKEN, b"")
    header = req.headers.get("Authorization", "")
    if header:
        scheme, _, given = header.partition(" ")
        scheme = scheme.lower()
        sessions: SessionResolver | None = app.extensions.get(SESSIONS)
        if scheme != "session":
            # A guess at the token, until it is right: a client past the limit is refused even with
            # the right one (else guessing would go on at full speed), other clients are not.
            client = forwarded.request_client(req, app) if expected else ""
            if client:
                refuse_if_guessing(app, client)
            if scheme == "bearer" and expected and hmac.compare_digest(given.strip().encode(), expected):
                g.auth = "bearer"
                return g.auth
            if client:
                count_guess(app, client)
            raise Unauthorized("bad token", code="bad_token")
        if sessions is None:
            raise Unauthorized("agent sessions are off on this server (sessions.agent.enabled, "
                               "sessions.agent.mode)", code="sessions_disabled")
        session = sessions.lookup(given.strip())
        if session is None:
            raise Unauthorized("bad, expired or revoked session token", code="bad_session")
        g.auth, g.session_agent, g.agent_session = "session", session.agent_id, session
        req.environ[SESSION_AGENT] = session.agent_id  # for the activity log (it sees the environ only) and the caller
        return g.auth
    logins: LoginResolver | None = app.extensions.get(LOGINS)
    cookie = req.cookies.get(COOKIE, "")
    if logins is None or not cookie:
        return None
    login = logins.resolve(cookie)
    if login is None:
        return None
    if changes_state(req) and not (
            same_origin(req) or hmac.compare_digest(req.headers.get(CSRF_HEADER, "").encode(), login.csrf.encode())):
        what = "WebSocket" if is_websocket(req) else "request that changes something"
        raise Forbidden(f"a cookie-authenticated {what} must come from the dashboard "
                        f"(same-origin Origin or Referer, or the {CSRF_HEADER} header)", code="origin_forbidden",
                        details={"sameOriginRequired": True})
    if not cookie_opens(req):
        raise Forbidden("the login cookie does not open this route: send 'Authorization: Bearer <token>'",
                        code="header_auth_required")
    g.auth, g.login = "cookie", login
    return g.auth


def require_admin(what: str, *, elevated: bool = True) -> None:
    """Refuse ``what`` to an agent session, and (``elevated``) to a dashboard login whose token was
    not typed lately (``POST /api/auth/elevate``). Bearer callers, and everyone on a server
    without a token, pass."""
    how = g.get("auth")
    if how == "session":
        raise Forbidden(f"an agent session may not {what}", code="session_forbidden")
    if elevated:
        require_elevation(what)


def require_elevation(what: str, details: dict[str, Any] | None = None) -> None:
    """403 ``elevation_required`` for a dashboard login whose token was not typed within
    ``sessions.dashboard.elevationWindowSec``; every other caller passes."""
    if g.get("auth") != "cookie":
        return
    logins = current_app.extensions[LOGINS]
    if not logins.is_elevated(g.login):
        raise Forbidden(f"type the token again to {what} (POST /api/auth/elevate)", code="elevation_required",
                        details={"elevationWindowSec": int(logins.elevation_s),
                                 "hint": "POST /api/auth/elevate {\"token\"}", **(details or {})})


def session_agent() -> str | None:
    """The agent of the request's agent session; None for the operator (bearer, dashboard login,
    or anyone on a server without a token)."""
    return g.get("session_agent") if g.get("auth") == "session" else None


def own_agent_only(requested: str | None, what: str) -> str | None:
    """The agent whose records ``what`` may cover: a session's own (another one asked for is 403
    ``session_forbidden``); for the operator, ``requested`` as it is (None: every agent)."""
    agent = session_agent()
    if agent is None:
        return requested
    if requested and requested != agent:
        raise Forbidden(f"an agent session may {what} of its own agent only (the token reads every agent's)",
                        code="session_forbidden")
    return agent
