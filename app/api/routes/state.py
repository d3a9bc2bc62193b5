"""Saved state (off unless security.allowStateExport): cookies plus the current origin's storage,
kept as JSON files in ``<stateDir>/sessions`` (0600, written atomically).

``GET /state`` (the tab's live state), ``POST /state/save``, ``POST /state/load``,
``GET /state/list``, ``GET /state/show``, ``DELETE /state``, ``POST /state/clean``. With
``encrypt: true`` a state is sealed with AES-256-GCM (``app.api.state_cipher``) under
security.stateEncryptionKey; load and show open it with the same key. A state name is one safe
file name (the schema checks it). Every lookup (exact, prefix, list, show, delete, clean) sees
only regular files directly in the sessions folder (:func:`app.web.files.contained`): a symlink
planted there, wherever it points, is not a saved state.
"""
from __future__ import annotations

import json
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from cdp import storage
from cdp.cookies import all_cookies, restore_cookies
from cdp.navigation import page_info
from cdp.page import evaluate
from cdp.tab import Tab

from ...web import untrusted_json
from ...web.errors import APIError, BadRequest, NotFound, disabled
from ...web.files import SAVED_STATES, contained, entries, inside, read_contained, stamp, write_atomic
from ...web.openapi import Blueprint, ErrorSchema
from .. import state_cipher
from ..contract import TabQuerySchema
from .common import before_reading, on_tab, state, tab
from .state_contract import (
    LiveStateResponse,
    StateCleanedResponse,
    StateCleanSchema,
    StateDeletedResponse,
    StateListResponse,
    StateLoadedResponse,
    StateLoadSchema,
    StateNameQuerySchema,
    StateRecordResponse,
    StateSavedResponse,
    StateSaveSchema,
)

bp = Blueprint("state", __name__)

SESSIONS = SAVED_STATES
VERSION = 1
MASK = "***"
DISABLED = "saved state is off unless security.allowStateExport is set"


def _enabled() -> None:
    if not state().config.security.allow_state_export:
        raise disabled("state_export", "security.allowStateExport")


def sessions_dir() -> Path:
    """This app's ``<stateDir>/sessions`` (created 0700), resolved."""
    path = state().config.server.state_dir / SESSIONS
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path.resolve()


def _file_of(name: str) -> Path:
    """Where the state ``name`` is written; refuses (400) a name whose file would resolve outside."""
    return inside(sessions_dir(), f"{name}.json", "")


def _existing(name: str) -> Path | None:
    """The file of the saved state called exactly ``name``, if there is one (and it is contained)."""
    folder = sessions_dir()
    path = folder / f"{name}.json"
    return path if contained(folder, path) else None


def _now_iso() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


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
        raw = read_contained(sessions_dir(), path)
    except OSError as exc:
        raise APIError(f"state file {path.name} cannot be read: {exc}", status=500, code="state_unreadable") from None
    # What the file holds is not ours to vouch for (a user or another program may have put it there):
    # a bad one is the request's problem (422), not a server fault.
    try:
        record = untrusted_json.loads(raw.decode("utf-8"))
    except ValueError as exc:   # UnicodeDecodeError too
        raise corrupt(path, str(exc)) from None
    if not isinstance(record, dict):
        raise corrupt(path, "not a JSON object")
    return record


def corrupt(path: Path, why: str) -> APIError:
    return APIError(f"state file {path.name} cannot be read: {why}", status=422, code="state_corrupt",
                    details={"name": path.stem})


def _states() -> list[tuple[str, Path]]:
    """(name, path) of every state file; write_atomic's temp files start with a dot and are skipped."""
    return [(p.stem, p) for p in entries(sessions_dir(), "*.json")]


def _find(name: str) -> tuple[Path, dict[str, Any]]:
    """The state called ``name``, else the newest whose name starts with ``name``."""
    exact = _existing(name)
    if exact is not None:
        return exact, _read(exact)
    matches = []
    for stem, path in _states():
        if stem.startswith(name):
            record = _read(path)
            matches.append((_saved_at(record, path), path, record))
    if not matches:
        raise NotFound(f"no saved state named {name!r} (or starting with it); GET /state/list shows them",
                       code="state_not_found", details={"name": name})
    _, path, record = max(matches, key=lambda m: m[0])
    return path, record


def _key() -> str:
    """The passphrase encrypted states are sealed with; 400 when none is configured."""
    key = state().config.security.state_encryption_key
    if not key:
        # "encryption key" is what the original's clients look for to tell this refusal apart.
        raise BadRequest("encryption key required: set security.stateEncryptionKey in the config or "
                         "PINCHTAB_STATE_KEY in the environment", code="state_key_required",
                         details={"setting": "security.stateEncryptionKey"})
    return key


def _opened(path: Path, record: dict[str, Any]) -> dict[str, Any]:
    """A state's record, unsealed with the configured key when it was saved encrypted."""
    if not state_cipher.is_sealed(record):
        return record
    try:
        return state_cipher.unseal(record, _key())
    except state_cipher.WrongKey:
        raise BadRequest(f"state {path.stem!r} is encrypted and the configured key does not open it (another "
                         "key, or the file was changed)", code="bad_state_key",
                         details={"name": path.stem, "setting": "security.stateEncryptionKey"}) from None
    except state_cipher.BadEnvelope as exc:
        raise corrupt(path, str(exc)) from None


@bp.route("/state/save", methods=["POST"])
@before_reading(_enabled)
@bp.arguments(StateSaveSchema, required=False)
@bp.response(200, StateSavedResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def save(req: dict[str, Any]) -> dict[str, Any]:
    """Save cookies and the current origin's storage as a named state."""
    key = _key() if req["encrypt"] else ""
    name = req.get("name") or f"state-{stamp()}"
    path = _file_of(name)
    target = tab(req.get("tabId"))
    cookies, store = on_tab(target, lambda t: (all_cookies(t), storage.read_storage(t)))
    per_origin = {store["origin"]: {"local": store["local"], "session": store["session"]}} if store else {}
    record = {"version": VERSION, "name": name, "savedAt": _now_iso(), "origins": list(per_origin),
              "cookies": cookies, "storage": per_origin, "metadata": req["metadata"], "encrypted": bool(key)}
    written = state_cipher.seal(record, key) if key else record
    write_atomic(path, json.dumps(written, ensure_ascii=False, indent=1).encode("utf-8"), mode=0o600,
                 what=f"saved state {name!r}")
    return {"name": name, "path": str(path), "cookies": len(cookies), "origins": list(per_origin),
            "encrypted": bool(key)}


@bp.route("/state", methods=["GET"])
@before_reading(_enabled)
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, LiveStateResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def live(req: dict[str, Any]) -> dict[str, Any]:
    """The tab's state as it is now: every cookie, the current origin's storage, the page and its user agent."""
    target = tab(req.get("tabId"))

    def read(t: Tab) -> tuple[list[dict[str, Any]], dict[str, Any] | None, dict[str, str], str]:
        info = page_info(t)
        main = t.frames.get(t.main_frame_id or "")
        agent = evaluate(t, main, "navigator.userAgent") if main is not None else ""
        return all_cookies(t), storage.read_storage(t), info, agent or ""

    cookies, store, info, agent = on_tab(target, read)
    per_origin = {store["origin"]: {"local": store["local"], "session": store["session"]}} if store else {}
    origin = store["origin"] if store else ""
    return {"tabId": target.id, "url": info["url"], "title": info["title"], "origins": list(per_origin),
            "cookies": cookies, "storage": per_origin,
            "metadata": {"url": info["url"], "title": info["title"], "origin": origin, "userAgent": agent}}


@bp.route("/state/load", methods=["POST"])
@before_reading(_enabled)
@bp.arguments(StateLoadSchema)
@bp.response(200, StateLoadedResponse)
@bp.alt_response(422, schema=ErrorSchema, description="the state file is corrupt or asks for too much")
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def load(req: dict[str, Any]) -> dict[str, Any]:
    """Restore a saved state (exact name or prefix, newest wins)."""
    path, record = _find(req["name"])
    record = _opened(path, record)
    saved_cookies = [c for c in record.get("cookies") or [] if isinstance(c, dict)]
    per_origin = record.get("storage") if isinstance(record.get("storage"), dict) else {}
    target = tab(req.get("tabId"))

    def restore(t: Tab) -> tuple[int, int, str | None]:
        restored = restore_cookies(t, saved_cookies)
        origin = storage.current_origin(t)
        entry = per_origin.get(origin) if origin else None
        items = 0
        if isinstance(entry, dict):
            items = storage.write_storage(t, entry.get("local") or {}, entry.get("session") or {})
        return restored, items, origin

    cookies_restored, items, origin = on_tab(target, restore)
    origins = list(per_origin)
    return {"name": record.get("name"), "cookiesRestored": cookies_restored,
            "storageItemsRestored": items, "origins": origins,
            # Storage is written in the page: origins the tab is not on need a load from there.
            "skippedOrigins": [o for o in origins if o != origin]}


@bp.route("/state/list", methods=["GET"])
@before_reading(_enabled)
@bp.response(200, StateListResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def list_states() -> dict[str, Any]:
    """List saved states, newest first."""
    found = []
    for stem, path in _states():
        try:
            record = _read(path)
            size = path.stat().st_size
        except (APIError, OSError):
            continue  # a file being replaced or not ours: list what can be read
        saved = _saved_at(record, path)
        found.append((saved, {"name": stem, "savedAt": record.get("savedAt") or _iso(saved), "size": size}))
    states = [entry for _, entry in sorted(found, key=lambda f: f[0], reverse=True)]
    return {"states": states, "count": len(states)}


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))


@bp.route("/state/show", methods=["GET"])
@before_reading(_enabled)
@bp.arguments(StateNameQuerySchema, location="query")
@bp.response(200, StateRecordResponse)
@bp.alt_response(422, schema=ErrorSchema, description="the state file is corrupt or asks for too much")
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def show(req: dict[str, Any]) -> dict[str, Any]:
    """One saved state, cookie values masked unless reveal=true."""
    path, record = _find(req["name"])
    record = _opened(path, record)
    if not req["reveal"]:
        record["cookies"] = [{**c, "value": MASK} if isinstance(c, dict) else c for c in record.get("cookies") or []]
    return record


@bp.route("/state", methods=["DELETE"])
@before_reading(_enabled)
@bp.arguments(StateNameQuerySchema, location="query")
@bp.response(200, StateDeletedResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def delete(req: dict[str, Any]) -> dict[str, Any]:
    """Delete a saved state (exact name)."""
    path = _existing(req["name"])  # exact names only: a prefix must never delete something else
    try:
        if path is None:
            raise FileNotFoundError(req["name"])
        path.unlink()
    except FileNotFoundError:
        raise NotFound(f"no saved state named {req['name']!r}", code="state_not_found",
                       details={"name": req["name"]}) from None
    return {"deleted": req["name"]}


@bp.route("/state/clean", methods=["POST"])
@before_reading(_enabled)
@bp.arguments(StateCleanSchema, required=False)
@bp.response(200, StateCleanedResponse)
@bp.alt_response(403, schema=ErrorSchema, description=DISABLED)
def clean(req: dict[str, Any]) -> dict[str, Any]:
    """Delete saved states older than olderThanHours."""
    hours = req["olderThanHours"]
    cutoff = time.time() - hours * 3600
    removed = 0
    for _, path in _states():
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
    return {"removed": removed, "olderThanHours": shown, "sessionsDir": SESSIONS}
