"""The agent's terminal that ``pinchtab debug connect`` and ``pinchtab debug attach`` share: when the
process ends (:class:`Exit`: SIGINT or SIGTERM, or a thread that saw the end), stdout (:class:`Output`:
one JSON object per line, or text for people), stdin (:class:`Console`: JSON objects or the REPL's words,
read on a thread of its own, with the REPL's history) and the terminal's mode (:func:`agent_terminal`).
The wording is :mod:`app.clients.debug_console`'s; the reading and writing is here.
"""
from __future__ import annotations

import json
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from ..config import ConfigError, load_config
from . import debug_console as console
from .debug_console import Cache, Local, dumps

__all__ = ["CLOSE_WAIT_S", "IDLE_WAKE_S", "Console", "Exit", "Output", "agent_terminal"]

log = logging.getLogger(__name__)

IDLE_WAKE_S = 1.0          # threads look at the stop flag at least this often
SIGNAL_TICK_S = 0.05       # the main thread looks at the signal flag this often
CLOSE_WAIT_S = 1.0         # connections get this long to close at shutdown
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


@contextmanager
def agent_terminal(exit: Exit, as_json: bool) -> Iterator[bool]:
    """The terminal for the run of a command, and whether it is a REPL: SIGINT and SIGTERM end it
    through ``exit``, and the terminal's mode is as it was afterwards."""
    repl = _is_repl(as_json)
    with _signals(exit), _terminal(repl):
        yield repl
