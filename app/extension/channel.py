"""Our extension's command channel: the polling protocol's commands over one WebSocket.

The original extension polls (``GET /poll``, ``POST /response``): two HTTP requests of a service
worker per command, which is most of a command's round trip. Our extension opens ``/commands``
instead: each command arrives as a frame the moment a client sends it, and its result goes back as
a frame. Same queue, same results, same guards: only an extension's Origin may open it (a web page
always sends its own), and where the endpoints are paired the first frame carries the pairing
token. A server without the channel answers the upgrade with 404, and our extension polls.
"""
from __future__ import annotations

import json
import logging
import threading
from typing import Any

from flask import Blueprint, Flask, request
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from ..web import untrusted_json
from ..web.errors import Forbidden
from . import pairing
from .commands import CommandQueue, failure
from .http import EXTENSION_SCHEME, endpoints, refusal
from .relay import BAD_PAIRING, read_hello

log = logging.getLogger(__name__)

bp = Blueprint("extension_channel", __name__)
sock = Sock()

TAKE_WAIT_S = 1.0   # a wait for the next command; between two, the loop sees a closed socket or queue


@bp.before_request
def admit() -> None:
    origin = request.headers.get("Origin") or ""
    # A WebSocket handshake always carries the Origin of whoever opened it: an extension's is its own.
    reason = refusal("GET", {"Origin": origin}, endpoints().allowed_ids) if origin.startswith(EXTENSION_SCHEME) \
        else "only the Pinchtab extension may open the command channel"
    if reason is not None:
        log.warning("extension channel: refused (%s)", reason)
        raise Forbidden(reason, code="not_extension")


@sock.route("/commands", bp=bp)
def command_channel(ws: Any) -> None:
    ep = endpoints()
    hello = read_hello(ws)
    if hello is None or (ep.pairing and not pairing.matches(str(hello.get("pairing", "")), ep.pairing)):
        ws.close(BAD_PAIRING, "bad pairing token: run `pinchtab extension pair` and set it in the extension")
        return
    Channel(ws, ep.commands).run()


class Channel:
    """One open channel: commands out on the request's thread, results in on a thread of their own."""

    def __init__(self, ws: Any, commands: CommandQueue) -> None:
        self.ws = ws
        self.commands = commands
        self.done = threading.Event()

    def run(self) -> None:
        threading.Thread(target=self._results_loop, name="ext-channel-results", daemon=True).start()
        try:
            while not self.done.is_set() and not self.commands.closed:
                command = self.commands.poll(TAKE_WAIT_S)
                if command is None:
                    continue
                try:
                    self.ws.send(json.dumps(command, separators=(",", ":")))
                except (ConnectionClosed, OSError):
                    # Taken off the queue and never delivered: its client hears so now, not at its timeout.
                    self.commands.respond(failure(command.get("requestId"),
                                                  "the extension disconnected before it took the command"))
                    break
        finally:
            self.done.set()

    def _results_loop(self) -> None:
        try:
            while not self.done.is_set():
                frame = self.ws.receive(timeout=TAKE_WAIT_S)
                if frame is None:
                    continue
                try:
                    answer = untrusted_json.loads(frame)
                except ValueError:
                    log.warning("extension channel: an unparsable frame dropped (%d bytes)", len(frame))
                    continue
                if isinstance(answer, dict) and "requestId" in answer:
                    self.commands.respond(answer)   # pings and other frames are only traffic
        except (ConnectionClosed, OSError):
            pass
        finally:
            self.done.set()


def init_channel(app: Flask) -> None:
    """Serve the command channel on ``app``, beside the endpoints :func:`.http.init_endpoints` put there."""
    app.register_blueprint(bp)
