"""``pinchtab debug attach``: join a session hosted by a running bridge as an agent, over its WebSocket,
on the terminal of :mod:`app.clients.debug_terminal`. A dropped connection is reopened with backoff for up
to ``RECONNECT_FOR_S`` while stdin is open; an unknown session (404) or a refused token ends it at once.
"""
from __future__ import annotations

import argparse
import logging
import sys
import threading
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from .debug_console import dumps
from .debug_terminal import CLOSE_WAIT_S, IDLE_WAKE_S, Console, Exit, Output, agent_terminal

__all__ = ["AttachError", "Link", "agent_url", "run_attach"]

CONNECT_TIMEOUT_S = 10.0
RECONNECT_FOR_S = 30.0
RECONNECT_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0)


class AttachError(Exception):
    """The bridge refused the agent's connection, or could not be reached; the message says which."""

    def __init__(self, message: str, *, final: bool = True) -> None:
        super().__init__(message)
        self.final = final     # retrying cannot help (unknown session, refused token)


def agent_url(base_url: str, session_id: str) -> str:
    """The bridge's WebSocket for an agent of ``session_id``."""
    scheme, _, rest = base_url.partition("://")
    ws = "wss" if scheme == "https" else "ws"
    return f"{ws}://{rest.rstrip('/')}/debug?role=agent&sessionId={quote(session_id, safe='')}"


class Link:
    """The agent's WebSocket to a bridge-hosted session: opened, read on one thread, reopened."""

    def __init__(self, base_url: str, session_id: str, headers: list[str], on_text: Callable[[str], None]) -> None:
        self.base_url = base_url
        self.session_id = session_id
        self.url = agent_url(base_url, session_id)
        self.headers = headers
        self.on_text = on_text
        self.closing = False
        self.ws: Any = None
        self._lock = threading.Lock()

    def open(self) -> None:
        """Connect; :class:`AttachError` with a message for people when that fails."""
        import websocket

        try:
            ws = websocket.create_connection(self.url, timeout=CONNECT_TIMEOUT_S, header=self.headers,
                                             skip_utf8_validation=True, enable_multithread=True)
        except websocket.WebSocketBadStatusException as exc:
            raise self._refused(exc.status_code) from None
        except (OSError, websocket.WebSocketException) as exc:
            raise AttachError(f"cannot reach pinchtab at {self.base_url} ({type(exc).__name__}); is it running? "
                              "Point --server at it", final=False) from None
        ws.settimeout(IDLE_WAKE_S * 5)
        with self._lock:
            self.ws = ws

    def _refused(self, status: int) -> AttachError:
        if status == 404:
            return AttachError(f"unknown debug session {self.session_id!r} on {self.base_url} "
                               "(start one with POST /debug/sessions)")
        if status == 401:
            return AttachError(f"{self.base_url} needs the token: set PINCHTAB_TOKEN or server.token in the config")
        if status == 403:
            return AttachError(f"{self.base_url} refused this agent (HTTP 403)")
        if status == 503:
            return AttachError(f"{self.base_url} has too many debug connections; try again later", final=False)
        return AttachError(f"{self.base_url} refused the WebSocket (HTTP {status})", final=False)

    def send(self, cmd: dict[str, Any]) -> bool:
        import websocket

        with self._lock:
            ws = self.ws
        if ws is None:
            return False
        try:
            ws.send(dumps(cmd))
        except (OSError, websocket.WebSocketException):
            return False
        return True

    def read(self) -> tuple[int, str]:
        """Frames to ``on_text`` until the connection ends: its close code (1006: no close frame) and reason."""
        import websocket

        ws = self.ws
        while not self.closing:
            try:
                opcode, frame = ws.recv_data_frame(True)
            except websocket.WebSocketTimeoutException:
                continue
            except (OSError, websocket.WebSocketException):
                return 1006, "connection lost"
            if opcode == websocket.ABNF.OPCODE_TEXT:
                self.on_text(frame.data.decode("utf-8", "replace"))
            elif opcode == websocket.ABNF.OPCODE_BINARY:
                self.on_text(bytes(frame.data).decode("utf-8", "replace"))
            elif opcode == websocket.ABNF.OPCODE_CLOSE:
                data = bytes(frame.data or b"")
                code = int.from_bytes(data[:2], "big") if len(data) >= 2 else 1005
                return code, data[2:].decode("utf-8", "replace")
        return 1000, "closing"

    def close(self) -> None:
        """Say goodbye (a close frame) without reading: the reader thread sees the answer."""
        self.closing = True
        with self._lock:
            ws = self.ws
        if ws is not None:
            try:
                ws.send_close()
            except Exception:   # already gone: nothing left to close politely
                pass

    def shutdown(self) -> None:
        with self._lock:
            ws, self.ws = self.ws, None
        if ws is not None:
            ws.shutdown()


def run_attach(args: argparse.Namespace) -> int:
    """``pinchtab debug attach``: be an agent of a bridge-hosted session."""
    from .rest import connect

    as_json = bool(getattr(args, "json", False))
    logging.getLogger("websocket").setLevel(logging.CRITICAL)   # we say what a close means ourselves
    client = connect(getattr(args, "server", None), agent_id="cli", source="cli")
    auth = client.authorization
    out = Output.for_stdout(as_json)
    exit = Exit()
    term = Console(out, args.session, lambda cmd: _send(link, cmd, out))
    link = Link(client.base_url, args.session, [f"Authorization: {auth}"] if auth else [], term.handle_message)
    try:
        link.open()
    except AttachError as exc:
        print(f"pinchtab: {exc}", file=sys.stderr)
        return 1

    def read_loop() -> None:
        try:
            while not link.closing:
                code, reason = link.read()
                if link.closing:
                    return
                problem = _reconnect(link, term, out, code, reason)
                if problem:
                    print(f"pinchtab: {problem}", file=sys.stderr)
                    exit.halt(1)
                    return
        except OSError:   # stdout is gone
            exit.halt(1)

    reader = threading.Thread(target=read_loop, name="debug-attach-reader", daemon=True)
    with agent_terminal(exit, as_json) as repl:
        try:
            reader.start()
            term.start_stdin(repl, exit)
            exit.wait()
        finally:
            link.close()
            reader.join(CLOSE_WAIT_S)
            link.shutdown()
    return exit.code


def _send(link: Link, cmd: dict[str, Any], out: Output) -> None:
    if not link.send(cmd):
        out.emit({"event": "error", "requestId": cmd.get("requestId"), "type": cmd.get("type"),
                  "error": "not connected to the session (reconnecting)"})


def _reconnect(link: Link, term: Console, out: Output, code: int, reason: str) -> str | None:
    """After the connection ended: reopen it with backoff; None when that worked, else why not."""
    ended = f"the connection to session {link.session_id!r} ended ({code}{' ' + reason if reason else ''})"
    link.shutdown()
    if not term.stdin_open:
        return ended
    out.emit({"event": "info", "message": f"{ended}; reconnecting"})
    deadline = time.monotonic() + RECONNECT_FOR_S
    for attempt in range(1000):
        delay = RECONNECT_DELAYS_S[min(attempt, len(RECONNECT_DELAYS_S) - 1)]
        if time.monotonic() + delay > deadline or link.closing:
            break
        time.sleep(delay)
        try:
            link.open()
        except AttachError as exc:
            if exc.final:
                return f"{ended}, and reconnecting failed: {exc}"
            continue
        out.emit({"event": "info", "message": f"reconnected to session {link.session_id!r}"})
        return None
    return f"{ended}; could not reconnect within {RECONNECT_FOR_S:g} s"

