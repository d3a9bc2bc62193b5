"""The extension's HTTP side: ``GET /poll``, ``POST /response``, ``GET /health``.

The original extension's protocol, unchanged (``reference/extension-protocol.md``), with one guard it
lacks: ``/poll`` and ``/response`` refuse what a web page can send. A page on any site may fetch
``http://127.0.0.1:19222/poll`` (a form post or a no-cors fetch needs no permission), so without the
guard it could take the agent's commands, or forge their results. Every request a page makes carries
``Sec-Fetch-Site: same-site`` or ``cross-site``, and, where it carries an Origin, an ``http(s)`` one;
the extension's polls carry no Origin and ``Sec-Fetch-Site: none``, its results a
``chrome-extension://`` Origin (one of ``extension.allowedIds`` when any are listed). The guard is
the web-origin policy's (``app.access.web_origin``: :func:`doors`, one door per entry that is the
extension's alone, the relay's and the command channel's alike); here only preflights are refused
(no CORS header is ever sent) and HEAD, which would take a command.

The blueprint keeps no state of its own: :func:`init_endpoints` puts it in
``app.extensions["pinchtab.extension"]``, so another app (the bridge, with a pairing token) can
serve the same endpoints.
"""
from __future__ import annotations

import hmac
import logging
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
    for door in doors(allowed_ids, url_prefix):
        web_origin.admit(app, door)
    api.register_blueprint(bp, url_prefix=url_prefix or None)
    return endpoints


def endpoints() -> Endpoints:
    return current_app.extensions[STATE]


def doors(allowed_ids: tuple[str, ...], url_prefix: str = "") -> list[web_origin.Door]:
    """The extension's requests carry its chrome-extension:// Origin: the one web origin let in on
    its port; ``/poll`` and ``/response`` are its alone, not even this port's own origin's (it serves
    no pages)."""
    refused = web_origin.Refusal("not_extension", "only the Pinchtab extension may use this endpoint")
    own = [web_origin.extension_only(f"{url_prefix}{path}", allowed_ids, refused) for path in ("/poll", "/response")]
    return [web_origin.Door("/", web_origin.extension_origins(allowed_ids), prefix=True), *own]


@bp.before_request
def guard() -> None:
    view = (request.endpoint or "").rpartition(".")[2]
    if view not in GUARDED and request.method != "OPTIONS":
        return
    if request.method == "OPTIONS":   # who sent it was judged in front (app.access.web_origin)
        raise Forbidden("CORS preflights are refused: only the extension may use this endpoint", code="not_extension")
    if request.method == "HEAD":  # Flask answers HEAD with the GET view: it would take a command
        raise APIError("HEAD takes nothing here", status=405, code="method_not_allowed")
    state = endpoints()
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
