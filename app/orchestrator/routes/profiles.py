"""Profiles (server mode): the saved browser profiles, their identity and what agents did with them.

The store is ``profiles.ProfileStore`` (file-backed, one user-data dir each); the activity log is
the one every browser call appends to. Starting a browser on a profile goes through the
orchestrator (``/profiles/{id}/start|stop|instance``, registered with the instances routes).

An agent session reads its own agent's activity only, and may not delete or reset a profile (other
agents' logins live in it): those take the operator's token. Reads name a profile by its id or its
name; changing, deleting and resetting one take its id (as in the original).
"""
from __future__ import annotations

import threading
from typing import Any

from flask import current_app, request

from profiles import ActivityLog, ProfileInfo, ProfileStore

from ...access.auth import own_agent_only, require_admin
from ...web.errors import BadRequest, Forbidden, NotFound
from ...web.openapi import Blueprint
from .profiles_contract import (
    ActivityQuerySchema,
    ActivityResponse,
    ProfileAnalyticsResponse,
    ProfileChangedResponse,
    ProfileCreateSchema,
    ProfileImportSchema,
    ProfileLogEntry,
    ProfileMetaSchema,
    ProfileRecord,
    ProfileUpdateSchema,
)

bp = Blueprint("profiles", __name__)
# Profiles the orchestrator makes for an instance started without one, and deletes when it stops.
TEMPORARY_PREFIX = "instance-"
_store_lock = threading.Lock()


def store() -> ProfileStore:
    ext = current_app.extensions
    if "pinchtab.profiles" not in ext:
        # Two first requests at once must not each build a store (each starts a disk-usage thread).
        with _store_lock:
            if "pinchtab.profiles" not in ext:
                ext["pinchtab.profiles"] = ProfileStore(ext["pinchtab.config"].profiles.base_dir)
    return ext["pinchtab.profiles"]


def activity() -> ActivityLog:
    log = current_app.extensions.get("pinchtab.activity")
    if log is None:
        raise Forbidden("the activity log is off; enable observability.activity.enabled in config",
                        code="activity_disabled", details={"setting": "observability.activity.enabled"})
    return log


def public(info: ProfileInfo) -> dict[str, Any]:
    """A profile as the API shows it: the store's record under the reference's key names."""
    out: dict[str, Any] = dict(info)
    out["sizeMB"] = out.pop("diskUsageMB")
    return out


def is_temporary(name: str) -> bool:
    return name.startswith(TEMPORARY_PREFIX)


def by_id(ident: str, what: str) -> ProfileInfo:
    """The profile whose id is ``ident``, for a route that changes or deletes it.

    As in the original, these take the id alone (``prof_...``), never the name: a name is easy to
    mistype into another profile's, and the change cannot be undone. A name answers 404
    ``profile_not_found`` saying which id to use; an unknown or unsafe one as the store does.
    """
    info = store().get(ident)
    if info["id"] != ident:
        raise NotFound(f"profile {ident!r} not found: {what} takes the profile's id ({info['id']}), not its name",
                       code="profile_not_found", details={"id": info["id"]})
    return info


def _flag(name: str) -> bool:
    return request.args.get(name, "").lower() in ("1", "true", "yes")


@bp.get("/profiles")
@bp.response(200, ProfileRecord(many=True))
def list_profiles() -> list[dict[str, Any]]:
    """Every saved profile: disk usage, last use, whether running, the account it is signed in as.

    ``?all=true`` lists temporary profiles too (marked), ``?refresh=true`` measures disk use now.
    """
    profiles = store().list(refresh=_flag("refresh"))
    if not _flag("all"):
        return [public(p) for p in profiles if not is_temporary(p["name"])]
    # ?all=true: the raw records, temporary ones included and marked, empty fields left out.
    raw = []
    for info in profiles:
        record = {k: v for k, v in public(info).items() if v is not None and v != ""}
        if is_temporary(info["name"]):
            record["temporary"] = True
        raw.append(record)
    return raw


@bp.post("/profiles")
@bp.post("/profiles/create")
@bp.arguments(ProfileCreateSchema)
@bp.response(201, ProfileChangedResponse)
def create_profile(req: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Create an empty profile."""
    info = store().create(req["name"], description=req["description"], use_when=req["useWhen"])
    return {"status": "created", "id": info["id"], "name": info["name"]}, 201


@bp.post("/profiles/import")
@bp.arguments(ProfileImportSchema)
@bp.response(201, ProfileChangedResponse)
def import_profile(req: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Copy a Chrome user-data dir that exists on this machine into a new profile."""
    info = store().import_(req["name"], req["sourcePath"], description=req["description"],
                           use_when=req["useWhen"])
    return {"status": "imported", "id": info["id"], "name": info["name"]}, 201


@bp.get("/profiles/<ident>")
@bp.response(200, ProfileRecord)
def get_profile(ident: str) -> dict[str, Any]:
    """One profile."""
    return public(store().get(ident))


@bp.patch("/profiles/meta")
@bp.arguments(ProfileMetaSchema)
@bp.response(200, ProfileChangedResponse)
def update_meta(req: dict[str, Any]) -> dict[str, Any]:
    """Change the description or useWhen of the profile named in the body."""
    if "description" not in req and "useWhen" not in req:
        raise BadRequest("nothing to change: send description or useWhen")
    info = store().update(req["name"], description=req.get("description"), use_when=req.get("useWhen"))
    return {"status": "updated", "id": info["id"], "name": info["name"]}


@bp.patch("/profiles/<ident>")
@bp.arguments(ProfileUpdateSchema)
@bp.response(200, ProfileRecord)
def update_profile(req: dict[str, Any], ident: str) -> dict[str, Any]:
    """Rename a profile or change its description; by its id (a name is 404)."""
    if not req:
        raise BadRequest("nothing to change: send name, description or useWhen")
    by_id(ident, "PATCH")
    name = req.get("name")
    return public(store().update(ident, description=req.get("description"), use_when=req.get("useWhen"),
                                 name=None if name is None else name))


@bp.delete("/profiles/<ident>")
@bp.response(200, ProfileChangedResponse)
def delete_profile(ident: str) -> dict[str, Any]:
    """Delete a profile by its id (a name is 404; refused while a browser uses it). Not for an agent session."""
    require_admin("delete profiles", elevated=False)
    info = by_id(ident, "DELETE")
    store().delete(ident)
    return {"status": "deleted", "id": info["id"], "name": info["name"]}


@bp.post("/profiles/<ident>/reset")
@bp.response(200, ProfileChangedResponse)
def reset_profile(ident: str) -> dict[str, Any]:
    """Clear a profile's sessions, caches, cookies and history; keep the profile. By its id (a name is
    404). Not for an agent session."""
    require_admin("reset profiles", elevated=False)
    by_id(ident, "reset")
    info = store().reset(ident)
    return {"status": "reset", "id": info["id"], "name": info["name"]}


@bp.get("/profiles/<ident>/logs")
@bp.arguments(ActivityQuerySchema, location="query")
@bp.response(200, ProfileLogEntry(many=True))
def profile_logs(req: dict[str, Any], ident: str) -> list[dict[str, Any]]:
    """What agents did with a profile, newest first (an agent session: what its own agent did)."""
    info = store().get(ident)
    events = _query(profile=info["name"], req=req)
    return [{"timestamp": e.get("timestamp"), "method": e.get("method"), "endpoint": e.get("path"),
             "url": e.get("url", ""), "tabId": e.get("tabId", ""), "durationMs": e.get("durationMs"),
             "status": e.get("status"), "agentId": e.get("agentId", ""), "action": e.get("action", "")}
            for e in events]


@bp.get("/profiles/<ident>/analytics")
@bp.response(200, ProfileAnalyticsResponse)
def profile_analytics(ident: str) -> dict[str, Any]:
    """A profile's totals: actions, the last 24 h, top hosts and endpoints, calls per UTC day (every
    agent's: not for an agent session)."""
    require_admin("read every agent's totals", elevated=False)
    info = store().get(ident)
    stats = activity().analytics(info["name"])
    return {"totalActions": stats["totalActions"], "last24h": stats["last24h"],
            "commonHosts": stats["topHosts"], "topEndpoints": stats["topEndpoints"], "byDay": stats["byDay"]}


@bp.get("/api/activity")
@bp.arguments(ActivityQuerySchema, location="query")
@bp.response(200, ActivityResponse)
def api_activity(req: dict[str, Any]) -> dict[str, Any]:
    """The activity log, filtered by agent, tab, profile, instance, path and time (an agent session:
    its own agent's entries only)."""
    events = _query(profile=req.get("profile"), req=req)
    return {"events": events, "count": len(events)}


def _query(profile: str | None, req: dict[str, Any]) -> list[dict[str, Any]]:
    try:
        agent = own_agent_only(req.get("agentId"), "read the activity")
        return activity().query(profile=profile, agent=agent, tab=req.get("tabId"),
                                since=req.get("since"), until=req.get("until"), limit=req["limit"],
                                instance=req.get("instanceId"), path=req.get("path"))
    except (ValueError, OverflowError) as exc:  # OverflowError: a time zone pushes a date past year 1 or 9999
        raise BadRequest(f"bad since/until: {exc}", code="bad_filter") from None

