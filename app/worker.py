"""gunicorn's gthread worker, with a thread that stays on a connection while its client is busy.

In gthread every request on a kept-alive connection makes a round of the main loop: the
answering thread hands the connection back (through a pipe) to the main thread's poller, which
hands its next request to a pool thread again. That is two thread wake-ups and a handful of
system calls per request, a tenth of a millisecond on a small VM, on every step an agent takes.
Here the answering thread first waits a moment (LINGER_S) for the same client's next request and
serves it itself. An agent or a script that sends its next step as soon as it has read the
answer never leaves its thread; a client that does not come back within the moment goes back to
the poller as in gthread. Threads only linger while at least half the pool is free, so idle
clients never starve busy ones.

gunicorn's ``handle(conn)`` answers True when the connection may serve another request; other
answers (False, a deferral, or the tuple older releases returned) end the loop, and the
connection goes back to gunicorn unchanged.
"""
from __future__ import annotations

import select
import threading
from typing import Any

from gunicorn.workers.gthread import ThreadWorker

LINGER_S = 0.01  # longer than a client's turnaround between steps, short enough to hold no thread


class Worker(ThreadWorker):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._busy = 0
        self._busy_lock = threading.Lock()

    def handle(self, conn: Any) -> Any:
        with self._busy_lock:
            self._busy += 1
        try:
            keep = super().handle(conn)
            while keep is True and self._next_request_soon(conn):
                keep = super().handle(conn)
            return keep
        finally:
            with self._busy_lock:
                self._busy -= 1

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

    def _next_request_soon(self, conn: Any) -> bool:
        if not self.alive or self._busy > self.cfg.threads // 2:
            return False
        if conn.parser.unreader.buf.getvalue():  # a pipelined request is buffered already
            return True
        poller = select.poll()
        poller.register(conn.sock.fileno(), select.POLLIN)
        return bool(poller.poll(LINGER_S * 1000))
