"""Saved state (off unless security.allowStateExport): cookies plus the current origin's storage,
kept as JSON files in ``<stateDir>/sessions`` (0600, written atomically).

``POST /state/save``, ``POST /state/load``, ``GET /state/list``, ``GET /state/show``,
``DELETE /state``, ``POST /state/clean``. A state name is one safe file name (the schema checks
it) and the file path is proven to stay in the sessions folder before it is touched.
"""
from __future__ import annotations

import json
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from flask import Blueprint, jsonify

from cdp import storage

from ..browser_state import Bridge, bridge
from ...errors import APIError, BadRequest, NotFound, disabled
from ...files import inside, stamp, write_atomic
from ..parser import from_body, from_query
from ..schemas import StateCleanSchema, StateLoadSchema, StateNameQuerySchema, StateSaveSchema
from . import doc
from .common import on_tab

bp = Blueprint("state", __name__)

SESSIONS = "sessions"
VERSION = 1
MASK = "***"


def _enabled() -> Bridge:
    br = bridge()
    if not br.config.security.allow_state_export:
        raise disabled("state_export", "security.allowStateExport")
    return br


def sessions_dir(br: Bridge) -> Path:
    """``<stateDir>/sessions`` (created 0700), resolved."""
    path = br.config.server.state_dir / SESSIONS
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path.resolve()


def _file_of(br: Bridge, name: str) -> Path:
    return inside(sessions_dir(br), f"{name}.json", "")


def _now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _saved_at(record: dict[str, Any], path: Path) -> float:
    """When a state was saved (its savedAt, else the file's mtime), as a timestamp."""
    raw = record.get("savedAt")
    if isinstance(raw, str):
        try:
            return datetime.fromisoformat(raw.replace("Z", "+00:00")).timestamp()
        except ValueError:
            pass
    return path.stat().st_mtime


def _read(path: Path) -> dict[str, Any]:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise APIError(f"state file {path.name} cannot be read: {exc}", status=500, code="state_corrupt") from None
    if not isinstance(record, dict):
        raise APIError(f"state file {path.name} is not a JSON object", status=500, code="state_corrupt")
    return record


def _states(br: Bridge) -> list[tuple[str, Path]]:
    """(name, path) of every state file; write_atomic's temp files start with a dot and are skipped."""
    return [(p.stem, p) for p in sessions_dir(br).glob("*.json") if not p.name.startswith(".") and p.is_file()]


def _find(br: Bridge, name: str) -> tuple[Path, dict[str, Any]]:
    """The state called ``name``, else the newest whose name starts with ``name``."""
    exact = _file_of(br, name)
    if exact.is_file():
        return exact, _read(exact)
    matches = []
    for stem, path in _states(br):
        if stem.startswith(name):
            record = _read(path)
            matches.append((_saved_at(record, path), path, record))
    if not matches:
        raise NotFound(f"no saved state named {name!r} (or starting with it); GET /state/list shows them",
                       code="state_not_found", details={"name": name})
    _, path, record = max(matches, key=lambda m: m[0])
    return path, record


@bp.post("/state/save")
@doc("Save cookies and the current origin's storage as a named state", body=StateSaveSchema)
def save():  # type: ignore[no-untyped-def]
    br = _enabled()
    req = from_body(StateSaveSchema)
    if req["encrypt"]:
        raise BadRequest("encryption needs PINCHTAB_STATE_KEY, and encrypted state files are not implemented "
                         "yet; save without encrypt", code="encryption_unavailable", details={"field": "encrypt"})
    name = req.get("name") or f"state-{stamp()}"
    path = _file_of(br, name)
    tab = br.tab(req.get("tabId"))
    cookies, store = on_tab(tab, lambda t: (storage.cookies(t), storage.read_storage(t)))
    per_origin = {store["origin"]: {"local": store["local"], "session": store["session"]}} if store else {}
    record = {"version": VERSION, "name": name, "savedAt": _now_iso(), "origins": list(per_origin),
              "cookies": cookies, "storage": per_origin, "metadata": req["metadata"], "encrypted": False}
    write_atomic(path, json.dumps(record, ensure_ascii=False, indent=1).encode("utf-8"), mode=0o600)
    return jsonify({"name": name, "path": str(path), "cookies": len(cookies), "origins": list(per_origin),
                    "encrypted": False})


@bp.post("/state/load")
@doc("Restore a saved state (exact name or prefix, newest wins)", body=StateLoadSchema)
def load():  # type: ignore[no-untyped-def]
    br = _enabled()
    req = from_body(StateLoadSchema)
    _, record = _find(br, req["name"])
    if record.get("encrypted"):
        raise BadRequest("this state is encrypted; encrypted state files are not implemented yet",
                         code="encryption_unavailable")
    saved_cookies = [c for c in record.get("cookies") or [] if isinstance(c, dict)]
    per_origin = record.get("storage") if isinstance(record.get("storage"), dict) else {}
    tab = br.tab(req.get("tabId"))

    def restore(t):  # type: ignore[no-untyped-def]
        restored = storage.set_cookies(t, saved_cookies)
        origin = storage.current_origin(t)
        entry = per_origin.get(origin) if origin else None
        items = 0
        if isinstance(entry, dict):
            items = storage.write_storage(t, entry.get("local") or {}, entry.get("session") or {})
        return restored, items, origin

    cookies_restored, items, origin = on_tab(tab, restore)
    origins = list(per_origin)
    return jsonify({"name": record.get("name"), "cookiesRestored": cookies_restored,
                    "storageItemsRestored": items, "origins": origins,
                    # Storage is written in the page: origins the tab is not on need a load from there.
                    "skippedOrigins": [o for o in origins if o != origin]})


@bp.get("/state/list")
@doc("List saved states, newest first")
def list_states():  # type: ignore[no-untyped-def]
    br = _enabled()
    found = []
    for stem, path in _states(br):
        try:
            record = _read(path)
            size = path.stat().st_size
        except (APIError, OSError):
            continue  # a file being replaced or not ours: list what can be read
        saved = _saved_at(record, path)
        found.append((saved, {"name": stem, "savedAt": record.get("savedAt") or _iso(saved), "size": size}))
    states = [entry for _, entry in sorted(found, key=lambda f: f[0], reverse=True)]
    return jsonify({"states": states, "count": len(states)})


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


@bp.get("/state/show")
@doc("One saved state, cookie values masked unless reveal=true", query=StateNameQuerySchema)
def show():  # type: ignore[no-untyped-def]
    br = _enabled()
    req = from_query(StateNameQuerySchema)
    _, record = _find(br, req["name"])
    if not req["reveal"]:
        record["cookies"] = [{**c, "value": MASK} if isinstance(c, dict) else c for c in record.get("cookies") or []]
    return jsonify(record)


@bp.delete("/state")
@doc("Delete a saved state (exact name)", query=StateNameQuerySchema)
def delete():  # type: ignore[no-untyped-def]
    br = _enabled()
    req = from_query(StateNameQuerySchema)
    path = _file_of(br, req["name"])  # exact names only: a prefix must never delete something else
    try:
        path.unlink()
    except FileNotFoundError:
        raise NotFound(f"no saved state named {req['name']!r}", code="state_not_found",
                       details={"name": req["name"]}) from None
    return jsonify({"deleted": req["name"]})


@bp.post("/state/clean")
@doc("Delete saved states older than olderThanHours", body=StateCleanSchema)
def clean():  # type: ignore[no-untyped-def]
    br = _enabled()
    req = from_body(StateCleanSchema)
    hours = req["olderThanHours"]
    cutoff = time.time() - hours * 3600
    removed = 0
    for _, path in _states(br):
        try:
            record = _read(path)
        except APIError:
            record = {}  # unreadable: judged by its mtime
        try:
            if _saved_at(record, path) < cutoff:
                path.unlink()
                removed += 1
        except FileNotFoundError:
            continue
    shown = int(hours) if float(hours).is_integer() else hours
    return jsonify({"removed": removed, "olderThanHours": shown, "sessionsDir": SESSIONS})
