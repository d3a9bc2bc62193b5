"""app/serving/worker.py under real gunicorn: requests are gathered off the threads and still arrive whole
(in pieces, pipelined, big, chunked, expecting 100-continue), and clients that never close do not
stall the server."""
from __future__ import annotations

import select
import socket
import textwrap
import time
from collections.abc import Iterator

import pytest
from support.servers import worker_gunicorn

pytestmark = pytest.mark.timeout(60)

APP = textwrap.dedent('''
    def app(environ, start_response):
        body = environ["wsgi.input"].read()
        answer = f"{environ['PATH_INFO']} {len(body)}".encode()
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(answer)))])
        return [answer]
''')


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with worker_gunicorn(tmp_path_factory.mktemp("echo"), APP, "echoapp") as port:
        yield port


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return sock


def nothing_answered(sock: socket.socket, within_s: float = 0.1) -> bool:
    """No answer arrives within ``within_s`` (a request still incomplete gets none)."""
    return not select.select([sock], [], [], within_s)[0]


def answers(sock: socket.socket, count: int = 1) -> list[str]:
    """The next ``count`` answers' bodies (each is "<path> <body length>")."""
    buf, out = b"", []
    while len(out) < count:
        while b"\r\n\r\n" not in buf:
            data = sock.recv(65536)
            assert data, "connection closed"
            buf += data
        head, _, buf = buf.partition(b"\r\n\r\n")
        assert head.startswith((b"HTTP/1.1 200", b"HTTP/1.0 200")), head
        length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                          if line.lower().startswith(b"content-length")))
        while len(buf) < length:
            data = sock.recv(65536)
            assert data, "connection closed"
            buf += data
        out.append(buf[:length].decode())
        buf = buf[length:]
    return out


def test_a_request_sent_in_pieces_is_answered_once_whole(port):
    sock = connect(port)
    for piece in (b"POST /pieces HTTP/1.1\r\nHo", b"st: t\r\nContent-Length: 10\r\n", b"\r\n01234"):
        sock.sendall(piece)
        assert nothing_answered(sock)
    sock.sendall(b"56789")
    assert answers(sock) == ["/pieces 10"]
    sock.close()


def test_pipelined_requests_with_bodies_are_answered_in_order(port):
    sock = connect(port)
    sock.sendall(b"POST /a HTTP/1.1\r\nHost: t\r\nContent-Length: 3\r\n\r\nabc"
                 b"GET /b HTTP/1.1\r\nHost: t\r\n\r\n"
                 b"POST /c HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nab")
    assert answers(sock, 2) == ["/a 3", "/b 0"]
    assert nothing_answered(sock)  # the third is still coming
    sock.sendall(b"cd")
    assert answers(sock) == ["/c 4"]
    sock.close()


def test_big_chunked_and_expecting_bodies_still_arrive(port):
    sock = connect(port)
    big = b"x" * (3 * 1024 * 1024)  # over what the poller gathers: the thread reads it
    sock.sendall(b"POST /big HTTP/1.1\r\nHost: t\r\nContent-Length: %d\r\n\r\n" % len(big) + big)
    assert answers(sock) == [f"/big {len(big)}"]
    sock.sendall(b"POST /chunked HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n")
    sock.sendall(b"6\r\n world\r\n0\r\n\r\n")
    assert answers(sock) == ["/chunked 11"]
    sock.sendall(b"POST /expect HTTP/1.1\r\nHost: t\r\nExpect: 100-continue\r\nContent-Length: 5\r\n\r\n")
    select.select([sock], [], [], 1.0)  # a 100 Continue, or (as curl does) go ahead after a second
    sock.sendall(b"hello")
    data = b""
    while b"/expect 5" not in data:
        chunk = sock.recv(65536)
        assert chunk, "connection closed"
        data += chunk
    sock.close()


def test_clients_that_never_close_do_not_stall_the_others(port):
    # HTTP/1.0 without keep-alive: the server closes after each answer and waits a moment for the
    # client's close. These clients never close.
    lingering = []
    for _ in range(5):
        sock = connect(port)
        sock.sendall(b"GET /old HTTP/1.0\r\n\r\n")
        assert answers(sock) == ["/old 0"]
        lingering.append(sock)
    sock = connect(port)
    started = time.monotonic()
    sock.sendall(b"GET /next HTTP/1.1\r\nHost: t\r\n\r\n")
    assert answers(sock) == ["/next 0"]
    assert time.monotonic() - started < 1.0
    for s in [*lingering, sock]:
        s.close()
