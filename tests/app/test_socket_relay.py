"""The relay of a caller's WebSocket to an upstream one (app/sockets/upstream.py), on real sockets:
websocket-client on one end, simple-websocket (what flask-sock serves) on the other, as in server mode."""
from __future__ import annotations

import socket
import threading

import simple_websocket
import websocket
from support.waits import wait_until

from app.sockets.upstream import SocketRelay


def served_pair(max_message_size: int | None = None) -> tuple[websocket.WebSocket, simple_websocket.Server]:
    """A websocket-client connection and the simple-websocket server side of it."""
    listener = socket.create_server(("127.0.0.1", 0))
    served: dict[str, simple_websocket.Server] = {}

    def accept() -> None:
        sock, _ = listener.accept()
        head = b""
        while b"\r\n\r\n" not in head:
            head += sock.recv(4096)
        environ: dict[str, object] = {"werkzeug.socket": sock}
        for line in head.split(b"\r\n\r\n")[0].decode().split("\r\n")[1:]:
            name, _, value = line.partition(":")
            environ["HTTP_" + name.strip().upper().replace("-", "_")] = value.strip()
        served["ws"] = simple_websocket.Server(environ, max_message_size=max_message_size)

    accepting = threading.Thread(target=accept, daemon=True)
    accepting.start()
    try:
        client = websocket.create_connection(f"ws://127.0.0.1:{listener.getsockname()[1]}/", timeout=5,
                                             skip_utf8_validation=True)
        accepting.join(5)
    finally:
        listener.close()
    return client, served["ws"]


def test_a_caller_closed_before_its_relay_starts_is_closed_upstream_with_its_code():
    # The caller's first frame is too large: its side closes it (1009) before the relay's loop runs,
    # and the socket under it is closed by then. The upstream (the instance) must still hear it.
    caller, caller_side = served_pair(max_message_size=1024)
    to_upstream, upstream_side = served_pair()
    caller.send("x" * 2048)
    wait_until(lambda: not caller_side.thread.is_alive(), 5)
    relay = SocketRelay(caller_side, to_upstream, "test")
    running = threading.Thread(target=relay.run, daemon=True)
    running.start()
    wait_until(lambda: not upstream_side.connected, 10)
    assert upstream_side.close_reason == 1009
    running.join(10)
    assert not running.is_alive()
    caller.close()
