"""Bearer-token auth on every route but ``GET /health``, compared in constant time."""
from __future__ import annotations

import hmac
from collections.abc import Callable

from flask import Flask, Request, request

from .errors import Unauthorized

PUBLIC = {("GET", "/health"), ("HEAD", "/health")}
_EXTRA = "pinchtab.public_requests"


def allow_public(app: Flask, predicate: Callable[[Request], bool]) -> None:
    """Let requests ``predicate`` accepts through without the token (they carry another capability)."""
    app.extensions.setdefault(_EXTRA, []).append(predicate)


def register(app: Flask, token: str) -> None:
    if not token:
        return  # loopback-only servers may run without one; the start refuses it elsewhere
    expected = token.encode()

    @app.before_request
    def check_token() -> None:
        if (request.method, request.path) in PUBLIC:
            return
        if any(allowed(request) for allowed in app.extensions.get(_EXTRA, ())):
            return
        header = request.headers.get("Authorization", "")
        if not header:
            raise Unauthorized("missing bearer token: send 'Authorization: Bearer <token>'", code="missing_token")
        scheme, _, given = header.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), expected):
            raise Unauthorized("bad token", code="bad_token")
