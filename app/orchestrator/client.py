"""The worker's side of the manager's socket: one call, one answer, each under a deadline."""
from __future__ import annotations

import logging
import socket
from pathlib import Path
from typing import Any

from .errors import ManagerUnavailable, from_wire
from .protocol import SOCKET_NAME, LineChannel, ProtocolError, runtime_dir, unix_address

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 2.0
DEFAULT_TIMEOUT_S = 10.0
# A stop runs the whole stop sequence (shutdown, TERM, KILL, each with its own deadline).
STOP_TIMEOUT_S = 30.0


class ManagerClient:
    """Calls the manager over its Unix socket; a fresh connection per call (they cost microseconds,
    and no connection state survives a manager restart)."""

    def __init__(self, socket_path: Path) -> None:
        self.socket_path = Path(socket_path)

    @classmethod
    def for_state_dir(cls, state_dir: Path) -> ManagerClient:
        """The client of the manager that owns ``state_dir``."""
        return cls(runtime_dir(state_dir) / SOCKET_NAME)

    def call(self, op: str, args: dict[str, Any] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S) -> Any:
        """Run ``op`` in the manager and return its result.

        Raises the manager's own error (an ``APIError``) when it refused, and
        :class:`ManagerUnavailable` when it cannot be reached or does not answer in time.
        """
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
                chan.send({"op": op, "args": args or {}}, timeout_s)
                answer = chan.receive(timeout_s)
            except TimeoutError:
                raise ManagerUnavailable(f"the instance manager did not answer {op!r} "
                                         f"within {timeout_s:.0f} s") from None
            except (OSError, ProtocolError) as exc:
                raise ManagerUnavailable(f"lost the instance manager during {op!r}: {exc}") from None
        except OSError as exc:
            raise ManagerUnavailable(f"cannot reach the instance manager: {exc}") from None
        finally:
            chan.close()
        if answer is None:
            raise ManagerUnavailable(f"the instance manager closed the connection during {op!r}")
        if not isinstance(answer, dict):
            raise ManagerUnavailable("the instance manager sent a malformed answer")
        if not answer.get("ok"):
            raise from_wire(answer.get("error") or {})
        return answer.get("result")

    # --- the requests, typed ------------------------------------------------------------------
    def list(self, after: int | None = None, wait_s: float = 0.0) -> dict[str, Any]:
        """``{"generation", "default", "pid", "instances": [{"record", "token", "restarting"}]}``;
        with ``after``, waits up to ``wait_s`` for a generation above it."""
        return self.call("list", {"after": after, "waitS": wait_s}, timeout_s=wait_s + DEFAULT_TIMEOUT_S)

    def get(self, instance_id: str) -> dict[str, Any]:
        return self.call("get", {"id": instance_id})

    def start(self, profile_id: str | None = None, mode: str | None = None, port: int | None = None,
              allowed_domains: list[str] | None = None, owner_agent: str | None = None) -> dict[str, Any]:
        """Launch an instance; ``allowed_domains`` widens security.allowedDomains for it alone;
        ``owner_agent``, the agent of the session that asks, is kept as its owner."""
        return self.call("start", {"profileId": profile_id, "mode": mode, "port": port,
                                   "securityPolicy": {"allowedDomains": list(allowed_domains or [])},
                                   "ownerAgent": owner_agent or ""}, timeout_s=30.0)

    def stop(self, instance_id: str) -> dict[str, Any]:
        return self.call("stop", {"id": instance_id}, timeout_s=STOP_TIMEOUT_S)

    def restart(self, instance_id: str) -> dict[str, Any]:
        return self.call("restart", {"id": instance_id}, timeout_s=STOP_TIMEOUT_S + 10)

    def logs(self, instance_id: str, lines: int | None = None) -> str:
        return self.call("logs", {"id": instance_id, "lines": lines})["text"]

    def attach(self, name: str, cdp_url: str = "", attach_type: str = "cdp",
               extension_port: int | None = None) -> dict[str, Any]:
        """``{"instance", "created"}``, and ``"pairing"`` for an extension instance."""
        args: dict[str, Any] = {"name": name, "attachType": attach_type}
        if attach_type == "extension":
            args["extensionPort"] = extension_port
        else:
            args["cdpUrl"] = cdp_url
        return self.call("attach", args, timeout_s=30.0)

    def attach_bridge(self, name: str, base_url: str, token: str) -> dict[str, Any]:
        """``{"instance", "created"}`` for a running ``pinchtab bridge`` at ``base_url``."""
        return self.call("attach-bridge", {"name": name, "baseUrl": base_url, "token": token}, timeout_s=30.0)

    def start_instance(self, instance_id: str) -> dict[str, Any]:
        return self.call("start-instance", {"id": instance_id}, timeout_s=STOP_TIMEOUT_S + 10)

    def metrics(self) -> list[dict[str, Any]]:
        return self.call("metrics")

    def log_lines(self, instance_id: str, after: int | None) -> dict[str, Any]:
        """``{"lines", "last"}``: the instance's output lines numbered above ``after``."""
        return self.call("log-lines", {"id": instance_id, "after": after})

    def events_since(self, after: int | None, wait_s: float = 0.0) -> dict[str, Any]:
        return self.call("events-since", {"after": after, "waitS": wait_s}, timeout_s=wait_s + DEFAULT_TIMEOUT_S)
