"""``pinchtab debug connect`` and ``pinchtab debug attach``: an agent's terminal on a debug session.

``connect`` is a drop-in for the original ``debug-bridge connect``: it serves the WebSocket
``/debug`` for one session (:class:`~app.debug.standalone.StandaloneServer`, in this process) and is
that session's local agent. ``attach`` joins a session hosted by a running bridge as an agent over
its WebSocket. Both print what the app sends on stdout (one JSON object per line with ``--json``,
readable text otherwise, a REPL with a terminal) and take commands on stdin (JSON objects or the
REPL's words); the wording is :mod:`app.clients.debug_console`'s, the I/O is here.

Lifetime: stdin's end does not stop them (an agent may only listen), SIGINT or SIGTERM ends them
with status 0, closing every connection within a second. ``attach`` whose connection drops tries
again with backoff for up to ``RECONNECT_FOR_S`` while stdin is open (a bridge restarting, a
proxy's idle cut); it gives up at once when the session is gone (404) or the token is refused,
and when stdin has ended, since no one could send it anything more. Giving up exits with 1.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from ..config import ConfigError, load_config
from . import debug_console as console
from .debug_console import Cache, Local, dumps

log = logging.getLogger(__name__)

IDLE_WAKE_S = 1.0          # threads look at the stop flag at least this often
SIGNAL_TICK_S = 0.05       # the main thread looks at the signal flag this often
CLOSE_WAIT_S = 1.0         # connections get this long to close at shutdown
CONNECT_TIMEOUT_S = 10.0
RECONNECT_FOR_S = 30.0
RECONNECT_DELAYS_S = (0.5, 1.0, 2.0, 4.0, 8.0)
READ_BYTES = 64 * 1024
MAX_LINE_BYTES = 16 * 1024 * 1024   # a command line longer than this is dropped (frames are smaller)
HISTORY_FILE = "debug_history"
HISTORY_LENGTH = 1000
PROMPT = "debug> "


class Exit:
    """When the process ends, and with which status: the main thread waits on it; a signal or a
    thread that saw the end (stdout gone, the session gone, a person's Ctrl-D) sets it."""

    def __init__(self) -> None:
        self.code = 0
        self._done = threading.Event()
        self._signalled = False

    def halt(self, code: int = 0) -> None:
        """From any thread: end the process with ``code`` (the first call wins)."""
        if not self._done.is_set():
            self.code = code
            self._done.set()

    def note_signal(self) -> None:
        """From a signal handler: only a flag (taking the event's lock there could deadlock the main
        thread, which may hold it); the main thread sees it within ``SIGNAL_TICK_S``."""
        self._signalled = True

    def wait(self) -> None:
        while not self._done.wait(SIGNAL_TICK_S):
            if self._signalled:
                self.halt(0)


@contextmanager
def _signals(exit: Exit) -> Iterator[None]:
    """SIGINT and SIGTERM end the process with 0; the handlers only say so (the main thread cleans up).

    Stdin is read on a thread of its own rather than here: a signal delivered to another thread
    would not interrupt a blocking read of the main one.
    """
    handler = lambda signum, frame: exit.note_signal()   # noqa: E731
    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


# --- stdout

class Output:
    """stdout, one event per line (JSON, or text for people), from any thread, flushed at once
    (an agent reads it through a pipe)."""

    def __init__(self, stream: TextIO, as_json: bool, colour: bool) -> None:
        self.stream = stream
        self.as_json = as_json
        self.colour = colour
        self.prompting = False     # the REPL's prompt is on screen: print above it, then redraw it
        self._lock = threading.Lock()

    @classmethod
    def for_stdout(cls, as_json: bool) -> Output:
        tty = sys.stdout.isatty()
        if as_json:
            # An agent parses these lines: UTF-8 whatever the locale, and nothing held back.
            sys.stdout.reconfigure(encoding="utf-8", line_buffering=True)  # type: ignore[union-attr]
        return cls(sys.stdout, as_json, colour=tty and not as_json and not os.environ.get("NO_COLOR"))

    def emit(self, line: dict[str, Any]) -> None:
        self.write(dumps(line) if self.as_json else console.render(line, self.colour))

    def write(self, text: str) -> None:
        with self._lock:
            if self.prompting:
                import readline

                text = f"\r\x1b[K{text}\n{PROMPT}{readline.get_line_buffer()}"
                self.stream.write(text)
            else:
                self.stream.write(text + "\n")
            self.stream.flush()

    def clear(self) -> None:
        if self.stream.isatty():
            self.write("\x1b[2J\x1b[H")


# --- stdin

class Console:
    """The agent's side shared by both commands: messages in from the session, lines in from stdin."""

    def __init__(self, out: Output, session_id: str, send: Callable[[dict[str, Any]], None]) -> None:
        self.out = out
        self.session_id = session_id
        self.cache = Cache()
        self._send = send
        self.screenshot_dir = "."
        self.stdin_open = True

    def handle_message(self, text: str) -> None:
        """A frame the session sent this agent: its line on stdout."""
        try:
            msg = json.loads(text)
        except ValueError:
            return
        if not isinstance(msg, dict):
            return
        self.cache.remember(msg)
        line = console.json_line(msg, self.screenshot_dir)
        if line is not None:
            self.out.emit(line)

    def handle_line(self, text: str) -> None:
        parsed = console.parse_input(text, self.session_id, self.cache)
        if parsed is None:
            return
        if isinstance(parsed, Local):
            self._local(parsed)
            return
        # Said before it goes: with no app the hub answers at once, and the answer must come after.
        self.out.emit(console.command_sent(parsed))
        self._send(parsed)

    def _local(self, answer: Local) -> None:
        if answer.action == "clear":
            self.out.clear()
        elif answer.action == "unknown" and self.out.as_json:
            pass   # the original ignores lines that are not JSON in --json mode
        elif answer.line is not None:
            self.out.emit(answer.line)

    def start_stdin(self, repl: bool, exit: Exit) -> threading.Thread:
        """Read stdin on a thread until it ends: a person's Ctrl-D ends the REPL and the process;
        the end of a pipe does not (the agent may only listen)."""

        def read() -> None:
            try:
                if repl:
                    self._repl()
                    exit.halt(0)
                else:
                    self._pipe()
            except OSError:   # stdout is gone: nobody is listening any more
                exit.halt(1)

        thread = threading.Thread(target=read, name="debug-stdin", daemon=True)
        thread.start()
        return thread

    def _pipe(self) -> None:
        # The file descriptor itself, not sys.stdin: a daemon thread blocked inside sys.stdin's
        # buffered reader at exit makes the interpreter abort on that buffer's lock.
        fd = sys.stdin.fileno()
        line = bytearray()
        skipping = False   # the rest of a line past MAX_LINE_BYTES, dropped
        try:
            while chunk := os.read(fd, READ_BYTES):
                start = 0
                while (end := chunk.find(b"\n", start)) != -1:
                    if not skipping:
                        line += chunk[start:end]
                        self.handle_line(line.decode("utf-8", "replace"))
                    line.clear()
                    skipping = False
                    start = end + 1
                if not skipping:
                    line += chunk[start:]
                if len(line) > MAX_LINE_BYTES:
                    self.out.emit({"event": "error", "error": f"a line of stdin longer than "
                                                              f"{MAX_LINE_BYTES // (1024 * 1024)} MiB was dropped"})
                    line.clear()
                    skipping = True
            if line and not skipping:
                self.handle_line(line.decode("utf-8", "replace"))
        finally:
            self.stdin_open = False

    def _repl(self) -> None:
        history = _history_file()
        _load_history(history)
        try:
            while True:
                self.out.prompting = True
                try:
                    line = input(PROMPT)
                except EOFError:   # Ctrl-D: the terminal's newline comes as it is restored
                    break
                finally:
                    self.out.prompting = False
                self.handle_line(line)
        finally:
            self.stdin_open = False
            _save_history(history)


def _history_file() -> Path | None:
    """The REPL's history in Pinchtab's state directory when there is one; else it lives in memory."""
    try:
        state_dir = load_config().server.state_dir
    except ConfigError:
        return None
    return state_dir / HISTORY_FILE if state_dir.is_dir() else None


def _load_history(path: Path | None) -> None:
    import readline

    readline.set_history_length(HISTORY_LENGTH)
    if path is not None and path.is_file():
        try:
            readline.read_history_file(path)
        except OSError:
            pass


def _save_history(path: Path | None) -> None:
    if path is None:
        return
    import readline

    try:
        readline.write_history_file(path)
    except OSError:
        log.info("debug: could not save the REPL history to %s", path)


def _is_repl(as_json: bool) -> bool:
    return not as_json and sys.stdin.isatty() and sys.stdout.isatty()


@contextmanager
def _terminal(repl: bool) -> Iterator[None]:
    """The terminal as it was, even when the process ends while readline holds it in its own mode."""
    if not repl:
        yield
        return
    import termios

    fd = sys.stdin.fileno()
    saved = termios.tcgetattr(fd)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
        sys.stdout.write("\n")
        sys.stdout.flush()


# --- connect

def run_connect(args: argparse.Namespace) -> int:
    """``pinchtab debug connect``: serve one session and be its local agent.

    Without ``--session`` the session id is a new random one (printed in the first line): the id is
    what admits an app, and the original's ``default`` is the first one any page would try.
    """
    from ..debug.hub import new_session_id, queued_peer
    from ..debug.standalone import StandaloneServer

    as_json = bool(getattr(args, "json", False))
    logging.getLogger("werkzeug").setLevel(logging.WARNING)   # a request line per connection is noise here
    config = load_config()
    session_id: str = args.session or new_session_id()
    try:
        server = StandaloneServer(config, args.host, args.port, session_id)
    except OSError as exc:
        print(f"pinchtab: cannot listen on {args.host}:{args.port}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    out = Output.for_stdout(as_json)
    exit = Exit()
    wake = threading.Event()
    done = threading.Event()
    hub, session = server.hub, server.session
    # Never cut loose: this agent is the process itself. Its outbox stays bounded (the oldest go and
    # the printer says how many), and at shutdown the process ends anyway.
    peer = queued_peer("agent", "cli", wake.set, lambda code, reason: None, {"kind": "cli"},
                       max_bytes=hub.outbox_bytes)
    assert peer.outbox is not None
    box = peer.outbox
    term = Console(out, session_id, lambda cmd: hub.from_agent(session, peer, dumps(cmd)))

    def print_loop() -> None:
        try:
            while not done.is_set():
                wake.wait(IDLE_WAKE_S)
                wake.clear()
                items, lost = box.take()
                if lost:
                    out.emit(console.dropped(lost, box.total_dropped))
                for text in items:
                    term.handle_message(text)
            for text in box.take()[0]:   # what came in just before the end
                term.handle_message(text)
        except OSError:   # stdout is gone (the agent closed the pipe): nobody is listening
            exit.halt(1)

    printer = threading.Thread(target=print_loop, name="debug-printer", daemon=True)
    repl = _is_repl(as_json)
    with _signals(exit), _terminal(repl):
        try:
            hub.join(session, peer)   # first: whoever connects after server_started finds us there
            server.start()
            out.emit(console.server_started(server.url, session_id))
            printer.start()
            term.start_stdin(repl, exit)
            exit.wait()
        finally:
            hub.leave(session, peer)
            _close_all(server)
            done.set()
            wake.set()
            if printer.is_alive():
                printer.join(IDLE_WAKE_S)
    return exit.code


def _close_all(server: Any) -> None:
    """Close every connection (each gets a close frame, or loses its socket after a second), then stop."""
    server.hub.close_all()
    deadline = time.monotonic() + CLOSE_WAIT_S
    while server.hub.connections and time.monotonic() < deadline:
        time.sleep(0.02)
    server.stop()


# --- attach

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
    repl = _is_repl(as_json)
    with _signals(exit), _terminal(repl):
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


# --- the parsers

def _port(text: str) -> int:
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"not a port: {port} (0 picks a free one)")
    return port


def _session_id(text: str) -> str:
    """``--session``'s value: any id but an empty one or one that reads as an option."""
    if not text or text.startswith("-"):
        raise argparse.ArgumentTypeError(f"not a session id: {text!r} (leave --session out for a random one)")
    return text


def add_parser(sub: argparse._SubParsersAction) -> None:
    """``pinchtab debug connect|attach``."""
    p = sub.add_parser("debug", help="live telemetry and commands between a web app and an agent",
                       description="Debug a web app live: its console, errors, network, DOM and state as they "
                                   "happen, and commands to it (the debug bridge protocol).")
    dsub = p.add_subparsers(dest="debug_command", metavar="COMMAND", required=True)
    json_help = "one JSON object per line on stdout (for agents); commands as JSON objects or REPL words on stdin"

    c = dsub.add_parser("connect", help="serve one debug session here and be its agent (no browser needed)",
                        description="A drop-in for `debug-bridge connect`: a WebSocket server at /debug for one "
                                    "session; apps join with ws://HOST:PORT/debug?role=app&sessionId=SESSION. "
                                    "Beyond loopback it needs a token (agents send it; apps are admitted by the "
                                    "session id, which must then be long and random).")
    c.add_argument("-s", "--session", type=_session_id, default=None,
                   help="the session id apps join (default: a new random one, printed at start)")
    c.add_argument("-p", "--port", type=_port, default=4000, help="port to listen on (default 4000; 0 picks one)")
    c.add_argument("--host", default="localhost", help="address to listen on (default localhost)")
    c.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=json_help)
    c.set_defaults(run=run_connect)

    a = dsub.add_parser("attach", help="join a debug session of a running bridge as an agent",
                        description="Join a bridge-hosted session (POST /debug/sessions) as an agent, with the "
                                    "same stdin and stdout as `pinchtab debug connect`.")
    a.add_argument("-s", "--session", required=True, help="the session id (from POST /debug/sessions)")
    a.add_argument("--server", metavar="URL", default=argparse.SUPPRESS,
                   help="the pinchtab server (default: $PINCHTAB_SERVER, else 127.0.0.1 and the config's port); "
                        "the token comes from PINCHTAB_TOKEN or the config")
    a.add_argument("--json", action="store_true", default=argparse.SUPPRESS, help=json_help)
    a.set_defaults(run=run_attach)
