"""gunicorn's gthread worker, where a request thread never waits on a slow client.

**Reading.** In gthread a thread takes a connection as soon as it is readable and then blocks in
the parser until the whole head has come: a client that sends half a request line and stops
holds that thread for as long as it likes, and 33 of them take all 32 of ours. Here the main
thread's poller gathers each request's bytes (non-blocking reads, a buffer per connection) until
the head, and a ``Content-Length`` body of up to BODY_GATHER_MAX bytes, are in; only then does a
thread take it, and its parser never waits. A client gets ``server.headerTimeoutSec`` to send the
head and ``server.bodyTimeoutSec`` for the body, then it is disconnected; stalled clients cost a
buffer each, never a thread, so ``/health`` answers under a flood of them. (A socket timeout in
the thread would bound each read, but every stalled client would still hold a thread for the
timeout, and a hundred of them queue the next request behind them all.) What the poller does not
gather (a chunked or bigger body, one after ``Expect: 100-continue``) the thread reads with each
read bounded by the body timeout: a stall answers 408.

**Closing.** gunicorn closes a finished connection gracefully on its main thread, waiting up to
2 s for the client's own close: a client that never closes would stall every other connection.
Here the wait happens in the poller.

**Lingering.** In gthread every request on a kept-alive connection makes a round of the main
loop: the answering thread hands the connection back (through a pipe) to the main thread's
poller, which hands its next request to a pool thread again. That is two thread wake-ups and a
handful of system calls per request, a tenth of a millisecond on a small VM, on every step an
agent takes. Here the answering thread first waits a moment (LINGER_S) for the same client's
next request and serves it itself if it comes whole. An agent or a script that sends its next
step as soon as it has read the answer never leaves its thread; a client that does not come back
within the moment goes back to the poller as in gthread. Threads only linger while at least half
the pool is free, so idle clients never starve busy ones.

**Settings.** gunicorn's ``Config`` answers each attribute through ``__getattr__`` and the setting's
``get()``, and its parser and response read some twenty of them per request: a third of the
parser's time. A worker's settings do not change once it runs (a reload starts new workers), so
here each is read from the config once and kept (:class:`_Settled`).

gunicorn's ``handle(conn)`` answers True when the connection may serve another request; other
answers (False, a deferral, or the tuple older releases returned) end the loop, and the
connection goes back to gunicorn unchanged. TLS connections (gunicorn's ``certfile``) are left to
gunicorn's own handling: their bytes cannot be gathered before the handshake.
"""
from __future__ import annotations

import logging
import select
import selectors
import socket
import threading
import time
from dataclasses import dataclass
from functools import partial
from typing import Any

from gunicorn import util
from gunicorn.http.errors import NoMoreData
from gunicorn.http.unreader import SocketUnreader
from gunicorn.workers.gthread import TConn, ThreadWorker
from werkzeug.exceptions import RequestTimeout

from .one_send import OneSend
from .request_progress import Progress, progress
from .worker_errors import JSONErrors

log = logging.getLogger(__name__)

LINGER_S = 0.01  # longer than a client's turnaround between steps, short enough to hold no thread
BODY_GATHER_MAX = 1024 * 1024  # bodies up to this size are gathered by the poller; bigger ones by the thread
READ_CHUNK = 64 * 1024  # one read per readiness event: a fast client cannot starve the others
CLOSE_LINGER_S = 2.0  # as gunicorn's graceful close: how long a closing connection waits for the peer
SWEEP_S = 0.1  # how often the poller looks for connections past their deadline (at the most)
DEADLINE_SLACK_S = 0.25  # the poller wakes at least this often while connections have deadlines


@dataclass
class _Gathering:
    """A request the poller is gathering: what came so far, and until when the rest may take."""

    buf: bytearray
    phase: Progress
    deadline: float
    need: int = 0  # in the BODY phase: the request's length, head and body


class _TimedUnreader(SocketUnreader):
    """gunicorn's socket reader with every read bounded: a client that stalls mid-request is
    dropped (while the head is read) or answered 408 (while the application reads the body)."""

    def __init__(self, sock: socket.socket, head_timeout_s: float, body_timeout_s: float) -> None:
        super().__init__(sock)
        self.head_timeout_s = head_timeout_s
        self.body_timeout_s = body_timeout_s
        self.in_body = False

    def chunk(self, size_hint: int | None = None) -> bytes:
        if self.sock.gettimeout() is not None:  # bounded already (gunicorn's drain of an unread body)
            return super().chunk(size_hint)
        self.sock.settimeout(self.body_timeout_s if self.in_body else self.head_timeout_s)
        try:
            return super().chunk(size_hint)
        except TimeoutError:
            if self.in_body:
                raise RequestTimeout(f"the request body stalled for {self.body_timeout_s:g} s") from None
            raise NoMoreData(b"") from None  # gunicorn closes the connection quietly
        finally:
            self.sock.settimeout(None)


class _Settled:
    """A gunicorn ``Config`` whose attributes are looked up once each (see the module's note)."""

    def __init__(self, cfg: Any) -> None:
        self.__dict__["_cfg"] = cfg

    def __getattr__(self, name: str) -> Any:  # only for names not kept yet
        value = getattr(self._cfg, name)
        self.__dict__[name] = value
        return value

    def set(self, name: str, value: Any) -> None:
        """A change after all (nothing in a running worker makes one): forget what was kept."""
        cfg = self._cfg
        cfg.set(name, value)
        self.__dict__.clear()
        self.__dict__["_cfg"] = cfg


class Worker(JSONErrors, ThreadWorker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.cfg: Any = _Settled(self.cfg)
        self._busy = 0
        self._busy_lock = threading.Lock()
        self._gathering: dict[Any, _Gathering] = {}  # on the main thread only, as the poller
        self._closing: dict[Any, float] = {}  # closing connections, until when they wait for the peer
        self._next_sweep = 0.0
        self._stop_deadline: float | None = None
        cfg = self.cfg
        # TLS needs its handshake first; HTTP/2 with prior knowledge reads its preface itself.
        self._gather = not cfg.is_ssl and getattr(cfg, "http2_cleartext", "") not in ("prior-knowledge", "both")
        limits = (cfg.limit_request_line, cfg.limit_request_fields, cfg.limit_request_field_size)
        # Past this a head is refused by the parser without waiting for more (0: gunicorn's "no limit").
        self._head_max = min(limits[0] + 2 + limits[1] * (limits[2] + 2) + 2, BODY_GATHER_MAX) \
            if all(limits) else BODY_GATHER_MAX
        self.head_timeout_s = 10.0
        self.body_timeout_s = 30.0

    def load_wsgi(self) -> None:
        super().load_wsgi()
        self.wsgi = OneSend(self.wsgi)
        config = getattr(self.wsgi, "extensions", {}).get("pinchtab.config")
        if config is None:  # some other WSGI app under our worker: the settings' defaults
            from ..config.declare import schema_for
            from ..config.settings import ServerConfig

            server = schema_for(ServerConfig)().load({})
        else:
            server = config.server
        self.head_timeout_s = float(server.header_timeout_sec)
        self.body_timeout_s = float(server.body_timeout_sec)

    # --- threads -------------------------------------------------------------------------------
    def handle(self, conn: Any) -> Any:
        with self._busy_lock:
            self._busy += 1
        try:
            self._take_gathered(conn)
            keep = super().handle(conn)
            while keep is True and self._next_request_soon(conn):
                keep = super().handle(conn)
            if keep is True and not self.alive:
                # Answered after the stop began (a stream the shutdown ended): nothing more will
                # be served, so close now rather than keep the connection for the stop's linger.
                return False
            return keep
        finally:
            with self._busy_lock:
                self._busy -= 1

    def handle_request(self, req: Any, conn: Any) -> Any:
        unreader = conn.parser.unreader
        if isinstance(unreader, _TimedUnreader):
            unreader.in_body = True  # from here the application reads: a stall answers 408
        try:
            return super().handle_request(req, conn)
        finally:
            if isinstance(unreader, _TimedUnreader):
                unreader.in_body = False

    def _take_gathered(self, conn: Any) -> None:
        """Put what the poller gathered in front of the connection's parser."""
        gathered = getattr(conn, "gathered", None)
        if gathered is None:
            return
        conn.gathered = None
        conn.sock.setblocking(True)
        conn.init()
        if not isinstance(conn.parser.unreader, _TimedUnreader):
            conn.parser.unreader = _TimedUnreader(conn.sock, self.head_timeout_s, self.body_timeout_s)
        conn.parser.unreader.unread(gathered)

    def _next_request_soon(self, conn: Any) -> bool:
        """Whether the client's next request came whole within LINGER_S (then it is in the parser's
        buffer); bytes of an incomplete one stay there for the poller to gather."""
        if not self.alive or self._busy > self.cfg.threads // 2:
            return False
        if not self._gather:
            if conn.parser.unreader.buf.getvalue():  # a pipelined request is buffered already
                return True
            return _readable(conn.sock, LINGER_S)
        unreader = conn.parser.unreader
        buf = bytearray(unreader.take_buffered())
        deadline = time.monotonic() + LINGER_S
        try:
            while self._progress(buf)[0] is not Progress.READY:
                left = deadline - time.monotonic()
                if left <= 0 or not _readable(conn.sock, left):
                    return False
                data = conn.sock.recv(READ_CHUNK, socket.MSG_DONTWAIT)
                if not data:
                    return False  # closed: the poller sees it too, and closes
                buf += data
            return True
        except OSError:  # BlockingIOError included: the poller takes it from here
            return False
        finally:
            unreader.unread(bytes(buf))

    # --- the main thread: accepting, gathering, closing ----------------------------------------------
    def accept(self, listener: Any) -> None:
        if not self._gather:
            super().accept(listener)
            return
        try:
            client_sock, client_addr = listener.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return
        self.nr_conns += 1
        conn = TConn(self.cfg, client_sock, client_addr, listener.getsockname())
        self._start_gathering(conn, bytearray())

    def on_client_socket_readable(self, conn: Any, client: Any) -> None:
        """A kept-alive connection's next request begins: gather it (it has readable bytes now)."""
        if not self._gather:
            super().on_client_socket_readable(conn, client)
            return
        self.poller.unregister(client)
        self.keepalived_conns.remove(conn)
        if self._start_gathering(conn, bytearray()):
            self._on_gather_readable(conn, client)

    def finish_request(self, conn: Any, fs: Any) -> None:
        if not self._gather:
            super().finish_request(conn, fs)
            return
        try:
            result = fs.result() if not fs.cancelled() else False
        except Exception:
            result = False
        if result is True:
            ahead = conn.parser.unreader.take_buffered()
            if ahead:  # the next request began already (pipelined, or read while lingering)
                self._start_gathering(conn, bytearray(ahead))
                return
            super().finish_request(conn, fs)  # kept alive, waiting in the poller as in gthread
        elif result is False or result is None or isinstance(result, tuple):
            self._close(conn)
        else:  # gunicorn's own deferral
            super().finish_request(conn, fs)

    def _progress(self, buf: bytearray, searched: int = 0) -> tuple[Progress, int]:
        return progress(buf, head_max=self._head_max, body_max=BODY_GATHER_MAX, searched=searched)

    def _start_gathering(self, conn: Any, buf: bytearray) -> bool:
        """Gather the rest of ``conn``'s request in the poller; False: it is whole, a thread has it."""
        phase, need = self._progress(buf)
        if phase is Progress.READY:
            self._hand_over(conn, buf)
            return False
        timeout_s = self.head_timeout_s if phase is Progress.HEAD else self.body_timeout_s
        try:
            conn.sock.setblocking(False)
            self.poller.register(conn.sock, selectors.EVENT_READ, partial(self._on_gather_readable, conn))
        except (OSError, ValueError):  # closed under us (the thread saw the client go)
            self._drop(conn)
            return False
        self._gathering[conn] = _Gathering(buf, phase, time.monotonic() + timeout_s, need)
        return True

    def _on_gather_readable(self, conn: Any, _sock: Any) -> None:
        gathering = self._gathering.get(conn)
        if gathering is None:
            return
        try:
            data = conn.sock.recv(READ_CHUNK)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:  # the client left before its request was whole
            self._stop_gathering(conn)
            self._drop(conn)
            return
        searched = len(gathering.buf)
        gathering.buf += data
        if gathering.phase is Progress.BODY:
            phase = Progress.READY if len(gathering.buf) >= gathering.need else Progress.BODY
        else:
            phase, gathering.need = self._progress(gathering.buf, searched)
        if phase is Progress.READY:
            self._stop_gathering(conn)
            self._hand_over(conn, gathering.buf)
        elif phase is not gathering.phase:  # the head is in: now the body's own time
            gathering.phase = phase
            gathering.deadline = time.monotonic() + self.body_timeout_s

    def _stop_gathering(self, conn: Any) -> None:
        del self._gathering[conn]
        try:
            self.poller.unregister(conn.sock)
        except (KeyError, ValueError, OSError):
            pass

    def _hand_over(self, conn: Any, buf: bytearray) -> None:
        conn.gathered = bytes(buf)
        conn.data_ready = True  # gthread's wait for a first byte is moot: the request is here
        self.enqueue_req(conn)

    def _close(self, conn: Any) -> None:
        """Close after the answer without holding the main loop: send our FIN now, and wait (in
        the poller, at most CLOSE_LINGER_S) for the client's, so unread bytes cause no reset."""
        sock = conn.sock
        try:
            sock.setblocking(False)
            sock.shutdown(socket.SHUT_WR)
        except OSError:
            self._drop(conn)
            return
        if not self.alive:  # stopping: the answer is out, nothing else will be read
            self._drop(conn)
            return
        try:
            self.poller.register(sock, selectors.EVENT_READ, partial(self._on_closing_readable, conn))
        except (OSError, ValueError):
            self._drop(conn)
            return
        self._closing[conn] = time.monotonic() + CLOSE_LINGER_S

    def _on_closing_readable(self, conn: Any, _sock: Any) -> None:
        try:
            if conn.sock.recv(READ_CHUNK):
                return  # drained; the deadline bounds a client that keeps sending
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            pass
        self._end_closing(conn)

    def _end_closing(self, conn: Any) -> None:
        del self._closing[conn]
        try:
            self.poller.unregister(conn.sock)
        except (KeyError, ValueError, OSError):
            pass
        self._drop(conn)

    def _drop(self, conn: Any) -> None:
        self.nr_conns -= 1
        util.close(conn.sock)

    def wait_for_and_dispatch_events(self, timeout: float) -> None:
        if self._gathering or self._closing:  # (gthread's own loop wakes once a second)
            timeout = min(timeout, DEADLINE_SLACK_S)
        super().wait_for_and_dispatch_events(timeout)

    def murder_pending(self) -> None:
        """gthread's sweep of its deferred connections, and ours: gatherings and closings past
        their deadline (a stop gives gatherings 2 s at most, as gthread's kept-alive ones)."""
        super().murder_pending()
        now = time.monotonic()
        if now < self._next_sweep and self.alive:
            return
        self._next_sweep = now + SWEEP_S
        if not self.alive and self._stop_deadline is None:
            self._stop_deadline = now + CLOSE_LINGER_S
        for conn, gathering in list(self._gathering.items()):
            if min(gathering.deadline, self._stop_deadline or gathering.deadline) <= now:
                log.debug("closing a connection from %s: its request %s did not come in time", conn.client,
                          gathering.phase.value)
                self._stop_gathering(conn)
                self._drop(conn)
        for conn, deadline in list(self._closing.items()):
            if deadline <= now or not self.alive:
                self._end_closing(conn)

    def handle_exit(self, sig: Any, frame: Any) -> None:
        """SIGTERM: besides gunicorn's graceful stop, end the app's long-lived streams now.

        WebSockets and event streams would otherwise hold their threads until the graceful
        timeout. The app lists what to call in ``extensions["pinchtab.on_shutdown"]``; it runs on
        a thread of its own, not in the signal handler.
        """
        super().handle_exit(sig, frame)
        hooks = getattr(self.wsgi, "extensions", {}).get("pinchtab.on_shutdown", ())
        for hook in hooks:
            threading.Thread(target=hook, name="shutdown-streams", daemon=True).start()


def _readable(sock: socket.socket, timeout_s: float) -> bool:
    poller = select.poll()
    poller.register(sock.fileno(), select.POLLIN)
    return bool(poller.poll(max(timeout_s, 0.0) * 1000))

