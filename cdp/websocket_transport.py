"""CDP over a websocket to the browser: websocket-client connects and closes, ``cdp/frames.py``
reads and frames the messages.

websocket-client does the opening handshake (with ``skip_utf8_validation``: its pure-Python UTF-8
check triples the time of big messages) and the closing one. Its receive and send paths cost more
than the messages they carry, on the one thread every message passes through and on every
command, so frames are cut out of the socket and written to it here (``cdp/frames.py``).
"""
from __future__ import annotations

import threading

import websocket

from .frames import OP_PONG, FrameReader, client_frame


class WebSocketTransport:
    """A ``Transport`` over one open websocket; sends (and pongs) are serialised by a lock."""

    def __init__(self, ws: websocket.WebSocket) -> None:
        self._ws = ws
        self._ws.settimeout(None)  # the reader blocks; close() unblocks it
        assert self._ws.sock is not None  # connected
        self._sock = self._ws.sock
        self._send_lock = threading.Lock()
        self._frames = FrameReader(self._sock, self._pong)

    @classmethod
    def connect(cls, url: str, *, timeout_s: float = 10.0) -> WebSocketTransport:
        """Open a websocket to ``url`` (a browser's ``ws://.../devtools/browser/...`` URL).

        Raises websocket-client's WebSocketException or OSError if the handshake fails.
        """
        ws = websocket.create_connection(
            url,
            timeout=timeout_s,
            skip_utf8_validation=True,
            suppress_origin=True,  # Chrome rejects websocket Origins it was not told to allow
            enable_multithread=False,  # we serialise sends ourselves
        )
        return cls(ws)

    def send(self, text: str) -> None:
        """Send one text frame. Raises OSError if the socket is gone."""
        frame = client_frame(text.encode())
        with self._send_lock:
            self._sock.sendall(frame)

    def receive(self) -> bytes | bytearray:
        """The next whole message; raises TransportClosed at the end, OSError if the socket fails."""
        return self._frames.message()

    def close(self) -> None:
        """Send a close frame and shut the socket, which ends a ``receive`` blocked in another thread."""
        # websocket-client's close never raises once connected (it ignores the errors of a socket
        # already gone) and is a no-op when already closed.
        self._ws.close(timeout=1)

    def _pong(self, payload: bytes | bytearray) -> None:
        """Answer a ping (called on the reader thread, by the frame reader)."""
        try:
            with self._send_lock:
                self._sock.sendall(client_frame(payload, OP_PONG))
        except OSError:  # the socket is going; the reader will notice
            pass
