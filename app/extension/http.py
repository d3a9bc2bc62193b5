"""The extension's HTTP side: ``GET /poll``, ``POST /response``, ``GET /health``.

The original extension's protocol, unchanged (``reference/extension-protocol.md``), with one guard it
lacks: ``/poll`` and ``/response`` refuse what a web page can send. A page on any site may fetch
``http://127.0.0.1:19222/poll`` (a form post or a no-cors fetch needs no permission), so without the
guard it could take the agent's commands, or forge their results. Every request a page makes carries
``Sec-Fetch-Site: same-site`` or ``cross-site``, and, where it carries an Origin, an ``http(s)`` one;
the extension's polls carry no Origin and ``Sec-Fetch-Site: none``, its results a
``chrome-extension://`` Origin. Preflights are refused too, and no CORS header is ever sent.

The blueprint keeps no state of its own: :func:`init_endpoints` puts it in
``app.extensions["pinchtab.extension"]``, so another app (the bridge, with a pairing token) can
serve the same endpoints.
"""
from __future__ import annotations

import hmac
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, current_app, jsonify, request
from marshmallow import Schema, fields

from ..access import web_origin
from ..web import untrusted_json
from ..web.errors import APIError, BadRequest, Forbidden, Unauthorized
from ..web.openapi import Blueprint
from .commands import CommandQueue

log = logging.getLogger(__name__)

STATE = "pinchtab.extension"
EXTENSION_SCHEME = web_origin.EXTENSION_SCHEME
GUARDED = frozenset({"poll", "respond"})  # the view names /poll and /response
MAX_WAIT_S = 25.0   # a held poll's longest wait (under the 30 s an MV3 worker's fetch may take)

bp = Blueprint("extension", __name__, description="The extension's polling protocol (GET /poll, POST /response).")


@dataclass(frozen=True)
class Endpoints:
    """What the endpoints of one app serve: the queue, who may use it, the pairing token if any."""

    commands: CommandQueue
    allowed_ids: tuple[str, ...] = ()
    pairing: str = ""


def init_endpoints(app: Flask, api: Any, commands: CommandQueue, *, allowed_ids: tuple[str, ...] = (),
                   pairing: str = "", url_prefix: str = "") -> Endpoints:
    """Serve ``commands`` to an extension on ``app`` (under ``url_prefix``). With ``pairing``, /poll
    and /response also need ``Authorization: Bearer <pairing>``."""
    endpoints = Endpoints(commands, tuple(allowed_ids), pairing)
    app.extensions[STATE] = endpoints
    # The extension's requests carry its chrome-extension:// Origin: the one web origin let in here.
    web_origin.admit(app, web_origin.Door("/", web_origin.extension_origins(allowed_ids), prefix=True))
    api.register_blueprint(bp, url_prefix=url_prefix or None)
    return endpoints


def endpoints() -> Endpoints:
    return current_app.extensions[STATE]


def refusal(method: str, headers: Mapping[str, str], allowed_ids: tuple[str, ...]) -> str | None:
    """Why a request to /poll or /response is not the extension's (None: it may be). Stricter than
    the web-origin policy in front of every route: no Origin but an extension's, not even our own
    (this port serves no pages)."""
    if method == "OPTIONS":
        return "CORS preflights are refused: only the extension may use this endpoint"
    origin = headers.get("Origin")
    if origin is not None:
        if not origin.startswith(EXTENSION_SCHEME):
            return f"requests from {origin[:100]} are refused: only the extension may use this endpoint"
        if not web_origin.extension_origins(allowed_ids)(origin):
            return f"extension origin {origin[:100]} is malformed or not in extension.allowedIds"
    site = headers.get("Sec-Fetch-Site")
    if site is not None and site != "none":
        return f"a request with Sec-Fetch-Site: {site[:20]} is a web page's, refused"
    return None


@bp.before_request
def guard() -> None:
    view = (request.endpoint or "").rpartition(".")[2]
    if view not in GUARDED and request.method != "OPTIONS":
        return
    if request.method == "HEAD":  # Flask answers HEAD with the GET view: it would take a command
        raise APIError("HEAD takes nothing here", status=405, code="method_not_allowed")
    state = endpoints()
    reason = refusal(request.method, request.headers, state.allowed_ids)
    if reason is not None:
        log.warning("extension endpoint: refused %s %s (%s)", request.method, request.path, reason)
        raise Forbidden(reason, code="not_extension")
    if state.pairing:
        check_pairing(request.headers.get("Authorization", ""), state.pairing)


def check_pairing(header: str, pairing: str) -> None:
    """Raise :class:`Unauthorized` unless ``header`` is ``Bearer <pairing>`` (constant time)."""
    if not header:
        raise Unauthorized("missing pairing token: send 'Authorization: Bearer <pairing>'", code="missing_pairing")
    scheme, _, given = header.partition(" ")
    if scheme.lower() != "bearer" or not hmac.compare_digest(given.strip().encode(), pairing.encode()):
        raise Unauthorized("bad pairing token", code="bad_pairing")


class CommandSchema(Schema):
    type = fields.String(required=True, metadata={"description": "navigate, query, click, type, screenshot, ..."})
    data = fields.Dict(metadata={"description": "the command's arguments"})
    requestId = fields.Raw(required=True, metadata={"description": "a string or a number, echoed in the result"})


class ResultSchema(Schema):
    requestId = fields.Raw(required=True)
    success = fields.Boolean(required=True)
    data = fields.Raw()
    error = fields.String()


class ResultAck(Schema):
    ok = fields.Boolean(required=True)
    matched = fields.Boolean(required=True, metadata={"description": "false: no client waits for that requestId "
                                                                      "(late, unknown or forged; counted)"})


class HealthSchema(Schema):
    status = fields.String(required=True)
    pending = fields.Integer(required=True, metadata={"description": "clients waiting for an answer"})
    queued = fields.Integer(required=True, metadata={"description": "commands the extension has not taken yet"})
    unknownResponses = fields.Integer()
    expired = fields.Integer()
    timedOut = fields.Integer()
    extensionSeenAt = fields.String(allow_none=True, metadata={"description": "last poll or result (RFC 3339)"})
    extensionSeenAgoMs = fields.Integer(allow_none=True)
    commandTimeoutSec = fields.Float()


@bp.route("/poll", methods=["GET"])
@bp.response(200, CommandSchema, description="the oldest queued command, taken off the queue")
@bp.alt_response(204, description="nothing queued")
def poll() -> Response:
    """The next command for the extension (first in, first out).

    ``?wait=S`` (ours; at most 25 s) holds the request until a command comes or S seconds pass,
    so a command reaches our extension at once rather than at its next poll. The original
    extension sends no ``wait`` and is answered at once, as by the original daemon.
    """
    raw = request.args.get("wait", "0")
    try:
        wait_s = float(raw)
    except ValueError:
        raise BadRequest(f"wait must be a number of seconds, not {raw[:20]!r}", code="bad_wait") from None
    if not 0 <= wait_s <= MAX_WAIT_S:
        raise BadRequest(f"wait must be between 0 and {MAX_WAIT_S:g} seconds", code="bad_wait")
    command = endpoints().commands.poll(wait_s)
    if command is None:
        empty = Response(status=204)
        del empty.headers["Content-Type"]
        return empty
    log.info("extension took %s %r", command.get("type"), command.get("requestId"))
    return jsonify(command)  # passed through whole, as the client wrote it


@bp.route("/response", methods=["POST"])
@bp.response(200, ResultAck)
@bp.doc(requestBody={"required": True, "content": {"application/json": {"schema": ResultSchema}}})
def respond() -> Response:
    """The extension's result for a command, given to the client waiting for it."""
    # Parsed whatever its content type, as the original does.
    try:
        answer = untrusted_json.loads(request.get_data(cache=False) or b"")
    except (ValueError, UnicodeDecodeError) as exc:
        raise BadRequest(f"the body is not JSON: {exc}", code="bad_json") from None
    if not isinstance(answer, dict):
        raise BadRequest("the body must be a JSON object {requestId, success, data | error}", code="bad_json")
    matched = endpoints().commands.respond(answer)
    if not matched:
        log.warning("extension result for unknown requestId %.80r ignored", answer.get("requestId"))
    return jsonify({"ok": True, "matched": matched})


@bp.route("/health", methods=["GET"])
@bp.response(200, HealthSchema)
def health() -> Response:
    """The original's ``{status, pending, queued}``, our counters, when the extension was last heard."""
    return jsonify(endpoints().commands.health())
