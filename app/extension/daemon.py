"""``pinchtab ext daemon``: the polling daemon between clients (Unix socket) and the extension (HTTP).

One process, three roles: the HTTP server (werkzeug, threaded, on a thread, as
:mod:`app.debug.standalone` runs its server) that the extension polls, the socket server that
clients write commands to, and the main thread's loop, which waits for a signal and times out what
is due. SIGINT or SIGTERM stops it: every waiting client gets an error answer, the socket file is
removed, the servers close.

The HTTP side binds loopback only: the extension talks to ``http://127.0.0.1:<port>``, and nothing
beyond this machine has any business with it. Nor has another user of this machine: a connection
whose socket is not this user's (or root's) is closed before anything is read (``same_user_only``,
see :mod:`app.access.peer_uid`), so only the person's own Chrome may take their commands or answer them.
"""
from __future__ import annotations

import logging
import os
import signal
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask

from ..access import web_origin
from ..config import Config, ConfigError, is_loopback
from ..process.local_server import LocalServer
from ..process.signals import SignalQueue
from ..web import errors
from ..web.flask_app import App
from ..web.openapi import init_api
from . import preflight, socket_server
from .channel import init_channel
from .commands import Answer, CommandQueue, check_command, failure
from .errors import ExtensionError
from .http import init_endpoints

log = logging.getLogger(__name__)

DEFAULT_PORT = 19222
PORT_ENV = "SAK_BROWSER_PORT"        # the original daemon's
HEALTH_TYPE = "pinchtab.health"      # a command the daemon answers itself: its health, as data
SWEEP_S = 1.0
STOP_WAIT_S = 5.0   # the owed answers (already decided by the queue's close) get this long to go out


class Stop(BaseException):
    """Leave the daemon's loop (a signal came); a BaseException so no ``except Exception`` swallows it."""


def default_port(env: Any = None) -> int:
    """``$SAK_BROWSER_PORT`` as the original reads it, else 19222."""
    raw = (os.environ if env is None else env).get(PORT_ENV, "")
    try:
        return int(raw) if raw else DEFAULT_PORT
    except ValueError:
        raise ConfigError(PORT_ENV, f"not a port number: {raw!r}") from None


def check_bind(host: str) -> None:
    """Refuse anything but loopback: commands for the person's own browser must not come from afar."""
    if not is_loopback(host):
        raise ConfigError("--bind", f"the extension daemon listens on loopback only (127.0.0.1), not {host}: "
                                    "the extension talks to 127.0.0.1, and anyone reaching the port could "
                                    "read what it answers")


def create_app(config: Config, commands: CommandQueue, *, pairing: str = "") -> Flask:
    """The daemon's Flask app: the extension's endpoints at the root, no bearer token (the original
    extension cannot send one; the Origin guard and loopback stand in for it)."""
    app = App("pinchtab-extension")
    app.config["MAX_CONTENT_LENGTH"] = config.server.max_body_bytes
    api = init_api(app, "Pinchtab extension daemon", "Commands for a browser extension that polls for them.")
    errors.register(app)
    init_endpoints(app, api, commands, allowed_ids=config.extension.allowed_ids, pairing=pairing)
    init_channel(app)   # our extension's way in: a WebSocket instead of a poll and a POST per command
    web_origin.install(app, config.server)
    return app


class Daemon:
    """The HTTP server, the socket server and the queue between them."""

    def __init__(self, config: Config, *, socket_path: Path, port: int = DEFAULT_PORT,
                 bind: str = "127.0.0.1") -> None:
        check_bind(bind)
        self.bind = bind
        self.requested_port = port
        self.timeout_s = float(config.extension.command_timeout_sec)
        self.commands = CommandQueue(timeout_s=self.timeout_s, queue_ttl_s=float(config.extension.queue_ttl_sec))
        self.app = create_app(config, self.commands)
        self.sockets = socket_server.new_server(socket_path, self.start_command, command_timeout_s=self.timeout_s)
        self.http: LocalServer | None = None
        self.port: int | None = None
        self.signals = SignalQueue((signal.SIGTERM, signal.SIGINT))
        self._stopped = False

    @property
    def url(self) -> str:
        host = f"[{self.bind}]" if ":" in self.bind else self.bind
        return f"http://{host}:{self.port}"

    # --- lifecycle

    def start(self) -> Daemon:
        """Claim the socket, then the port; raises :class:`ExtensionError` (another daemon, port taken)."""
        socket_server.start(self.sockets)
        try:
            self.http = LocalServer(self.app, self.bind, self.requested_port, name="ext-http", quiet=True,
                                    same_user_only=True)
        except OSError as exc:
            self.sockets.stop()
            raise ExtensionError(f"cannot listen on {self.bind}:{self.requested_port}: {exc.strerror or exc} "
                                 "(another daemon? choose another --port)") from None
        self.port = self.http.port
        self.http.start()
        log.info("extension daemon: the extension polls %s", self.url)
        return self

    def stop(self) -> None:
        """Answer every waiting client ("daemon stopping"), then close the socket and HTTP servers.
        Once: a second call does nothing."""
        if self._stopped:
            return
        self._stopped = True
        waiting = self.commands.close()
        if waiting:
            log.info("extension daemon: %d waiting command(s) answered with an error", waiting)
        self.sockets.stop(STOP_WAIT_S)
        if self.http is not None:
            self.http.stop()
        self.signals.close()

    def run(self) -> int:
        """Serve until SIGINT or SIGTERM (main thread only); returns the exit status."""
        # The handlers go in before anything serves: a client's command (and a signal after it) may
        # come while start() is still binding the port, and the default action would kill the daemon
        # with that client unanswered.
        self.signals.install()
        try:
            self.start()
        except BaseException:   # e.g. the port is taken: release what start claimed, handlers as they were
            self.signals.restore()
            self.stop()
            raise
        try:
            self.manage()
        except Stop as stop:
            log.info("extension daemon: %s, stopping", stop)
        finally:
            self.signals.ignore()  # the (bounded) cleanup runs to its end
            self.stop()
        return 0

    def manage(self) -> None:
        """The main loop: stop on a signal; answer what timed out, even with no client waiting."""
        while True:
            sig = self.signals.pop()
            if sig is not None:
                raise Stop(f"received {signal.Signals(sig).name}")
            self.commands.sweep()
            self.signals.wait(SWEEP_S)

    # --- a client's command

    def start_command(self, command: Any) -> Callable[[], Answer]:
        """Queue a client's command now; return what waits for its answer (at most the command
        timeout): the extension's, a timeout, the daemon stopping, or the failure of a click or type
        whose selector matches nothing (checked first, see :mod:`.preflight`)."""
        request_id = command.get("requestId") if isinstance(command, dict) else None

        def answered(answer: Answer) -> Callable[[], Answer]:
            return lambda: answer

        try:
            check_command(command)
            if command["type"] == HEALTH_TYPE:
                return answered({"requestId": request_id, "success": True, "data": self.commands.health()})
            deadline = self.commands.clock() + self.timeout_s
            check = preflight.check_query(command, f"pinchtab-check-{uuid.uuid4().hex[:12]}")
            if check is None:
                return self.commands.submit(command, deadline=deadline).wait
            checking = self.commands.submit(check, deadline=deadline)
        except ExtensionError as exc:
            return answered(failure(request_id, str(exc)))

        def checked_then_sent() -> Answer:
            refused = preflight.verdict(command, checking.wait())
            if refused is not None:
                return refused
            try:
                return self.commands.submit(command, deadline=deadline).wait()
            except ExtensionError as exc:
                return failure(request_id, str(exc))

        return checked_then_sent
