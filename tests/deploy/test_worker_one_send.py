"""app/serving/one_send.py under real gunicorn: a small answer's head leaves with its body, while a
stream still sends its head when it asks to (an empty first chunk, before any event), a file
still goes by sendfile after its head, and an answer with no body still gets its head."""
from __future__ import annotations

import select
import socket
import textwrap
from collections.abc import Iterator

import pytest
from support.servers import worker_gunicorn

pytestmark = pytest.mark.timeout(60)

# A stream's body waits for GET /release. GET /sends tells how many sends the connection's
# previous answer took (the app counts the socket's sendall calls, as gunicorn writes with them).
APP = textwrap.dedent('''
    import io, socket, threading
    gate = threading.Event()
    sends = {}
    _sendall = socket.socket.sendall

    def counted(sock, data, *args):
        sends[sock.fileno()] = sends.get(sock.fileno(), 0) + 1
        return _sendall(sock, data, *args)

    socket.socket.sendall = counted

    def held_body(chunk, first):
        yield first
        gate.wait(20)
        gate.clear()
        yield chunk

    def app(environ, start_response):
        path = environ["PATH_INFO"]
        fd = environ["gunicorn.socket"].fileno()
        if path == "/sends":
            body = str(sends.get(fd, 0)).encode()
            start_response("200 OK", [("Content-Length", str(len(body)))])
            return [body]
        sends[fd] = 0
        if path == "/release":
            gate.set()
            start_response("200 OK", [("Content-Length", "0")])
            return [b""]
        if path == "/sized":
            start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", "12")])
            return [b'{"result":2}']
        if path == "/stream":
            start_response("200 OK", [("Content-Type", "text/event-stream")])
            return held_body(b"data: 1\\n\\n", first=b"")  # an empty first chunk: the head, now
        if path == "/file":
            start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "5")])
            return environ["wsgi.file_wrapper"](io.BytesIO(b"hello"))
        start_response("204 No Content", [])
        return [b""]
''')


@pytest.fixture(scope="module")
def port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    with worker_gunicorn(tmp_path_factory.mktemp("onesend"), APP, "onesendapp") as port:
        yield port


def ask(port: int, path: str, method: str = "GET") -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(f"{method} {path} HTTP/1.1\r\nHost: t\r\n\r\n".encode())
    return sock


def release(port: int) -> None:
    with ask(port, "/release") as sock:
        assert sock.recv(65536).startswith(b"HTTP/1.1 200")


def arrived(sock: socket.socket, within_s: float) -> bytes:
    """What arrived within ``within_s`` (b"" when nothing did)."""
    if not select.select([sock], [], [], within_s)[0]:
        return b""
    return sock.recv(65536)


def read_answer(sock: socket.socket) -> tuple[bytes, bytes]:
    """The next answer's head and body (by its Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = arrived(sock, 10)
        assert chunk, "connection closed"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length")))
    while len(body) < length:
        chunk = arrived(sock, 10)
        assert chunk, "connection closed"
        body += chunk
    return head, body


def test_a_small_answer_leaves_in_one_send(port):
    sock = ask(port, "/sized")
    head, body = read_answer(sock)
    assert head.startswith(b"HTTP/1.1 200") and body == b'{"result":2}'
    sock.sendall(b"GET /sends HTTP/1.1\r\nHost: t\r\n\r\n")  # the same connection, kept alive
    assert read_answer(sock)[1] == b"1", "the head and the body went in separate sends"
    sock.close()


def test_a_stream_sends_its_head_at_once(port):
    sock = ask(port, "/stream")
    head = arrived(sock, 10)
    assert head.startswith(b"HTTP/1.1 200") and b"text/event-stream" in head
    release(port)
    rest = b""
    while b"data: 1" not in rest:
        chunk = arrived(sock, 10)
        assert chunk, "the stream's body never came"
        rest += chunk
    sock.close()


@pytest.mark.parametrize(("path", "method", "status", "body"), [
    ("/file", "GET", b"200", b"hello"),  # gunicorn's sendfile writes to the socket itself
    ("/sized", "HEAD", b"200", b""),  # no body is written: the head still goes
    ("/nothing", "GET", b"204", b""),
])
def test_answers_without_a_body_write_still_get_their_head(port, path, method, status, body):
    sock = ask(port, path, method)
    data = b""
    while b"\r\n\r\n" not in data or len(data.partition(b"\r\n\r\n")[2]) < len(body):
        chunk = arrived(sock, 10)
        assert chunk, f"no full answer to {method} {path}: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    assert head.split(b" ")[1] == status and rest == body
    sock.close()
