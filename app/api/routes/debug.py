"""POST|DELETE /tabs/{tabId}/debug: the bridge itself becomes the debug app of a tab, over CDP.

Nothing is added to the page's own world: the tab's console, errors, network, navigation and DOM
mutations reach the session's agents as the protocol's messages, and their commands run through
our action engine (app/debug/tab_app.py). The session ends with the tab, or when deleted.
"""
from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import current_app

from cdp.tab import Tab

from ...debug.hub import Hub, Peer, Session, TooManySessions
from ...debug.routes import session_urls
from ...web.errors import Conflict, NotFound
from ...web.openapi import Blueprint
from .common import state, tab
from .debug_contract import TabDebugResponse, TabDebugSchema, TabDetached

bp = Blueprint("tab_debug", __name__)
log = logging.getLogger(__name__)


@dataclass
class Debugged:
    session: Session
    peer: Peer
    app: Any                    # app.debug.tab_app.TabApp
    owns_session: bool          # made for this tab: it ends with the tab
    forget: Callable[[], None]  # drops the tab's close callback


_lock = threading.Lock()


def _debugged() -> dict[str, Debugged]:
    return current_app.extensions.setdefault("pinchtab.debug.tabs", {})


def _hub() -> Hub:
    return current_app.extensions["pinchtab.debug"]


@bp.post("/tabs/<tab_id>/debug")
@bp.arguments(TabDebugSchema)
@bp.response(201, TabDebugResponse)
def attach(req: dict[str, Any], tab_id: str) -> Any:
    """Debug this tab with no SDK in the page: the bridge joins a session (a new one unless named) as its app."""
    target = tab(tab_id)
    h, debugged = _hub(), _debugged()
    with _lock:
        known = debugged.get(target.id)
        if known is not None:
            return {"sessionId": known.session.id, "tabId": target.id, "appId": known.peer.id,
                    **session_urls(known.session.id)}
        if req.get("sessionId"):
            session = h.get(req["sessionId"])
            if session is None:
                raise NotFound("unknown debug session", code="session_not_found")
            session.tab_id = session.tab_id or target.id
        else:
            try:
                session = h.create(tab_id=target.id)
            except TooManySessions as e:
                raise Conflict(str(e), code="too_many_sessions") from None
        entry = _start(h, session, target, owns=not req.get("sessionId"))
        debugged[target.id] = entry
    return {"sessionId": session.id, "tabId": target.id, "appId": entry.peer.id, **session_urls(session.id)}


def _start(h: Hub, session: Session, target: Tab, *, owns: bool) -> Debugged:
    from ...debug.tab_app import TabApp

    app = current_app._get_current_object()  # type: ignore[attr-defined]
    peer = Peer("app", f"tab-{target.id[:8]}", lambda text, msg: None,
                info={"kind": "tab", "tabId": target.id, "origin": None})
    policy = state().navigation
    tab_app = TabApp(target, session.id, peer.id, lambda msg: h.from_app(session, peer, msg=msg),
                     check_url=lambda url: policy.check(url, web_only=True).url,
                     allow_eval=state().config.security.allow_evaluate)
    peer.deliver = lambda text, msg: tab_app.command(msg) if msg is not None else None

    def end(_code: int = 1000, _reason: str = "") -> None:
        # From any thread (the tab's close is seen on the CDP reader): detach on a thread of its own.
        threading.Thread(target=_detach, args=(app, target.id), daemon=True, name="debug-detach").start()

    peer.close = end
    entry = Debugged(session, peer, tab_app, owns, lambda: None)
    h.join(session, peer)
    try:
        tab_app.start()
    except Exception:  # start() removed what it installed; the session must not keep a dead app
        h.leave(session, peer)
        if owns:
            h.delete(session.id)
        raise
    entry.forget = target.when_closed(lambda _exc: end())
    return entry


def _detach(app: Any, tab_id: str) -> bool:
    with app.app_context():
        with _lock:
            entry = _debugged().pop(tab_id, None)
        if entry is None:
            return False
        entry.forget()
        try:
            entry.app.stop()
        except Exception:  # the tab is gone: nothing of ours is left in it
            log.debug("tab %s: its debug app did not stop cleanly", tab_id[:8], exc_info=True)
        h = _hub()
        h.leave(entry.session, entry.peer)
        if entry.owns_session:
            h.delete(entry.session.id)
        return True


@bp.delete("/tabs/<tab_id>/debug")
@bp.response(200, TabDetached)
def detach(tab_id: str) -> Any:
    """Stop debugging this tab: the bridge leaves its session and the tab is as it was."""
    target = tab(tab_id)
    if not _detach(current_app._get_current_object(), target.id):  # type: ignore[attr-defined]
        raise NotFound("this tab is not being debugged", code="not_debugged")
    return {"detached": True, "tabId": target.id}
