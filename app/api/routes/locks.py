"""POST /lock and /unlock: a tab's lease, so that one owner's actions are not interleaved with another's.

While a lease is held, the routes that act on the tab (/action, /actions, /macro, /upload,
/download?tabId) need its owner, named by the ``X-Owner`` header, an ``owner`` field or
``?owner=``; anyone else gets 423 ``tab_locked``. A lease ends at its ``timeoutSec``, on unlock,
or with its tab.
"""
from __future__ import annotations

from typing import Any

from flask import request

from cdp.tab import Tab

from ...web.openapi import Blueprint, ErrorSchema, tab_route
from ..tab_guards import iso
from .common import state, tab
from .locks_contract import LockResponse, LockSchema, UnlockResponse, UnlockSchema

bp = Blueprint("locks", __name__)


def request_owner(body_owner: str | None = None) -> str | None:
    """The lock owner a request speaks for: its body's ``owner``, else ``X-Owner``, else ``?owner=``."""
    return body_owner or request.headers.get("X-Owner") or request.args.get("owner") or None


def check_access(t: Tab, owner: str | None, *, handoff: bool = True) -> None:
    """Refuse work on a tab leased to another owner (423), or, with ``handoff``, paused for a person (409)."""
    guards = state().guards
    if handoff:
        guards.check_not_paused(t.id)
    guards.check_owner(t.id, owner)


@tab_route(bp, "/lock", methods=["POST"])
@bp.arguments(LockSchema)
@bp.response(200, LockResponse)
@bp.alt_response(409, schema=ErrorSchema, description="another owner holds the tab's lease (tab_locked)")
def lock(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Lease a tab to ``owner`` for ``timeoutSec`` (default 600); its owner may lock again to extend."""
    t = tab(req.get("tabId"))
    lease = state().guards.lock(t.id, req["owner"], req["timeoutSec"])
    return {"locked": True, "tabId": t.id, "owner": lease.owner, "expiresAt": iso(lease.expires_at)}


@tab_route(bp, "/unlock", methods=["POST"])
@bp.arguments(UnlockSchema)
@bp.response(200, UnlockResponse)
@bp.alt_response(409, schema=ErrorSchema, description="another owner holds the tab's lease (tab_locked)")
def unlock(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Release the owner's lease (a tab with no lease is unlocked already)."""
    t = tab(req.get("tabId"))
    released = state().guards.unlock(t.id, req["owner"])
    return {"unlocked": True, "tabId": t.id, "released": released}
