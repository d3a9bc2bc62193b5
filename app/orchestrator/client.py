"""The worker's side of the manager's socket: one call, one answer, each under a deadline.

The operations, their arguments and their deadlines are :mod:`.control`'s table: a request is
checked against it here before it is sent (a typo fails in the caller, not in the manager).
"""
from __future__ import annotations

import builtins
import logging
import socket
from pathlib import Path
from typing import Any

from . import control
from .control import Op
from .errors import ManagerUnavailable, from_wire
from .protocol import SOCKET_NAME, LineChannel, ProtocolError, runtime_dir, unix_address

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 2.0


class ManagerClient:
    """Calls the manager over its Unix socket; a fresh connection per call (they cost microseconds,
    and no connection state survives a manager restart)."""

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = Path(socket_path)

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> ManagerClient:
        """The client of the manager that owns ``state_dir``."""
        return cls(runtime_dir(state_dir) / SOCKET_NAME)

    def call(self, op: Op | str, args: dict[str, Any] | None = None, timeout_s: float | None = None) -> Any:
        """Run ``op`` (an :class:`~.control.Op` or its name) in the manager and return its result;
        ``timeout_s`` defaults to the operation's own deadline.

        Raises the manager's own error (an ``APIError``) when it refused (or, for an unknown op or a
        bad argument, when it would have), and :class:`ManagerUnavailable` when it cannot be reached
        or does not answer in time.
        """
        if not isinstance(op, Op):
            op = control.op_named(op)
        args = op.check(args or {})
        if timeout_s is None:
            timeout_s = op.deadline_s(args)
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        chan = LineChannel(sock)
        try:
            sock.settimeout(CONNECT_TIMEOUT_S)
            try:
                with unix_address(self.socket_path) as address:
                    sock.connect(address)
            except (FileNotFoundError, ConnectionRefusedError, NotADirectoryError) as exc:
                raise ManagerUnavailable("the instance manager is not running", details={"reason": str(exc)}) from None
            try:
                chan.send({"op": op.name, "args": args}, timeout_s)
                answer = chan.receive(timeout_s)
            except TimeoutError:
                raise ManagerUnavailable(f"the instance manager did not answer {op.name!r} "
                                         f"within {timeout_s:.0f} s") from None
            except (OSError, ProtocolError) as exc:
                raise ManagerUnavailable(f"lost the instance manager during {op.name!r}: {exc}") from None
        except OSError as exc:
            raise ManagerUnavailable(f"cannot reach the instance manager: {exc}") from None
        finally:
            chan.close()
        if answer is None:
            raise ManagerUnavailable(f"the instance manager closed the connection during {op.name!r}")
        if not isinstance(answer, dict):
            raise ManagerUnavailable("the instance manager sent a malformed answer")
        if not answer.get("ok"):
            raise from_wire(answer.get("error") or {})
        return answer.get("result")

    # --- the requests, typed ------------------------------------------------------------------
    def list(self, after: int | None = None, wait_s: float = 0.0) -> dict[str, Any]:
        """``{"generation", "default", "pid", "instances": [{"record", "token", "restarting"}]}``;
        with ``after``, waits up to ``wait_s`` for a generation above it."""
        return self.call(control.LIST, {"after": after, "waitS": wait_s})

    def get(self, instance_id: str) -> dict[str, Any]:
        return self.call(control.GET, {"id": instance_id})

    def start(self, profile_id: str | None = None, mode: str | None = None, port: int | None = None,
              allowed_domains: builtins.list[str] | None = None, owner_agent: str | None = None,
              provider: str = "", wait_s: float = 0.0) -> dict[str, Any]:
        """Launch an instance; ``allowed_domains`` widens security.allowedDomains for it alone;
        ``owner_agent``, the agent of the session that asks, is kept as its owner; ``provider``
        places it (none: the fleet chooses), waiting up to ``wait_s`` for room."""
        return self.call(control.START, {"profileId": profile_id, "mode": mode, "port": port,
                                         "securityPolicy": {"allowedDomains": list(allowed_domains or [])},
                                         "ownerAgent": owner_agent or "", "provider": provider, "waitS": wait_s})

    def providers(self) -> builtins.list[dict[str, Any]]:
        return self.call(control.PROVIDERS)

    def stop(self, instance_id: str) -> dict[str, Any]:
        return self.call(control.STOP, {"id": instance_id})

    def restart(self, instance_id: str) -> dict[str, Any]:
        return self.call(control.RESTART, {"id": instance_id})

    def logs(self, instance_id: str, lines: int | None = None) -> str:
        return self.call(control.LOGS, {"id": instance_id, "lines": lines})["text"]

    def attach(self, name: str, cdp_url: str = "", attach_type: str = "cdp",
               extension_port: int | None = None) -> dict[str, Any]:
        """``{"instance", "created"}``, and ``"pairing"`` for an extension instance."""
        args: dict[str, Any] = {"name": name, "attachType": attach_type}
        if attach_type == "extension":
            args["extensionPort"] = extension_port
        else:
            args["cdpUrl"] = cdp_url
        return self.call(control.ATTACH, args)

    def attach_bridge(self, name: str, base_url: str, token: str) -> dict[str, Any]:
        """``{"instance", "created"}`` for a running ``pinchtab bridge`` at ``base_url``."""
        return self.call(control.ATTACH_BRIDGE, {"name": name, "baseUrl": base_url, "token": token})

    def start_instance(self, instance_id: str) -> dict[str, Any]:
        return self.call(control.START_INSTANCE, {"id": instance_id})

    def metrics(self) -> builtins.list[dict[str, Any]]:
        return self.call(control.METRICS)

    def log_lines(self, instance_id: str, after: int | None) -> dict[str, Any]:
        """``{"lines", "last"}``: the instance's output lines numbered above ``after``."""
        return self.call(control.LOG_LINES, {"id": instance_id, "after": after})

    def events_since(self, after: int | None, wait_s: float = 0.0) -> dict[str, Any]:
        return self.call(control.EVENTS_SINCE, {"after": after, "waitS": wait_s})
