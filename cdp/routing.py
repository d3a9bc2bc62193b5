"""Where an incoming CDP message goes: a pure function of the message, unit-tested without a browser.

With flat sessions every tab and out-of-process iframe talks over one websocket; each message
carries an optional ``sessionId``. Replies carry the ``id`` of the command they answer. A few
events change the session table itself and are handled by the reader before anything else
(puppeteer's Connection does the same: ``Target.attachedToTarget`` arrives before the reply to
the attach command, so the session must be known by then).
"""
from __future__ import annotations

from typing import Any, Literal, NamedTuple

Kind = Literal["reply", "event", "attached", "detached", "crashed"]


class Route(NamedTuple):
    """What a message is and whose (a tuple: made for every message the browser sends, so cheaply)."""

    kind: Kind
    session_id: str | None  # the session the message arrived on (None: browser level)
    call_id: int | None = None  # for replies
    method: str | None = None  # for events
    child_session_id: str | None = None  # for attached/detached: the session attached or detached


def route(msg: dict[str, Any]) -> Route:
    """Classify one parsed CDP message."""
    session_id = msg.get("sessionId")
    if "id" in msg:
        return Route("reply", session_id, call_id=msg["id"])
    method = msg.get("method")
    params = msg.get("params") or {}
    if method == "Target.attachedToTarget":
        return Route("attached", session_id, method=method, child_session_id=params.get("sessionId"))
    if method == "Target.detachedFromTarget":
        return Route("detached", session_id, method=method, child_session_id=params.get("sessionId"))
    if method == "Inspector.targetCrashed":
        return Route("crashed", session_id, method=method)
    return Route("event", session_id, method=method)


def session_owner(session_id: str | None, owners: dict[str, Any]) -> Any:
    """The sink that owns ``session_id`` (None for browser-level messages or unknown sessions)."""
    if session_id is None:
        return None
    return owners.get(session_id)
