"""The clients' side of the daemon: a Unix socket speaking newline-delimited JSON both ways.

The original CLI's protocol: a client writes command lines ``{type, data, requestId}`` and reads
answer lines, matched by requestId and written in the order they finish (several commands may share
a connection). An unparsable line answers ``{success: false, error: "<parse error>"}``. When the
client ends its side, the answers still owed are written (each within its deadline), then the
connection is closed: the original CLI reads one line and closes, others end their side first and
read after.

The socket lives where the original's does (:func:`default_socket_path`), but in a 0700 folder and
with mode 0600, not world-writable: whoever can write to it drives the person's browser.
"""
from __future__ import annotations

import json
import logging
import os
import socket
import stat
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..web import untrusted_json
from .commands import Answer
from .errors import DaemonRunning, ExtensionError

log = logging.getLogger(__name__)

SOCKET_NAME = "browser.sock"
ACCEPT_WAKE_S = 0.5        # the accept loop looks at the stop flag this often
IO_TIMEOUT_S = 10.0        # one write of an answer (a screenshot is megabytes) gets this long
MAX_CONNECTIONS = 64
MAX_LINE_BYTES = 16 * 1024 * 1024
OWED_GRACE_S = 5.0         # beyond the commands' own deadline, when waiting for owed answers

# Starts a command (on the connection's reader thread, so commands queue in the order their lines
# came) and returns what waits for its answer (called on a thread of its own).
Runner = Callable[[Any], Callable[[], Answer]]


def default_socket_path(env: Mapping[str, str] | None = None) -> Path:
    """The original's socket path: ``$SAK_BROWSER_SKILL_DIR/browser.sock``, else
    ``$SAK_HOME/browser/browser.sock``, ``SAK_HOME`` defaulting to ``~/.sovereign-ai``."""
    env = os.environ if env is None else env
    skill_dir = env.get("SAK_BROWSER_SKILL_DIR")
    if skill_dir:
        return Path(skill_dir) / SOCKET_NAME
    sak_home = env.get("SAK_HOME") or os.path.join(os.path.expanduser("~"), ".sovereign-ai")
    return Path(sak_home) / "browser" / SOCKET_NAME


def dumps(answer: Answer) -> bytes:
    return json.dumps(answer, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def parse_line(line: bytes) -> Any:
    """The JSON value of a command line; raises ValueError (with the parser's message)."""
    return untrusted_json.loads(line)


class Connection:
    """One client: a reader thread taking lines, a thread per command waiting for its answer, and a
    writer lock so that answers go out whole, in the order they finish."""

    def __init__(self, sock: socket.socket, run: Runner, *, owed_wait_s: float) -> None:
        self.sock = sock
        self._run = run
        self._owed_wait_s = owed_wait_s
        self._write_lock = threading.Lock()
        self._owed: list[threading.Thread] = []
        self._owed_lock = threading.Lock()
        self._broken = False
        self._stopping = threading.Event()

    def serve(self) -> None:
        """Read command lines until the client ends its side; then finish the owed answers and close."""
        buffer = b""
        try:
            while not self._stopping.is_set():
                try:
                    chunk = self.sock.recv(65536)
                except TimeoutError:
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self.handle_line(line)
                if len(buffer) > MAX_LINE_BYTES:
                    self.write({"success": False, "error": f"line longer than {MAX_LINE_BYTES} bytes"})
                    buffer = b""
                    break
            if buffer.strip() and not self._stopping.is_set():
                self.handle_line(buffer)  # a last line without its newline
            self.finish(self._owed_wait_s)
        finally:
            self.close()

    def handle_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            command = parse_line(line)
        except ValueError as exc:
            self.write({"success": False, "error": str(exc)})
            return
        rid = command.get("requestId") if isinstance(command, dict) else None
        # Queued, and its answering thread started and listed, as one step: a stop that looks at the
        # owed answers sees every command the queue holds (and never an unstarted thread).
        with self._owed_lock:
            self._owed = [t for t in self._owed if t.is_alive()]
            try:
                wait = self._run(command)
            except Exception:  # a bug must still answer, not leave the client waiting
                log.exception("extension daemon: command failed")
                self.write({"requestId": rid, "success": False, "error": "internal error"})
                return
            thread = threading.Thread(target=self._answer, args=(command, wait), name=f"ext-cmd:{str(rid)[:16]}",
                                      daemon=True)
            thread.start()
            self._owed.append(thread)

    def _answer(self, command: Any, wait: Callable[[], Answer]) -> None:
        try:
            answer = wait()
        except Exception as exc:  # a bug must still answer, not leave the client waiting
            log.exception("extension daemon: command failed")
            rid = command.get("requestId") if isinstance(command, dict) else None
            answer = {"requestId": rid, "success": False, "error": f"internal error: {type(exc).__name__}"}
        self.write(answer)

    def write(self, answer: Answer) -> None:
        with self._write_lock:
            if self._broken:
                return
            try:
                self.sock.sendall(dumps(answer))
            except OSError as exc:
                # The client left or stopped reading: its other answers have nowhere to go either.
                log.info("extension daemon: client gone before its answer (%s)", exc)
                self._broken = True

    def finish(self, wait_s: float) -> None:
        """Wait (at most ``wait_s`` in all) for the owed answers to be written."""
        end = time.monotonic() + wait_s
        with self._owed_lock:
            owed = list(self._owed)
        for thread in owed:
            thread.join(max(0.0, end - time.monotonic()))

    def stop(self, wait_s: float) -> None:
        """Let the owed answers out (the queue has answered them), then end the connection."""
        self._stopping.set()
        self.finish(wait_s)
        self.close()

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class SocketServer:
    """Listens on ``path`` and serves each client on a thread of its own until :meth:`stop`."""

    def __init__(self, path: Path, run: Runner, *, command_timeout_s: float) -> None:
        self.path = Path(path)
        self._run = run
        self._owed_wait_s = command_timeout_s + OWED_GRACE_S
        self._listener: socket.socket | None = None
        self._inode: int | None = None
        self._connections: set[Connection] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, name="ext-socket", daemon=True)

    def start(self) -> SocketServer:
        """Claim the path (removing a stale socket, refusing a live one) and start accepting.
        Raises :class:`DaemonRunning` or :class:`ExtensionError`."""
        self._prepare_folder()
        self._remove_stale()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        # The socket file takes the umask's mode at bind: make it 0600 from its first instant.
        old_umask = os.umask(0o177)
        try:
            listener.bind(str(self.path))
        except OSError as exc:
            listener.close()
            raise ExtensionError(f"cannot listen on {self.path}: {exc.strerror or exc}") from None
        finally:
            os.umask(old_umask)
        os.chmod(self.path, 0o600)
        self._inode = os.lstat(self.path).st_ino
        listener.listen(16)
        listener.settimeout(ACCEPT_WAKE_S)
        self._listener = listener
        self._thread.start()
        log.info("extension daemon: clients connect to %s", self.path)
        return self

    def _prepare_folder(self) -> None:
        folder = self.path.parent
        if not folder.exists():
            folder.mkdir(mode=0o700, parents=True)
            os.chmod(folder, 0o700)  # whatever the umask

    def _remove_stale(self) -> None:
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        if not stat.S_ISSOCK(mode):
            raise ExtensionError(f"{self.path} exists and is not a socket: remove it or choose another --socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(2.0)
        try:
            probe.connect(str(self.path))
        except (ConnectionRefusedError, FileNotFoundError):
            log.info("extension daemon: removing the stale socket %s", self.path)
            self.path.unlink(missing_ok=True)
            return
        except OSError as exc:
            raise ExtensionError(f"cannot check {self.path}: {exc.strerror or exc}") from None
        finally:
            probe.close()
        raise DaemonRunning(f"another daemon is running at {self.path}")

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                sock, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                if self._stopping.is_set():
                    return
                raise
            sock.settimeout(IO_TIMEOUT_S)
            with self._lock:
                full = len(self._connections) >= MAX_CONNECTIONS
                conn = Connection(sock, self._run, owed_wait_s=self._owed_wait_s)
                if not full:
                    self._connections.add(conn)
            if full:
                conn.write({"success": False, "error": f"too many connections ({MAX_CONNECTIONS})"})
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), name="ext-client", daemon=True).start()

    def _serve(self, conn: Connection) -> None:
        try:
            conn.serve()
        finally:
            with self._lock:
                self._connections.discard(conn)

    def stop(self, wait_s: float = 1.0) -> None:
        """Stop accepting, remove the socket file, and end every connection once its owed answers
        are out (at most ``wait_s``; the queue, closed first, has answered them all)."""
        self._stopping.set()
        if self._listener is not None:
            try:
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept at once (Linux)
            except OSError:
                pass
            self._listener.close()
            self._remove_own_file()
        if self._thread.is_alive():
            self._thread.join(ACCEPT_WAKE_S * 4)
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            conn.stop(wait_s)

    def _remove_own_file(self) -> None:
        try:
            if os.lstat(self.path).st_ino == self._inode:
                self.path.unlink()
        except FileNotFoundError:
            pass
