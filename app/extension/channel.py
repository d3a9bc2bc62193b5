"""Our extension's command channel: the polling protocol's commands over one WebSocket.

The original extension polls (``GET /poll``, ``POST /response``): two HTTP requests of a service
worker per command, which is most of a command's round trip. Our extension opens ``/commands``
instead: each command arrives as a frame the moment a client sends it, and its result goes back as
a frame. Same queue, same results, same guards: only the extension may open it (the web-origin
policy's door, :func:`door`: its ``chrome-extension://`` Origin, one of ``extension.allowedIds``
when any are listed; a web page always sends its own), and where the endpoints are paired the first
frame carries the pairing token. A server without the channel answers the upgrade with 404, and our
extension polls.

The socket is a served one (``app.sockets.served``): results come in on the request's thread,
commands go out on a thread of their own that waits on the queue.
"""
from __future__ import annotations

import json
import logging
import threading
from typing import Any

from flask import Blueprint, Flask
from flask_sock import Sock
from simple_websocket import ConnectionClosed

from ..access import web_origin
from ..sockets import served
from . import pairing
from .commands import CommandQueue, failure
from .http import STATE, endpoints
from .relay import BAD_PAIRING, MAX_FRAME_BYTES, read_hello

log = logging.getLogger(__name__)

bp = Blueprint("extension_channel", __name__)
sock = Sock()

TAKE_WAIT_S = 1.0   # a wait for the next command; between two, the loop sees a closed socket or queue


def door(allowed_ids: tuple[str, ...]) -> web_origin.Door:
    """Only the extension may open the channel: a WebSocket it opens always names its Origin."""
    return web_origin.extension_only(
        "/commands", allowed_ids, web_origin.Refusal("not_extension", "only the Pinchtab extension may open the "
                                                                      "command channel"), origin_required=True)


@sock.route("/commands", bp=bp)
def command_channel(ws: Any) -> None:
    ep = endpoints()
    hello = read_hello(ws)
    if hello is None or (ep.pairing and not pairing.matches(str(hello.get("pairing", "")), ep.pairing)):
        ws.close(BAD_PAIRING, "bad pairing token: run `pinchtab extension pair` and set it in the extension")
        return
    Channel(ws, ep.commands).run()


class Channel(served.ServedSocket):
    """One open channel: results in on the request's thread, commands out on a thread of their own."""

    def __init__(self, ws: Any, commands: CommandQueue) -> None:
        super().__init__(ws)
        self.commands = commands
        self.done = threading.Event()

    def opened(self) -> None:
        threading.Thread(target=self._commands_loop, name="ext-channel-commands", daemon=True).start()

    def wait_s(self) -> float:
        return TAKE_WAIT_S

    def on_frame(self, frame: str | bytes) -> None:
        answer = served.json_object(frame, "extension channel")
        if answer is not None and "requestId" in answer:
            self.commands.respond(answer)   # pings and other frames are only traffic

    def tick(self) -> None:
        if (self.done.is_set() or self.commands.closed) and self.closing is None:
            self.closing = (1000, "")

    def ended(self) -> None:
        self.done.set()

    def _commands_loop(self) -> None:
        try:
            while not self.done.is_set() and not self.commands.closed:
                command = self.commands.poll(TAKE_WAIT_S)
                if command is None:
                    continue
                try:
                    self.send(json.dumps(command, separators=(",", ":")))
                except (ConnectionClosed, OSError):
                    # Taken off the queue and never delivered: its client hears so now, not at its timeout.
                    self.commands.respond(failure(command.get("requestId"),
                                                  "the extension disconnected before it took the command"))
                    break
        finally:
            self.done.set()
            self.ws.event.set()   # the request thread wakes and ends the channel


def init_channel(app: Flask) -> None:
    """Serve the command channel on ``app``, beside the endpoints :func:`.http.init_endpoints` put there
    (whose ``extension.allowedIds`` it honours)."""
    web_origin.admit(app, door(app.extensions[STATE].allowed_ids))
    if "SOCK_SERVER_OPTIONS" not in app.config:   # the relay beside it (the bridge's port) set the same
        # Results carry screenshots: frames as large as the relay's. No server pings: two threads send already.
        served.configure(app, max_frame_bytes=MAX_FRAME_BYTES, ping_interval_s=None)
    app.register_blueprint(bp)
