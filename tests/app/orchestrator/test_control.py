"""The manager's control table: each operation named once, its arguments declared, and every refusal
on the wire in the one error shape. A real socket; the manager's side is a recording handler, or a
Manager with no processes."""
from __future__ import annotations

import json
import os
import socket
from pathlib import Path
from typing import Any

import pytest
from support.config import make_config

from app.orchestrator import control
from app.orchestrator.client import ManagerClient
from app.orchestrator.control import OPS, ControlServer
from app.orchestrator.errors import BadManagerRequest
from app.orchestrator.manager import Manager


def test_every_op_is_named_once_and_the_client_asks_only_for_those():
    assert all(name == op.name for name, op in OPS.items())
    core = {"list", "get", "start", "stop", "restart", "logs", "attach", "attach-bridge", "start-instance",
            "metrics", "log-lines", "events-since"}
    assert core <= set(OPS)  # the worker's wire as it has always been
    for name in OPS:  # a typed client method per op, under the op's own name
        assert callable(getattr(ManagerClient, name.replace("-", "_"))), name


def test_the_client_refuses_an_unknown_op_or_a_bad_argument_before_it_connects(tmp_path: Path):
    client = ManagerClient(tmp_path / "nobody-listens.sock")  # a call that connected would fail otherwise
    with pytest.raises(BadManagerRequest) as exc:
        client.call("reboot")
    assert (exc.value.status, exc.value.code, exc.value.details) == (400, "bad_request", {"field": "op"})
    assert "list" in exc.value.message  # it names the ops there are
    with pytest.raises(BadManagerRequest) as exc:
        client.start(port="9000")  # type: ignore[arg-type]
    assert exc.value.message == "port must be an integer" and exc.value.details == {"field": "port"}
    with pytest.raises(BadManagerRequest) as exc:
        client.call("stop", {"instance": "inst_1"})
    assert exc.value.details == {"field": "instance"}


def _line(sock: socket.socket, obj: Any) -> dict[str, Any]:
    sock.sendall(obj if isinstance(obj, bytes) else json.dumps(obj).encode() + b"\n")
    buf = b""
    while not buf.endswith(b"\n"):
        chunk = sock.recv(65536)
        assert chunk, "the manager closed the connection without an answer"
        buf += chunk
    return json.loads(buf)


def _error_shape(answer: dict[str, Any], status: int, code: str) -> dict[str, Any]:
    assert answer["ok"] is False and set(answer["error"]) == {"status", "code", "message", "details", "retryable"}
    assert (answer["error"]["status"], answer["error"]["code"]) == (status, code), answer
    return answer["error"]


def test_bad_requests_on_the_wire_get_the_one_error_shape_and_never_reach_the_manager(
        tmp_path: Path, caplog: pytest.LogCaptureFixture):
    seen: list[tuple[str, dict[str, Any]]] = []

    def handle(op: str, args: dict[str, Any]) -> Any:
        seen.append((op, args))
        if op == "metrics":
            raise RuntimeError("a bug in the manager")
        return "done"

    server = ControlServer(tmp_path / "manager.sock", handle)
    server.start()
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(5)
            s.connect(str(tmp_path / "manager.sock"))
            assert "unknown op 'reboot'" in _error_shape(_line(s, {"op": "reboot", "args": {}}), 400,
                                                         "bad_request")["message"]
            err = _error_shape(_line(s, {"op": "start", "args": {"port": "9000"}}), 400, "bad_request")
            assert (err["message"], err["details"]) == ("port must be an integer", {"field": "port"})
            err = _error_shape(_line(s, {"op": "list", "args": {"waitS": True}}), 400, "bad_request")
            assert err["details"] == {"field": "waitS"}
            err = _error_shape(_line(s, {"op": "stop", "args": {"idd": "inst_1"}}), 400, "bad_request")
            assert "unknown argument 'idd'" in err["message"] and err["details"] == {"field": "idd"}
            _error_shape(_line(s, {"op": "get", "args": ["inst_1"]}), 400, "bad_request")
            _error_shape(_line(s, [1, 2]), 400, "bad_request")
            assert "not JSON" in _error_shape(_line(s, b"{nope\n"), 400, "bad_request")["message"]
            assert seen == []  # none of those reached the manager
            assert _line(s, {"op": "get", "args": {"id": "inst_1"}}) == {"ok": True, "result": "done"}
            assert _error_shape(_line(s, {"op": "metrics"}), 500, "internal")["message"].startswith("internal error")
            assert seen == [("get", {"id": "inst_1"}), ("metrics", {})]
        assert any("manager request 'metrics' failed" in r.getMessage() for r in caplog.records)  # logged
    finally:
        server.stop()


def test_the_table_runs_each_op_on_a_manager(tmp_path: Path):
    manager = Manager(make_config(tmp_path), parent_pid=os.getpid())
    listed = manager.handle("list", {"after": None, "waitS": 0})
    assert listed["instances"] == [] and listed["generation"] == 0 and listed["default"] is None
    assert manager.handle("events-since", {})["events"] == []
    assert manager.handle("metrics", {}) == []
    for op in ("get", "stop", "restart", "start-instance", "logs", "log-lines"):
        with pytest.raises(Exception) as exc:
            manager.handle(op, {"id": "inst_none"})
        assert (exc.value.status, exc.value.code) == (404, "instance_not_found"), op
    with pytest.raises(BadManagerRequest) as exc:
        manager.handle("attach", {"attachType": "telepathy"})
    assert exc.value.details == {"field": "attachType"}
    with pytest.raises(BadManagerRequest) as exc:
        manager.handle("start", {"securityPolicy": {"allowedDomains": ["a b"]}})
    assert exc.value.details == {"field": "securityPolicy.allowedDomains"}
    assert control.OPS["list"].deadline_s({"waitS": 5}) == control.DEFAULT_TIMEOUT_S + 5
