"""POST|GET|DELETE /sessions: agent sessions (``app.access.agent_sessions``), on a bridge and on the server.

Both apps register this blueprint (its contract is the schemas at the top of this module), so it
lives here, with the sessions themselves, rather than in either app's package.

A session token is what an operator hands an agent instead of the token: with
``Authorization: Session <token>`` the agent reaches the browser API as its own agent (the
server forwards its id to the instance as ``X-Agent-Id``), and loses access when the session is
revoked. The server keeps its own sessions; it does not forward these routes.

The original's shapes: ``POST /sessions`` answers ``sessionToken`` and ``status`` (``token`` too,
our earlier name), ``GET /sessions/me`` is the caller's own session (a session token only: a
bearer token or a login there is 401 ``session_auth_required``), and ``POST /sessions/{id}/revoke``
revokes, a session its own only (another one is 403). ``DELETE /sessions/{id}`` is ours.
"""
from __future__ import annotations

from typing import Any

from flask import Flask, current_app, g
from marshmallow import Schema, fields, validate

from ..config import Config
from ..web.errors import APIError, Forbidden, NotFound, Unauthorized, disabled
from ..web.openapi import Blueprint
from ..web.schemas import StatusResponse, Strict
from . import auth
from .agent_sessions import AgentSessions
from .auth import require_admin
from .tokens import TokenLimit


class SessionCreateSchema(Strict):
    """``POST /sessions``: the agent the session stands for, a label, and how long it may live."""

    agentId = fields.String(required=True, validate=validate.Regexp(r"^[A-Za-z0-9._:@-]{1,128}$",
                                                                    error="1-128 letters, digits or . _ : @ -"))
    label = fields.String(load_default="", validate=validate.Length(max=200))
    # Each at most what the config allows (sessions.agent.maxLifetimeSec, idleTimeoutSec): the
    # answer's expiresAt and idleTimeoutSec say what the session got.
    ttlSec = fields.Integer(load_default=None, allow_none=True, strict=True,
                            validate=validate.Range(min=60, max=366 * 86400),
                            metadata={"description": "at most sessions.agent.maxLifetimeSec"})
    idleSec = fields.Integer(load_default=None, allow_none=True, strict=True,
                             validate=validate.Range(min=60, max=366 * 86400),
                             metadata={"description": "at most sessions.agent.idleTimeoutSec"})


class SessionRecord(Schema):
    """An agent session as the API shows it; never its token."""

    id = fields.String(required=True)
    agentId = fields.String(required=True)
    label = fields.String(required=True)
    status = fields.String(required=True, metadata={"description": "active (revoked and lapsed sessions are gone)"})
    createdAt = fields.String(required=True)
    lastSeenAt = fields.String(required=True)
    expiresAt = fields.String(required=True)
    idleTimeoutSec = fields.Integer(required=True)


class SessionCreatedResponse(SessionRecord):
    sessionToken = fields.String(required=True,
                                 metadata={"description": "shown once: send 'Authorization: Session <token>'"})
    token = fields.String(required=True, metadata={"description": "the same token (our earlier name)"})


class SessionRevokedResponse(Schema):
    status = fields.String(required=True)
    id = fields.String(required=True)


bp = Blueprint("sessions", __name__)


def init_app(app: Flask, config: Config) -> AgentSessions | None:
    """Give the app its session table, which ``app.access.auth`` reads for ``Session`` credentials, kept
    in the state dir per port (a bridge and a server may share the dir); none when
    ``sessions.agent`` is off."""
    agent = config.sessions.agent
    if not agent.on:
        return None
    table = AgentSessions(path=config.server.state_dir / f"agent-sessions-{config.server.port}.json",
                          idle_s=agent.idle_timeout_sec, max_age_s=agent.max_lifetime_sec)
    app.extensions[auth.SESSIONS] = table
    return table


def table() -> AgentSessions:
    found: AgentSessions | None = current_app.extensions.get(auth.SESSIONS)
    if found is None:
        raise disabled("sessions", "sessions.agent.enabled")
    return found


@bp.post("/sessions")
@bp.arguments(SessionCreateSchema)
@bp.response(201, SessionCreatedResponse)
def create_session(req: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """A session for one agent; its token is in this answer only."""
    require_admin("create agent sessions")
    try:
        session, token = table().create(req["agentId"], req["label"], req["ttlSec"], req["idleSec"])
    except TokenLimit as exc:
        raise APIError(str(exc), status=429, code="too_many_sessions") from None
    return {**session.record(), "sessionToken": token, "token": token}, 201


@bp.get("/sessions")
@bp.response(200, SessionRecord(many=True))
def list_sessions() -> list[dict[str, Any]]:
    """Live sessions (never their tokens)."""
    require_admin("list agent sessions", elevated=False)
    return [s.record() for s in table().list()]


@bp.get("/sessions/me")
@bp.response(200, SessionRecord)
def my_session() -> dict[str, Any]:
    """The caller's own session: for a session token only (what ``pinchtab session info`` shows)."""
    if g.get("auth") != "session":
        raise Unauthorized("this route is for agent sessions: send 'Authorization: Session <token>'",
                           code="session_auth_required")
    session = table().get(g.agent_session.id)
    if session is None:  # revoked between the token check and here
        raise Unauthorized("bad, expired or revoked session token", code="bad_session")
    return session.record()


@bp.get("/sessions/<session_id>")
@bp.response(200, SessionRecord)
def get_session(session_id: str) -> dict[str, Any]:
    """One live session."""
    require_admin("read agent sessions", elevated=False)
    session = table().get(session_id)
    if session is None:
        raise NotFound(f"no live session {session_id!r}", code="session_not_found")
    return session.record()


@bp.delete("/sessions/<session_id>")
@bp.response(200, SessionRevokedResponse)
def revoke_session(session_id: str) -> dict[str, str]:
    """Revoke a session: its token stops working at once."""
    _revoke(session_id)
    return {"status": "revoked", "id": session_id}


@bp.post("/sessions/<session_id>/revoke")
@bp.response(200, StatusResponse)
def revoke_session_as_the_original(session_id: str) -> dict[str, str]:
    """Revoke a session (the original's form); a session token may revoke its own only."""
    _revoke(session_id)
    return {"status": "ok"}


def _revoke(session_id: str) -> None:
    """The operator revokes any session (a login after typing the token again); an agent session
    only itself: it may give up its own access, never end another agent's."""
    mine = g.get("agent_session") if g.get("auth") == "session" else None
    if mine is not None:
        if session_id != mine.id:
            raise Forbidden("an agent session may revoke its own session only", code="session_forbidden")
    else:
        require_admin("revoke agent sessions")
    if not table().revoke(session_id):
        raise NotFound(f"no live session {session_id!r}", code="session_not_found")
