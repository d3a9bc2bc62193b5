"""Every error is the JSON shape, whoever answers it: gunicorn itself (a request line or headers over
its limits) or Flask (a 405, which also says which methods the route allows)."""
from __future__ import annotations

import json
import socket
from typing import Any

import pytest

from app.serving.worker_errors import error_response


def raw_request(port: int, request: bytes, timeout_s: float = 10) -> tuple[int, dict[str, str], bytes]:
    """Send ``request`` as is; the status, headers and body of the answer (read to the close)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as sock:
        sock.sendall(request)
        chunks = []
        while True:
            chunk = sock.recv(65536)
            if not chunk:
                break
            chunks.append(chunk)
    head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    return int(status_line.split()[1]), headers, body


def test_error_response_is_json_with_our_code_and_a_correct_length() -> None:
    raw = error_response(431, "Request Header Fields Too Large", "Error parsing headers: 'limit request headers'")
    head, _, body = raw.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 431 Request Header Fields Too Large\r\n")
    assert b"Content-Type: application/json" in head and f"Content-Length: {len(body)}".encode() in head
    assert json.loads(body) == {"error": "Error parsing headers: 'limit request headers'", "code": "headers_too_large"}


@pytest.fixture
def server(server_process: Any) -> Any:
    s = server_process(config={"multiInstance": {"strategy": "explicit"}})
    s.wait_ready(default_instance=False)
    return s


@pytest.mark.e2e
def test_gunicorns_own_refusals_are_json(server: Any) -> None:
    status, headers, body = raw_request(server.port, b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: "
                                        + b"a" * 10000 + b"\r\n\r\n")
    assert status == 431
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["code"] == "headers_too_large"

    status, headers, body = raw_request(server.port, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    assert status == 414
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["code"] == "uri_too_long"

    status, headers, body = raw_request(server.port, b"NOT A REQUEST\r\n\r\n")
    assert status == 400
    assert headers["content-type"] == "application/json"
    assert set(json.loads(body)) == {"error", "code"}


@pytest.mark.e2e
def test_405_is_json_and_names_the_allowed_methods(server: Any) -> None:
    status, headers, body = raw_request(server.port,
                                        b"DELETE /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
    assert status == 405
    assert headers["content-type"] == "application/json"
    assert json.loads(body)["code"] == "method_not_allowed"
    assert "GET" in {m.strip() for m in headers["allow"].split(",")}
