"""What can go wrong between the server, its manager and the instances.

Every error here is an :class:`app.web.errors.APIError`, so the worker answers it in the one error
shape without a mapping of its own; the manager sends ``status``, ``code``, ``message`` and
``details`` over its socket and the worker's client raises the same error again.
"""
from __future__ import annotations

from typing import Any

from ..web.errors import APIError


class OrchestratorError(APIError):
    """A request the manager could not carry out."""

    status = 500
    code = "orchestrator_error"


class InstanceNotFound(OrchestratorError):
    """No instance has that id."""

    status = 404
    code = "instance_not_found"

    def __init__(self, instance_id: str) -> None:
        super().__init__(f"instance {instance_id} not found")


class ProfileNotFound(OrchestratorError):
    """The profile named in a start request does not exist."""

    status = 404
    code = "profile_not_found"


class ProfileInUse(OrchestratorError):
    """Another instance (or another process) runs the profile."""

    status = 409
    code = "profile_in_use"


class PortUnavailable(OrchestratorError):
    """The requested port is taken, or the instance port range is exhausted."""

    status = 409
    code = "port_unavailable"


class AttachDisabled(OrchestratorError):
    """``security.attach.enabled`` is off."""

    status = 403
    code = "attach_disabled"


class AttachNotAllowed(OrchestratorError):
    """The CDP URL's scheme or host is not in ``security.attach.allowSchemes|allowHosts``."""

    status = 403
    code = "attach_not_allowed"


class AttachUnreachable(OrchestratorError):
    """No browser answered at the CDP URL."""

    status = 502
    code = "attach_unreachable"


class BadManagerRequest(OrchestratorError):
    """A malformed request on the manager's socket (a bug in the caller)."""

    status = 400
    code = "bad_request"


class ManagerUnavailable(OrchestratorError):
    """The manager process is gone or does not answer in time."""

    status = 503
    code = "manager_unavailable"
    retryable = True


class HaltManager(BaseException):
    """Stop the manager's loop; a BaseException so no ``except Exception`` on the way swallows it."""

    def __init__(self, reason: str, exit_status: int = 0) -> None:
        super().__init__(reason)
        self.reason = reason
        self.exit_status = exit_status


def to_wire(err: APIError) -> dict[str, Any]:
    """An error as the manager sends it to the worker."""
    wire = {"status": err.status, "code": err.code, "message": err.message, "details": err.details,
            "retryable": err.retryable}
    if err.headers:
        wire["headers"] = err.headers  # e.g. no_capacity's Retry-After
    return wire


def from_wire(data: dict[str, Any]) -> OrchestratorError:
    """The error the manager sent, raised again on the worker's side."""
    err = OrchestratorError(str(data.get("message") or "manager error"), code=str(data.get("code") or "error"),
                            status=int(data.get("status") or 500), details=data.get("details") or None,
                            retryable=bool(data.get("retryable")),
                            headers={str(k): str(v) for k, v in (data.get("headers") or {}).items()} or None)
    return err
