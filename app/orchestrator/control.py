"""The manager's control socket: every operation declared once, with its arguments and its handler.

The worker asks the manager for things over a Unix socket (:mod:`.protocol` says the wire). What
it may ask is the table :data:`OPS`: each :class:`Op` names the operation, declares its arguments
(each optional, ``null`` meaning "not given"; any other key is refused), says how long a client
waits for it, and runs it on the manager. The server (:class:`ControlServer`) checks a request
against the table before the manager sees it, and the client (:mod:`.client`) builds its requests
from the same table, so a name or an argument exists in one place only.

Every refusal, from a line that is not JSON to an argument of the wrong type, comes back in the
one error shape ``{"ok": false, "error": {"status", "code", "message", "details", "retryable"}}``.
"""
from __future__ import annotations

import functools
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..process import line_server
from ..web.errors import APIError
from .errors import BadManagerRequest, ManagerUnavailable, OrchestratorError, to_wire
from .protocol import MAX_LINE

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT_S = 10.0
# A stop runs the whole stop sequence (shutdown, TERM, KILL, each with its own deadline).
STOP_TIMEOUT_S = 30.0
LAUNCH_TIMEOUT_S = 30.0
MAX_WAIT_S = 30.0  # the longest a long-poll request may wait
MAX_AGENT_ID = 128  # an instance owner's agent id is kept this long at most
CONN_IDLE_S = 60.0
MAX_CONNECTIONS = 256  # long polls hold one each: the mirror, the event streams, the routes' calls


@dataclass(frozen=True)
class Arg:
    """One kind of argument: what it must be, said the way an error says it."""

    what: str
    accepts: Callable[[Any], bool]


INT = Arg("an integer", lambda v: isinstance(v, int) and not isinstance(v, bool))
NUMBER = Arg("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
STRING = Arg("a string", lambda v: isinstance(v, str))
OBJECT = Arg("an object", lambda v: isinstance(v, dict))


@dataclass(frozen=True)
class Op:
    """One operation: its name on the wire, its arguments, its handler ``(manager, args) -> result``,
    and how long a client waits for its answer (a long poll adds the ``waitS`` it asks for)."""

    name: str
    run: Callable[[Any, dict[str, Any]], Any]
    args: Mapping[str, Arg] = field(default_factory=dict)
    timeout_s: float = DEFAULT_TIMEOUT_S

    def check(self, args: Any) -> dict[str, Any]:
        """``args`` if every one is declared and of its kind; raises :class:`BadManagerRequest`."""
        if not isinstance(args, dict):
            raise BadManagerRequest(f"{self.name}: args must be an object")
        for key, value in args.items():
            arg = self.args.get(key)
            if arg is None:
                known = ", ".join(self.args) or "none"
                raise BadManagerRequest(f"{self.name}: unknown argument {key!r} (known: {known})",
                                        details={"field": key})
            if value is not None and not arg.accepts(value):
                raise BadManagerRequest(f"{key} must be {arg.what}", details={"field": key})
        return args

    def deadline_s(self, args: Mapping[str, Any]) -> float:
        """How long the client waits for this request's answer."""
        wait = args.get("waitS")
        return self.timeout_s + (float(wait) if "waitS" in self.args and isinstance(wait, (int, float)) else 0.0)


# --- what the handlers share -----------------------------------------------------------------------
def _id(args: Mapping[str, Any]) -> str:
    return args.get("id") or ""  # none given: not found, like any unknown id


def _wait_s(args: Mapping[str, Any]) -> float:
    return max(0.0, min(float(args.get("waitS") or 0), MAX_WAIT_S))


def _allowed_domains(args: Mapping[str, Any]) -> tuple[str, ...]:
    """A start request's ``securityPolicy.allowedDomains`` (hosts: non-empty, no white space)."""
    domains = (args.get("securityPolicy") or {}).get("allowedDomains") or []
    if not isinstance(domains, list) or not all(isinstance(d, str) and d.strip() and not any(c.isspace() for c in d)
                                                for d in domains):
        raise BadManagerRequest("securityPolicy.allowedDomains must be a list of hosts",
                                details={"field": "securityPolicy.allowedDomains"})
    return tuple(domains)


def _start(m: Any, a: dict[str, Any]) -> Any:
    owner = (a.get("ownerAgent") or "")[:MAX_AGENT_ID]
    return m.launch(profile_id=a.get("profileId") or None, mode=a.get("mode") or None, port=a.get("port"),
                    allowed_domains=_allowed_domains(a), owner_agent=owner, provider=a.get("provider") or "",
                    wait_s=_wait_s(a)).record()


def _attach(m: Any, a: dict[str, Any]) -> dict[str, Any]:
    """A CDP URL (``cdpUrl``) or, with ``attachType: "extension"``, a person's Chrome through our
    extension (``extensionPort`` optional). An extension instance's answer carries the pairing
    token: it goes back to the caller who asked, never into records, events or logs."""
    inst, created, pairing = m.attach_to(a.get("attachType"), a.get("name") or "", a.get("cdpUrl") or "",
                                             a.get("extensionPort"))
    answer = {"instance": inst.record(), "created": created}
    return {**answer, "pairing": pairing} if pairing is not None else answer


def _attach_bridge(m: Any, a: dict[str, Any]) -> dict[str, Any]:
    inst, created = m.attach_bridge(a.get("name") or "", a.get("baseUrl") or "", a.get("token") or "")
    return {"instance": inst.record(), "created": created}


def _log_lines(m: Any, a: dict[str, Any]) -> dict[str, Any]:
    lines, last = m.find(_id(a)).logs.since(a.get("after"))
    return {"lines": lines, "last": last}


# --- the table ------------------------------------------------------------------------------------
LIST = Op("list", lambda m, a: m.list_state(a.get("after"), _wait_s(a)), {"after": INT, "waitS": NUMBER})
EVENTS_SINCE = Op("events-since", lambda m, a: m.events.since(a.get("after"), _wait_s(a)),
                  {"after": INT, "waitS": NUMBER})
GET = Op("get", lambda m, a: m.find(_id(a)).record(), {"id": STRING})
START = Op("start", _start, {"profileId": STRING, "mode": STRING, "port": INT, "securityPolicy": OBJECT,
                             "ownerAgent": STRING, "provider": STRING, "waitS": NUMBER}, timeout_s=LAUNCH_TIMEOUT_S)
STOP = Op("stop", lambda m, a: m.stop_instance(_id(a)), {"id": STRING}, timeout_s=STOP_TIMEOUT_S)
RESTART = Op("restart", lambda m, a: m.restart_instance(_id(a)).record(), {"id": STRING},
             timeout_s=STOP_TIMEOUT_S + 10)
START_INSTANCE = Op("start-instance", lambda m, a: m.start_instance(_id(a)).record(), {"id": STRING},
                    timeout_s=STOP_TIMEOUT_S + 10)
LOGS = Op("logs", lambda m, a: {"text": "\n".join(m.find(_id(a)).logs.tail(a.get("lines")))},
          {"id": STRING, "lines": INT})
LOG_LINES = Op("log-lines", _log_lines, {"id": STRING, "after": INT})
ATTACH = Op("attach", _attach, {"name": STRING, "attachType": STRING, "cdpUrl": STRING, "extensionPort": INT},
            timeout_s=LAUNCH_TIMEOUT_S)
ATTACH_BRIDGE = Op("attach-bridge", _attach_bridge, {"name": STRING, "baseUrl": STRING, "token": STRING},
                   timeout_s=LAUNCH_TIMEOUT_S)
METRICS = Op("metrics", lambda m, a: m.metrics())
PROVIDERS = Op("providers", lambda m, a: m.fleet.describe())

OPS: dict[str, Op] = {op.name: op for op in (LIST, EVENTS_SINCE, GET, START, STOP, RESTART, START_INSTANCE, LOGS,
                                             LOG_LINES, ATTACH, ATTACH_BRIDGE, METRICS, PROVIDERS)}


def op_named(name: Any) -> Op:
    """The operation called ``name``; raises :class:`BadManagerRequest` naming the ones there are."""
    op = OPS.get(name) if isinstance(name, str) else None
    if op is None:
        raise BadManagerRequest(f"unknown op {name!r}: expected one of {', '.join(OPS)}",
                                details={"field": "op"})
    return op


def run(manager: Any, name: str, args: dict[str, Any]) -> Any:
    """Run a checked request on the manager; raises APIError subclasses for refusals."""
    return op_named(name).run(manager, args)


# --- the server side ------------------------------------------------------------------------------
def error_line(err: APIError) -> dict[str, Any]:
    """The one error shape of the manager's wire."""
    return {"ok": False, "error": to_wire(err)}


def _wire_error(message: str, code: str, _request: Any) -> dict[str, Any]:
    """What the process kit could not hand to :meth:`ControlServer.dispatch`, in the one shape."""
    if code == line_server.BAD_JSON:
        return error_line(BadManagerRequest(f"not JSON: {message}"))
    if code == line_server.TOO_MANY_CONNECTIONS:
        return error_line(ManagerUnavailable(message))
    if code == line_server.INTERNAL:
        return error_line(OrchestratorError(message, code="internal", status=500))
    return error_line(BadManagerRequest(message))


class ControlServer:
    """The manager's Unix socket: each request checked against :data:`OPS`, then ``handler(op, args)``."""

    def __init__(self, path: Path, handler: Callable[[str, dict[str, Any]], Any]) -> None:
        self.path = Path(path)
        self.handler = handler
        # The requests run on their answer threads: a long poll holds its own connection only.
        self.server = line_server.LineServer(
            self.path, lambda req: functools.partial(self.dispatch, req), _wire_error, name="manager",
            max_line_bytes=MAX_LINE, max_connections=MAX_CONNECTIONS, idle_s=CONN_IDLE_S,
            peer_uids={os.getuid()},
            take_over=True)  # a dead manager's socket: the manager lock proves it is dead

    def start(self) -> None:
        """Bind the socket (0600, in the 0700 runtime dir) and start accepting."""
        self.server.start()

    def stop(self) -> None:
        """Stop accepting and remove the socket; a request in flight ends when its connection closes."""
        self.server.stop(wait_s=0.0)

    def dispatch(self, req: Any) -> dict[str, Any]:
        """One request to one answer; never raises."""
        try:
            if not isinstance(req, dict):
                raise BadManagerRequest(f"expected {{\"op\": one of {', '.join(OPS)}, \"args\": {{...}}}}")
            op = op_named(req.get("op"))
            args = op.check(req.get("args") or {})
            return {"ok": True, "result": self.handler(op.name, args)}
        except APIError as exc:
            return error_line(exc)
        except Exception as exc:
            log.exception("manager request %r failed", req.get("op") if isinstance(req, dict) else req)
            return error_line(OrchestratorError(f"internal error: {exc}", code="internal", status=500))
