"""The answers gunicorn writes itself, before a request reaches Flask, in the API's one error shape.

A request line longer than ``limit_request_line`` (414), headers over ``limit_request_field_size``
or ``limit_request_fields`` (431), a line gunicorn cannot parse (400): gunicorn's worker answers
these in ``handle_error`` through ``gunicorn.util.write_error``, with an HTML page. Clients of a
JSON API should not need an HTML parser for its errors, so the worker swaps that one writer for
:func:`write_json_error` when it starts (``handle_error``'s choice of status, its logging and its
access log stay gunicorn's).
"""
from __future__ import annotations

import json
import logging
import socket

from gunicorn import util

from ..web.errors import APIError, body

log = logging.getLogger(__name__)

# gunicorn's statuses (workers/base.py handle_error) and our codes for them.
CODES = {
    400: "bad_request",
    403: "forbidden",
    408: "request_timeout",
    414: "uri_too_long",
    417: "expectation_failed",
    431: "headers_too_large",
    500: "internal",
    501: "not_implemented",
}


def error_response(status: int, reason: str, message: str) -> bytes:
    """The whole HTTP response for a request gunicorn refused: JSON ``{"error", "code"}``, then close."""
    err = APIError(message or reason or "internal error", status=status, code=CODES.get(status, "error"))
    payload = json.dumps(body(err)).encode("utf-8")
    head = (f"HTTP/1.1 {status} {reason}\r\n"
            "Connection: close\r\n"
            "Content-Type: application/json\r\n"
            f"Content-Length: {len(payload)}\r\n"
            "\r\n")
    return head.encode("latin-1", "replace") + payload


def write_json_error(sock: socket.socket, status_int: int, reason: str, mesg: str) -> None:
    """``gunicorn.util.write_error``'s signature, writing :func:`error_response` instead of HTML."""
    util.write_nonblock(sock, error_response(status_int, reason, mesg))


def install() -> None:
    """Make this process's gunicorn write its own errors as JSON (idempotent)."""
    util.write_error = write_json_error


class JSONErrors:
    """A gunicorn worker mixin (first among the bases): errors gunicorn answers itself are JSON."""

    def init_process(self) -> None:
        install()  # before the worker's loop starts, which init_process runs and never returns from
        super().init_process()  # type: ignore[misc]
