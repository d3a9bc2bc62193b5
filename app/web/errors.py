"""Every error the API answers with, and the one place that turns exceptions into responses.

Views raise; they never build error JSON. The body is always
``{"error": "<message>", "code": "<code>"}`` plus ``retryable`` and ``details`` when useful (and
``available``, the values a field may take, where the original's clients look for it).
"""
from __future__ import annotations

import errno
import logging
from typing import TYPE_CHECKING, Any

from marshmallow import ValidationError

from cdp import errors as cdp_errors
from cdp.extension_transport import DEBUGGER_DETACHED

if TYPE_CHECKING:
    from flask import Flask

log = logging.getLogger(__name__)
MAX_MESSAGE = 1024


class APIError(Exception):
    """An answer other than success: HTTP status, a stable code and a message for people."""

    status = 400
    code = "bad_request"
    retryable = False

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None,
                 details: dict[str, Any] | None = None, retryable: bool | None = None,
                 headers: dict[str, str] | None = None, available: list[str] | None = None) -> None:
        super().__init__(message)
        self.headers = headers or {}
        # The values a field may take, at the top level where the original's clients read them.
        self.available = available
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status = status
        if retryable is not None:
            self.retryable = retryable
        self.details = details or {}


class BadRequest(APIError):
    """The request is malformed or names something invalid."""


class Unauthorized(APIError):
    """No or wrong bearer token."""

    status = 401
    code = "missing_token"


class Forbidden(APIError):
    """The capability is turned off in the config, or the target is not allowed."""

    status = 403
    code = "forbidden"


class NotFound(APIError):
    """The tab, ref or element does not exist."""

    status = 404
    code = "not_found"


class Conflict(APIError):
    """The page is not in a state the request can act on (stale ref, open dialog, navigation)."""

    status = 409
    code = "conflict"


class Unavailable(APIError):
    """The browser is starting, restarting or gone."""

    status = 503
    code = "browser_unavailable"
    retryable = True


class StorageError(OSError):
    """A file the API writes (saved state, output=file, a download, ...) could not be written; nothing
    half-written is left. An ``OSError``, so code that writes best-effort still catches it."""

    def __init__(self, what: str, cause: OSError) -> None:
        super().__init__(cause.errno, cause.strerror or str(cause))
        self.what = what  # the name the caller gave (or ours), never a path of this machine


# A full disk or quota: the space may come back, so a retry later can succeed.
FULL_DISK = frozenset({errno.ENOSPC, errno.EDQUOT})
# Errors of the storage itself, whichever write met them (a bare OSError carrying one is ours to map).
STORAGE_ERRNOS = FULL_DISK | {errno.EROFS, errno.EFBIG}


def storage_reason(exc: OSError) -> str:
    """A short reason for people, with a plain word for the common cases."""
    if exc.errno in FULL_DISK:
        return "the disk is full"
    if exc.errno == errno.EROFS:
        return "the file system is read-only"
    return exc.strerror or type(exc).__name__


def _storage_answer(message: str, errno_: int | None) -> APIError:
    full = errno_ in FULL_DISK
    return APIError(message, status=507, code="storage_full" if full else "storage_failed", retryable=full)


def _storage_error(exc: BaseException) -> APIError | None:
    """Every storage failure, whoever met it, as one 507: ``storage_full`` or ``storage_failed``."""
    import profiles.errors as pe

    if isinstance(exc, StorageError):
        return _storage_answer(f"could not write {exc.what}: {storage_reason(exc)}", exc.errno)
    if isinstance(exc, pe.StoreWriteError):
        # The profile store words its own message (which profile, which file); the errno is its cause's.
        cause = exc.__cause__ if isinstance(exc.__cause__, OSError) else exc
        return _storage_answer(str(exc), cause.errno)
    if type(exc) is OSError and exc.errno in STORAGE_ERRNOS:  # e.g. a mkdir on the way to a write
        return _storage_answer(f"could not write to the state dir: {storage_reason(exc)}", exc.errno)
    return None


def disabled(feature: str, setting: str) -> Forbidden:
    """The 403 of a capability that is off until the config turns it on."""
    return Forbidden(f"{feature} endpoint is disabled; enable {setting} in config to use this endpoint",
                     code=f"{feature}_disabled",
                     details={"setting": setting, "hint": f'set "{setting}": true in the config file',
                              "remedy": "edit the config and restart pinchtab"})


def body(err: APIError) -> dict[str, Any]:
    out: dict[str, Any] = {"error": err.message[:MAX_MESSAGE], "code": err.code}
    if err.retryable:
        out["retryable"] = True
    if err.details:
        out["details"] = err.details
    if err.available is not None:
        out["available"] = err.available
    return out


def from_exception(exc: BaseException) -> APIError | None:
    """The API error for a domain exception (None: not one of ours)."""
    if isinstance(exc, APIError):
        return exc
    if isinstance(exc, ValidationError):
        field, reason = first_validation_error(exc.messages)
        return BadRequest(f"{field}: {reason}" if field else reason, code="bad_request",
                          details={"field": field} if field else None)
    if isinstance(exc, cdp_errors.StaleRef):
        return Conflict(str(exc), code="stale_ref",
                        details={"ref": exc.ref, "role": exc.role, "name": exc.name, "candidates": exc.candidates})
    if isinstance(exc, cdp_errors.UnknownRef):
        return NotFound(str(exc), code="ref_not_found", details={"ref": exc.ref})
    if isinstance(exc, cdp_errors.BadSelector):
        return BadRequest(str(exc), code="bad_selector")
    if isinstance(exc, cdp_errors.BadCursor):
        return BadRequest(str(exc), code="bad_cursor", details={"field": "after"})
    if isinstance(exc, cdp_errors.FrameGone):
        return Conflict(str(exc), code="frame_gone", details={"suggestion": "POST /frame with a new target"})
    if isinstance(exc, cdp_errors.BadFrameTarget):
        return BadRequest(str(exc), code="bad_frame_target", details={"field": "target"})
    if isinstance(exc, cdp_errors.NoSuchElement):
        return NotFound(str(exc), code="element_not_found")
    if isinstance(exc, cdp_errors.DialogBlocking):
        return Conflict(str(exc), code="dialog_blocking",
                        details={"dialog_type": exc.dialog_type, "dialog_message": exc.dialog_message,
                                 "suggestion": "POST /dialog {\"action\": \"accept\"} or \"dismiss\""})
    if isinstance(exc, cdp_errors.NavigationChanged):
        return Conflict(str(exc), code="navigation_changed", details={"url": exc.url, "result": exc.result})
    if isinstance(exc, cdp_errors.ElementOccluded):
        return Conflict(str(exc), code="element_occluded",
                        details={"coveredBy": exc.covered_by, "hint": 'send "mode": "dom" to click it through the DOM'})
    if isinstance(exc, cdp_errors.NotAnElement):
        return BadRequest(str(exc), code="not_an_element")
    if isinstance(exc, cdp_errors.ActionError):
        return BadRequest(str(exc), code="action_failed")
    if isinstance(exc, cdp_errors.BadPrintOptions):
        return BadRequest(str(exc), code="bad_pdf_options", details={"field": exc.field} if exc.field else None)
    if isinstance(exc, cdp_errors.PrintFailed):
        return APIError(str(exc), status=502, code="pdf_failed")
    if isinstance(exc, cdp_errors.InvalidURL):
        return BadRequest(str(exc), code="bad_url", details={"field": "url"})
    if isinstance(exc, cdp_errors.NavigationError):
        return APIError(str(exc), status=502, code="navigation_failed")
    if isinstance(exc, cdp_errors.TargetCrashed):
        return Conflict(str(exc), code="tab_crashed")
    if isinstance(exc, cdp_errors.TargetClosed):
        return NotFound(str(exc), code="tab_closed")
    if isinstance(exc, cdp_errors.InputUnresponsive):
        return Conflict(str(exc), code="input_unresponsive",
                        details={"suggestion": "POST /reload (or navigate) the tab; other tabs are unaffected"})
    if isinstance(exc, cdp_errors.CDPTimeout):
        return APIError(str(exc), status=504, code="timeout", retryable=True)
    if isinstance(exc, cdp_errors.BrowserGone):
        return Unavailable(f"{exc}; the browser is restarted on the next request")
    if isinstance(exc, cdp_errors.LaunchError):
        return Unavailable(str(exc), code="browser_launch_failed")
    storage_error = _storage_error(exc)
    if storage_error is not None:
        return storage_error
    profile_error = _profile_error(exc)
    if profile_error is not None:
        return profile_error
    if isinstance(exc, cdp_errors.CDPError) and exc.code == DEBUGGER_DETACHED:
        # Extension mode: the person (or Chrome) took the debugger away from the tab.
        return Conflict(exc.cdp_message, code="debugger_detached")
    if isinstance(exc, cdp_errors.CDPError):
        return APIError(str(exc), status=500, code="action_failed", retryable=True)
    return None


def _profile_error(exc: BaseException) -> APIError | None:
    """The profile store's errors (profiles/errors.py) as answers."""
    import profiles.errors as pe

    if not isinstance(exc, pe.ProfileError):
        return None
    details = {k: getattr(exc, k) for k in ("holder", "pid", "owner") if getattr(exc, k, None) is not None}
    if isinstance(exc, pe.ProfileNotFound):
        return NotFound(str(exc), code="profile_not_found")
    if isinstance(exc, (pe.ProfileLocked, pe.ProfileInUse)):
        return Conflict(str(exc), code="profile_in_use", details=details or None)
    if isinstance(exc, pe.ProfileExists):
        return Conflict(str(exc), code="profile_exists")
    return BadRequest(str(exc), code="bad_profile")


def first_validation_error(messages: Any, prefix: str = "") -> tuple[str, str]:
    """The first (field, reason) in marshmallow's nested messages."""
    if isinstance(messages, dict):
        for key, value in messages.items():
            name = f"{prefix}.{key}" if prefix else str(key)
            if key == "_schema":
                name = prefix
            return first_validation_error(value, name)
    if isinstance(messages, list) and messages:
        if isinstance(messages[0], str):
            return prefix, messages[0]
        return first_validation_error(messages[0], prefix)
    return prefix, str(messages)


def register(app: Flask) -> None:
    """Map every exception to the one error shape."""
    # Imported here: the error classes above serve the command line too, which has no use for Flask
    # and should not wait for it to load.
    from flask import jsonify
    from werkzeug.exceptions import HTTPException

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException):  # type: ignore[no-untyped-def]
        codes = {404: "not_found", 405: "method_not_allowed", 408: "request_timeout", 413: "body_too_large",
                 400: "bad_request"}
        msg = exc.description or exc.name
        if exc.code == 404:
            msg = "no such route; GET /openapi.json lists every route"
        resp = jsonify({"error": msg, "code": codes.get(exc.code or 500, "error")})
        resp.status_code = exc.code or 500
        # The exception's own headers (a 405's Allow, a 416's Content-Range, ...) belong to the answer too.
        for name, value in exc.get_headers():
            if name.lower() != "content-type":
                resp.headers[name] = value
        return resp

    @app.errorhandler(Exception)
    def any_error(exc: Exception):  # type: ignore[no-untyped-def]
        err = from_exception(exc)
        if err is None:
            log.exception("unhandled error")
            err = APIError(f"internal error: {type(exc).__name__}", status=500, code="internal")
        resp = jsonify(body(err))
        resp.status_code = err.status
        resp.headers.update(err.headers)
        if err.status == 401:
            resp.headers["WWW-Authenticate"] = f'Bearer realm="pinchtab", error="{err.code}"'
        return resp
