"""A JSON-lines server on a Unix socket: one thread per connection, one per request's answer.

Two processes take requests this way: the instance manager of server mode (from the worker) and
the extension daemon (from the original CLI and ours). What they share lives here, once:

* the socket: a 0600 file (mode set by the umask at bind, so it is never open to others, not
  even for an instant) in a folder made 0700, at any depth (``sun_path`` holds 108 bytes; a longer
  path is reached through a directory descriptor, :func:`unix_address`), listening before it
  takes its path (whoever sees the path can connect); a stale socket of a dead server is
  replaced, a live one refused (:class:`SocketInUse`);
* the peer check: a connection whose peer runs as a user not in ``peer_uids`` is closed before a
  byte of it is read (``SO_PEERCRED``; the folder's mode is the first guard, this the second);
* the framing: a request is one JSON line; a line longer than ``max_line_bytes`` ends the
  connection; a connection may carry several requests, and each answer is one line, written whole
  in the order the answers are ready; when the client ends its side, the answers still owed are
  written (each within its deadline) before the connection closes;
* the one error shape: whatever goes wrong before a request reaches its handler (a line that is
  not JSON, a line too long, too many connections, a bug in the handler) is answered with the
  server's ``error_answer(message, code, request)``, so each wire keeps its own error shape and
  says every failure in it. ``request`` is :data:`NO_REQUEST` when no line could be read as one.

The requests themselves are the user's: ``run(request)`` is called on the connection's reader
thread (so requests start in the order their lines came) and returns what waits for the answer,
which is called on a thread of its own. Every blocking wait has a deadline.
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import stat
import struct
import threading
import time
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import Any

from ..web import untrusted_json

log = logging.getLogger(__name__)

ACCEPT_WAKE_S = 0.5   # the accept loop looks at the stop flag this often
IO_TIMEOUT_S = 10.0   # one write of an answer (a screenshot is megabytes) gets this long
_SUN_PATH_MAX = 100   # sun_path holds 108 bytes on Linux; a deep path goes through a dir fd

# Starts a request and returns what waits for its answer (on a thread of its own).
Runner = Callable[[Any], Callable[[], Any]]
# The wire's error answer: (message, code, the request or NO_REQUEST) -> the line to write.
ErrorAnswer = Callable[[str, str, Any], Any]
NO_REQUEST: Any = object()

BAD_JSON = "bad_json"
LINE_TOO_LONG = "line_too_long"
TOO_MANY_CONNECTIONS = "too_many_connections"
INTERNAL = "internal"


class SocketInUse(Exception):
    """A live server already listens on the path."""


class SocketPathError(Exception):
    """The path cannot be taken: not a socket, or the folder or bind refused."""


@contextlib.contextmanager
def unix_address(path: Path) -> Iterator[str]:
    """An address for ``bind``/``connect`` that fits ``sun_path`` however deep ``path`` is."""
    text = os.fspath(path)
    if len(text.encode()) <= _SUN_PATH_MAX:
        yield text
        return
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)


def encode(obj: Any) -> bytes:
    """One JSON line."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


def peer_uid(sock: socket.socket) -> int | None:
    """The uid of the process at the other end of a Unix socket; None where the kernel does not say."""
    try:
        creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    except (OSError, AttributeError):
        return None
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid


class Connection:
    """One client: a reader thread taking lines, a thread per request waiting for its answer, and a
    writer lock so that answers go out whole, in the order they finish."""

    def __init__(self, sock: socket.socket, server: LineServer) -> None:
        self.sock = sock
        self.server = server
        self._write_lock = threading.Lock()
        self._owed: list[threading.Thread] = []
        self._owed_lock = threading.Lock()
        self._broken = False
        self._stopping = threading.Event()

    def serve(self) -> None:
        """Read request lines until the client ends its side (or stays idle past the server's
        ``idle_s`` with nothing owed); then finish the owed answers and close."""
        limit = self.server.max_line_bytes
        buffer = b""
        last_seen = time.monotonic()
        try:
            while not self._stopping.is_set():
                try:
                    chunk = self.sock.recv(65536)
                except TimeoutError:
                    idle_s = self.server.idle_s
                    if idle_s is not None and time.monotonic() - last_seen > idle_s and not self._owing():
                        break
                    continue
                except OSError:
                    break
                if not chunk:
                    break
                last_seen = time.monotonic()
                buffer += chunk
                *lines, buffer = buffer.split(b"\n")
                for line in lines:
                    self.handle_line(line)
                if len(buffer) > limit:
                    self.write(self.server.error_answer(f"line longer than {limit} bytes", LINE_TOO_LONG,
                                                        NO_REQUEST))
                    buffer = b""
                    break
            if buffer.strip() and not self._stopping.is_set():
                self.handle_line(buffer)  # a last line without its newline
            self.finish(self.server.owed_wait_s)
        finally:
            self.close()

    def handle_line(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            request = untrusted_json.loads(line)
        except ValueError as exc:
            self.write(self.server.error_answer(str(exc), BAD_JSON, NO_REQUEST))
            return
        # Started, and its answering thread started and listed, as one step: a stop that looks at the
        # owed answers sees every request taken (and never an unstarted thread).
        with self._owed_lock:
            self._owed = [t for t in self._owed if t.is_alive()]
            try:
                wait = self.server.run(request)
            except Exception:  # a bug must still answer, not leave the client waiting
                log.exception("%s: a request failed", self.server.name)
                self.write(self.server.error_answer("internal error", INTERNAL, request))
                return
            thread = threading.Thread(target=self._answer, args=(request, wait), name=f"{self.server.name}-answer",
                                      daemon=True)
            thread.start()
            self._owed.append(thread)

    def _answer(self, request: Any, wait: Callable[[], Any]) -> None:
        try:
            answer = wait()
        except Exception as exc:  # a bug must still answer, not leave the client waiting
            log.exception("%s: a request failed", self.server.name)
            answer = self.server.error_answer(f"internal error: {type(exc).__name__}", INTERNAL, request)
        self.write(answer)

    def _owing(self) -> bool:
        with self._owed_lock:
            return any(t.is_alive() for t in self._owed)

    def write(self, answer: Any) -> None:
        with self._write_lock:
            if self._broken:
                return
            try:
                self.sock.sendall(encode(answer))
            except OSError as exc:
                # The client left or stopped reading: its other answers have nowhere to go either.
                log.info("%s: client gone before its answer (%s)", self.server.name, exc)
                self._broken = True

    def finish(self, wait_s: float) -> None:
        """Wait (at most ``wait_s`` in all) for the owed answers to be written."""
        end = time.monotonic() + wait_s
        with self._owed_lock:
            owed = list(self._owed)
        for thread in owed:
            thread.join(max(0.0, end - time.monotonic()))

    def stop(self, wait_s: float) -> None:
        """Let the owed answers out (at most ``wait_s``), then end the connection."""
        self._stopping.set()
        self.finish(wait_s)
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.shutdown(socket.SHUT_RDWR)
        self.sock.close()


class LineServer:
    """Listens on ``path`` and serves each client on a thread of its own until :meth:`stop`.

    ``take_over`` replaces whatever socket is at ``path`` without asking (the caller holds a lock
    that proves its owner dead); otherwise a live one is refused and a stale one removed.
    ``idle_s`` closes a connection that sends nothing and is owed nothing for that long (None:
    never); ``owed_wait_s`` bounds how long a closing connection waits for its owed answers.
    """

    def __init__(self, path: Path, run: Runner, error_answer: ErrorAnswer, *, name: str,
                 max_line_bytes: int, max_connections: int = 64, owed_wait_s: float = IO_TIMEOUT_S,
                 idle_s: float | None = None, peer_uids: Collection[int] | None = None,
                 take_over: bool = False) -> None:
        self.path = Path(path)
        self.run = run
        self.error_answer = error_answer
        self.name = name
        self.max_line_bytes = max_line_bytes
        self.max_connections = max_connections
        self.owed_wait_s = owed_wait_s
        self.idle_s = idle_s
        self.peer_uids = frozenset(peer_uids) if peer_uids is not None else frozenset({os.getuid()})
        self.take_over = take_over
        self._listener: socket.socket | None = None
        self._inode: int | None = None
        self._connections: set[Connection] = set()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept_loop, name=f"{name}-accept", daemon=True)

    def start(self) -> LineServer:
        """Claim the path and start accepting. Raises :class:`SocketInUse` or :class:`SocketPathError`.

        The socket is bound and listening under a name of its own in the same folder before it takes
        ``path``: a client that sees the path (a test, a CLI that waits for it) can connect at once.
        """
        self._prepare_folder()
        self._claim()
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        fresh = self.path.with_name(f".{self.path.name}.{os.getpid()}.new")
        fresh.unlink(missing_ok=True)  # ours, from an earlier start of this process that failed
        # The socket file takes the umask's mode at bind: make it 0600 from its first instant.
        old_umask = os.umask(0o177)
        try:
            with unix_address(fresh) as address:
                listener.bind(address)
            listener.listen(64)
            os.chmod(fresh, 0o600)
            self._publish(fresh)
        except SocketInUse:
            listener.close()
            raise
        except OSError as exc:
            listener.close()
            fresh.unlink(missing_ok=True)
            raise SocketPathError(f"cannot listen on {self.path}: {exc.strerror or exc}") from None
        finally:
            os.umask(old_umask)
        self._inode = os.lstat(self.path).st_ino
        listener.settimeout(ACCEPT_WAKE_S)
        self._listener = listener
        self._thread.start()
        return self

    def _publish(self, fresh: Path) -> None:
        """Give the listening socket its path: over whatever is there with ``take_over``, else only
        if nothing is (a server that started meanwhile keeps its path)."""
        if self.take_over:
            os.replace(fresh, self.path)
            return
        try:
            os.link(fresh, self.path)
        except FileExistsError:
            raise SocketInUse(f"a server is listening on {self.path}") from None
        finally:
            fresh.unlink(missing_ok=True)

    def _prepare_folder(self) -> None:
        folder = self.path.parent
        if not folder.exists():
            folder.mkdir(mode=0o700, parents=True)
            os.chmod(folder, 0o700)  # whatever the umask

    def _claim(self) -> None:
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        if self.take_over:
            self.path.unlink(missing_ok=True)
            return
        if not stat.S_ISSOCK(mode):
            raise SocketPathError(f"{self.path} exists and is not a socket")
        probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        probe.settimeout(2.0)
        try:
            with unix_address(self.path) as address:
                probe.connect(address)
        except (ConnectionRefusedError, FileNotFoundError):
            log.info("%s: removing the stale socket %s", self.name, self.path)
            self.path.unlink(missing_ok=True)
            return
        except OSError as exc:
            raise SocketPathError(f"cannot check {self.path}: {exc.strerror or exc}") from None
        finally:
            probe.close()
        raise SocketInUse(f"a server is listening on {self.path}")

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
                log.exception("%s: accepting a connection failed", self.name)
                self._stopping.wait(ACCEPT_WAKE_S)  # e.g. out of descriptors: not a busy loop
                continue
            uid = peer_uid(sock)
            if uid is not None and uid not in self.peer_uids:
                log.warning("%s: refused a connection of uid %d: only this user's programs may connect",
                            self.name, uid)
                sock.close()
                continue
            sock.settimeout(IO_TIMEOUT_S)
            conn = Connection(sock, self)
            with self._lock:
                full = len(self._connections) >= self.max_connections
                if not full:
                    self._connections.add(conn)
            if full:
                conn.write(self.error_answer(f"too many connections ({self.max_connections})", TOO_MANY_CONNECTIONS,
                                             NO_REQUEST))
                conn.close()
                continue
            threading.Thread(target=self._serve, args=(conn,), name=f"{self.name}-conn", daemon=True).start()

    def _serve(self, conn: Connection) -> None:
        try:
            conn.serve()
        except Exception:  # the connection's thread ends; the server and its other clients go on
            log.exception("%s: serving a connection failed", self.name)
        finally:
            with self._lock:
                self._connections.discard(conn)

    def stop(self, wait_s: float = 1.0) -> None:
        """Stop accepting, remove the socket file, and end every connection once its owed answers
        are out (at most ``wait_s``)."""
        self._stopping.set()
        if self._listener is not None:
            with contextlib.suppress(OSError):
                self._listener.shutdown(socket.SHUT_RDWR)  # wakes the accept at once (Linux)
            self._listener.close()
            self._remove_own_file()
        if self._thread.is_alive():
            self._thread.join(ACCEPT_WAKE_S * 4)
        with self._lock:
            connections = list(self._connections)
        for conn in connections:
            conn.stop(wait_s)

    def _remove_own_file(self) -> None:
        with contextlib.suppress(FileNotFoundError):
            if os.lstat(self.path).st_ino == self._inode:
                self.path.unlink()
