"""The browser's websocket frames: read off the socket in big gulps, and ours framed for sending.

websocket-client reads each frame with a ``recv`` for the 2-byte header, another for the
extended length and more for the payload, 16 KiB at a time, through several layers of Python.
On the one reader thread every message of every tab passes through, that is most of its time
for small replies (and each ``recv`` drops and re-takes the GIL). This reader pulls whatever
the socket holds into a buffer and cuts frames out of it: one ``recv`` for a burst of small
messages, big chunks for a large one. Sending is as lean: ``client_frame`` frames a message in a
few operations, where websocket-client's send builds an object per frame and masks in a loop of
its own (a third of what sending a small command cost us). websocket-client still makes the
connection and closes it (``cdp/websocket_transport.py`` puts the parts together).

Frames from a server are never masked; a client's always are, with a fresh key each (RFC 6455
5.1, 5.3). A message may span continuation frames; pings are answered by the caller (it owns the
send side).
"""
from __future__ import annotations

import os
import socket
import struct
from collections.abc import Callable

from .transport import TransportClosed

CHUNK = 256 * 1024
OP_TEXT = 0x1
OP_CLOSE, OP_PING, OP_PONG = 0x8, 0x9, 0xA  # the control frames; text, binary and continuation carry data


def client_frame(payload: bytes | bytearray, opcode: int = OP_TEXT) -> bytes:
    """``payload`` as one whole frame from a client: its length, a random masking key, and the
    payload masked with it (XOR with the key repeated, as one big-integer operation)."""
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", 0x80 | opcode, 0x80 | size)
    elif size < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 0x80 | 126, size)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 0x80 | 127, size)
    key = os.urandom(4)
    keystream = (key * (size // 4 + 1))[:size]
    masked = (int.from_bytes(payload, "little") ^ int.from_bytes(keystream, "little")).to_bytes(size, "little")
    return head + key + masked


class FrameReader:
    """Whole messages from a websocket's socket, for a single reading thread."""

    def __init__(self, sock: socket.socket, on_ping: Callable[[bytes | bytearray], None]) -> None:
        self._sock = sock
        self._on_ping = on_ping
        self._buf = bytearray()
        self._pos = 0  # where the unread part of _buf starts
        self._room = bytearray(CHUNK)
        self._view = memoryview(self._room)

    def message(self) -> bytes | bytearray:
        """The next text or binary message; raises TransportClosed at the end (a close frame, a closed socket)."""
        parts: list[bytes | bytearray] = []
        while True:
            fin, opcode, payload = self._frame()
            if opcode == OP_PING:
                self._on_ping(payload)
                continue
            if opcode == OP_PONG:
                continue
            if opcode == OP_CLOSE:
                raise TransportClosed("the browser closed the connection")
            parts.append(payload)
            if fin:
                return parts[0] if len(parts) == 1 else b"".join(parts)

    def _frame(self) -> tuple[bool, int, bytes | bytearray]:
        head = self._take(2)
        fin, opcode, length = bool(head[0] & 0x80), head[0] & 0x0F, head[1] & 0x7F
        if length == 126:
            length = struct.unpack("!H", self._take(2))[0]
        elif length == 127:
            length = struct.unpack("!Q", self._take(8))[0]
        if head[1] & 0x80:  # a masked frame from a server breaks the protocol
            raise TransportClosed("the browser sent a masked frame")
        return fin, opcode, self._take(length)

    def _take(self, n: int) -> bytes | bytearray:
        have = len(self._buf) - self._pos
        if have < n and n > CHUNK:
            return self._take_big(n, have)
        while have < n:
            self._fill()
            have = len(self._buf) - self._pos
        out = bytes(memoryview(self._buf)[self._pos:self._pos + n])
        self._pos += n
        if self._pos == len(self._buf):  # all consumed: reuse the buffer from its start
            self._buf.clear()
            self._pos = 0
        return out

    def _take_big(self, n: int, have: int) -> bytearray:
        """A large payload, read straight into its own buffer (one copy, no regrowing)."""
        out = bytearray(n)
        view = memoryview(out)
        view[:have] = memoryview(self._buf)[self._pos:]
        self._buf.clear()
        self._pos = 0
        got = have
        while got < n:
            read = self._sock.recv_into(view[got:], n - got)
            if not read:
                raise TransportClosed("the browser closed the connection")
            got += read
        return out

    def _fill(self) -> None:
        if self._pos:  # drop what was consumed before reading more
            del self._buf[:self._pos]
            self._pos = 0
        read = self._sock.recv_into(self._room)  # a fixed buffer: recv(n) would allocate n bytes each time
        if not read:
            raise TransportClosed("the browser closed the connection")
        self._buf += self._view[:read]
