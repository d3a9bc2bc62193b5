"""GET, POST and DELETE /storage: the current origin's local and session storage, item by item.

Off unless security.allowStateExport (storage holds sessions and tokens, as saved state does).
Only the origin the tab is on: a page on about:blank or data: has no storage to show, and a
sandboxed page may not use it (409 either way).
Values are secrets like cookies: they go to the caller, never to a log.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cdp import storage
from cdp.tab import Tab

from ...web.errors import Conflict, disabled
from ...web.openapi import Blueprint, ErrorSchema, tab_route
from .common import before_reading, on_tab, state, tab
from .storage_contract import (
    StorageChangedResponse,
    StorageDeleteSchema,
    StorageQuerySchema,
    StorageResponse,
    StorageSetSchema,
)

bp = Blueprint("storage", __name__)
DISABLED = "storage is off unless security.allowStateExport is set"
NO_ORIGIN = "the page has no origin of its own (about:blank, data:, ...), so no storage"
NO_STORAGE = f"{NO_ORIGIN}; or the page may not use its storage (sandboxed)"


def _enabled() -> None:
    if not state().config.security.allow_state_export:
        raise disabled("state_export", "security.allowStateExport")


def _on_origin(tab_id: str | None, fn: Callable[[Tab], dict[str, Any] | None]) -> dict[str, Any]:
    target = tab(tab_id)
    out = on_tab(target, fn)
    if out is None:
        raise Conflict(f"{NO_ORIGIN}: navigate the tab to a web page first", code="no_origin",
                       details={"url": target.url})
    if "denied" in out:
        raise Conflict(f"the page may not use its storage: {out['denied']}", code="storage_denied",
                       details={"origin": out.get("origin", "")})
    return out


@tab_route(bp, "/storage", methods=["GET"])
@before_reading(_enabled)
@bp.arguments(StorageQuerySchema, location="query")
@bp.response(200, StorageResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
@bp.alt_response(409, schema=ErrorSchema, description=NO_STORAGE)
def get_storage(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The current origin's storage items: both kinds unless type names one; only key when given."""
    return _on_origin(req.get("tabId"), lambda t: storage.storage_items(t, req["type"], req["key"]))


@tab_route(bp, "/storage", methods=["POST"])
@before_reading(_enabled)
@bp.arguments(StorageSetSchema)
@bp.response(200, StorageChangedResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
@bp.alt_response(409, schema=ErrorSchema, description=NO_STORAGE)
def set_storage(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Set one item of the current origin's local or session storage."""
    return _on_origin(req.get("tabId"), lambda t: storage.set_item(t, req["type"], req["key"], req["value"]))


@tab_route(bp, "/storage", methods=["DELETE"])
@before_reading(_enabled)
@bp.arguments(StorageDeleteSchema, required=False)
@bp.response(200, StorageChangedResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
@bp.alt_response(409, schema=ErrorSchema, description=NO_STORAGE)
def delete_storage(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Remove one key, clear one storage, or (type all, the default) clear both."""
    return _on_origin(req.get("tabId"), lambda t: storage.remove_items(t, req["type"], req["key"]))
