"""cdp/frames.py: whole messages cut out of a websocket byte stream, however the bytes arrive."""
from __future__ import annotations

import json
import socket
import struct
import threading

import pytest

from cdp.frames import CHUNK, OP_PONG, FrameReader, client_frame
from cdp.transport import TransportClosed


def frame(payload: bytes, opcode: int = 0x1, fin: bool = True) -> bytes:
    head = bytes([(0x80 if fin else 0) | opcode])
    n = len(payload)
    if n < 126:
        head += bytes([n])
    elif n < 1 << 16:
        head += bytes([126]) + struct.pack("!H", n)
    else:
        head += bytes([127]) + struct.pack("!Q", n)
    return head + payload


@pytest.fixture
def pair():
    a, b = socket.socketpair()
    pings: list[bytes] = []
    yield FrameReader(a, lambda p: pings.append(bytes(p))), b, pings
    a.close()
    b.close()


def test_small_messages_in_one_burst_come_out_one_by_one(pair):
    reader, peer, _ = pair
    msgs = [json.dumps({"id": i, "result": {"v": "x" * i}}).encode() for i in range(200)]
    peer.sendall(b"".join(frame(m) for m in msgs))
    assert [reader.message() for _ in msgs] == msgs


def test_every_length_encoding(pair):
    reader, peer, _ = pair
    sizes = [0, 125, 126, 65535, 65536, 3 * CHUNK + 7]
    payloads = [bytes([i % 251]) * n for i, n in enumerate(sizes)]
    sender = threading.Thread(target=lambda: peer.sendall(b"".join(frame(p) for p in payloads)))
    sender.start()
    assert [bytes(reader.message()) for _ in payloads] == payloads
    sender.join()


def test_bytes_trickling_in_one_at_a_time(pair):
    reader, peer, _ = pair
    data = frame(b'{"a":1}') + frame(b"x" * 300)

    def trickle() -> None:
        for i in range(len(data)):
            peer.send(data[i:i + 1])

    sender = threading.Thread(target=trickle)
    sender.start()
    assert reader.message() == b'{"a":1}'
    assert reader.message() == b"x" * 300
    sender.join()


def test_a_fragmented_message_with_a_ping_in_between(pair):
    reader, peer, pings = pair
    peer.sendall(frame(b"hel", fin=False) + frame(b"hi", opcode=0x9) + frame(b"lo", opcode=0x0, fin=False)
                 + frame(b"!", opcode=0x0) + frame(b"next"))
    assert reader.message() == b"hello!"
    assert pings == [b"hi"]
    assert reader.message() == b"next"


def test_a_close_frame_or_a_closed_socket_ends_the_stream(pair):
    reader, peer, _ = pair
    peer.sendall(frame(b"last") + frame(b"\x03\xe8", opcode=0x8))
    assert reader.message() == b"last"
    with pytest.raises(TransportClosed):
        reader.message()
    a, b = socket.socketpair()
    b.sendall(frame(b"half")[:3])
    b.close()
    with pytest.raises(TransportClosed):
        FrameReader(a, lambda p: None).message()
    a.close()


def unmask(frame_bytes: bytes) -> tuple[int, bytes, bytes]:
    """A client frame's opcode, masking key and payload (unmasked), read as a server reads it."""
    assert frame_bytes[0] & 0x80 and frame_bytes[1] & 0x80  # final, and masked as a client's must be
    n, at = frame_bytes[1] & 0x7F, 2
    if n == 126:
        n, at = struct.unpack("!H", frame_bytes[2:4])[0], 4
    elif n == 127:
        n, at = struct.unpack("!Q", frame_bytes[2:10])[0], 10
    key, body = frame_bytes[at:at + 4], frame_bytes[at + 4:]
    assert len(body) == n
    return frame_bytes[0] & 0x0F, key, bytes(b ^ key[i % 4] for i, b in enumerate(body))


@pytest.mark.parametrize("size", [0, 1, 5, 125, 126, 65535, 65536])
def test_client_frames_carry_every_length_masked_with_a_fresh_key(size):
    payload = bytes((i * 7) % 256 for i in range(size))
    first, second = client_frame(payload), client_frame(payload, OP_PONG)
    assert unmask(first)[0] == 0x1 and unmask(first)[2] == payload
    assert unmask(second)[0] == OP_PONG and unmask(second)[2] == payload
    assert unmask(first)[1] != unmask(second)[1]  # a fresh key each (the same 4 random bytes: 1 in 4 billion)
