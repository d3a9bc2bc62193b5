"""A small answer leaves in one send: its head waits for its body.

gunicorn writes a response's head and its body with a ``sendall`` each. On loopback every send
runs the whole TCP path and wakes the client, so an answer of a few hundred bytes paid for two.
Here, when the app declared a small ``Content-Length``, the head is held until the body's first
write and both go in one send. Answers of unknown length are left as gunicorn sends them: a
stream may write an empty first chunk to get its head out before its first event. Files that
gunicorn sends with ``sendfile`` get their head first, as before.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from gunicorn.http.wsgi import Response

from ..web.closing import Closing

HOLD_MAX = 64 * 1024  # bigger bodies take several segments anyway: holding their head gains nothing


class _HeadWithBody:
    """The response's socket while the head waits: the first ``sendall`` (the head) is held, the
    next one carries it. Any other use of the socket (``fileno`` for a sendfile, a shutdown) sends
    the held head first."""

    __slots__ = ("sock", "head", "holding")

    def __init__(self, sock: Any) -> None:
        self.sock = sock
        self.head = b""
        self.holding = True  # the next sendall is the head

    def sendall(self, data: bytes) -> None:
        if self.holding:
            self.holding = False
            self.head = bytes(data)
            return
        if self.head:
            data, self.head = self.head + data, b""
        self.sock.sendall(data)

    def flush(self) -> None:
        self.holding = False
        if self.head:
            head, self.head = self.head, b""
            self.sock.sendall(head)

    def __getattr__(self, name: str) -> Any:
        self.flush()
        return getattr(self.sock, name)


class OneSend:
    """``app`` as gunicorn calls it, its small answers' heads sent with their bodies. The app's
    own attributes (a Flask app's ``extensions``) read through, for gunicorn's hooks."""

    def __init__(self, app: Callable[..., Iterable[bytes]]) -> None:
        self.app = app

    def __getattr__(self, name: str) -> Any:
        return getattr(self.app, name)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        body = self.app(environ, start_response)
        # gunicorn's HTTP/1 response (start_response is its method); HTTP/2 frames its own writes.
        resp = getattr(start_response, "__self__", None)
        if (type(resp) is not Response or resp.headers_sent or resp.chunked
                or resp.response_length is None or resp.response_length > HOLD_MAX
                or isinstance(body, environ.get("wsgi.file_wrapper") or ())):
            return body
        held = _HeadWithBody(resp.sock)
        resp.sock = held
        # Its close (gunicorn calls it after the response's own) first sends a head still held: an
        # answer that had no body to write (HEAD, a 204).
        return Closing(body, held.flush, first=True)
