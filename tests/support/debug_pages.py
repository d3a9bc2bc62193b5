"""What the page-SDK tests need: one origin serving the SDK test pages, the npm SDK's modules and
the example app; a Flask app on a real threaded werkzeug server; an agent on a WebSocket.

Everything is served from one 127.0.0.1 origin because the npm SDK is an ES module: its imports
(resolved by the page's import map) must come from the page's origin or carry CORS headers.
"""
from __future__ import annotations

import http.server
import json
import queue
import socket
import threading
import time
from pathlib import Path
from typing import Any

import websocket

from app.debug import protocol
from app.process.local_server import LocalServer
from support.waits import wait_until

ROOT = Path(__file__).resolve().parents[2]
NODE_MODULES = ROOT / "tests" / "js" / "node_modules"
NPM_SDK = NODE_MODULES / "debug-bridge-browser" / "dist" / "index.js"
# URL prefix -> directory; the longest prefix wins.
MOUNTS = {"/node_modules/": NODE_MODULES, "/store/": ROOT / "examples" / "debug-store", "/": ROOT / "tests" / "pages"}


class _Handler(http.server.SimpleHTTPRequestHandler):
    extensions_map = {**http.server.SimpleHTTPRequestHandler.extensions_map, ".js": "text/javascript"}

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        for prefix, directory in MOUNTS.items():
            if clean.startswith(prefix):
                rel = Path(clean[len(prefix):].lstrip("/"))
                if ".." in rel.parts:
                    return str(directory / "__nope__")
                return str(directory / rel)
        return str(ROOT / "__nope__")

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")   # a reload must fetch the page again
        super().end_headers()


class DebugPages:
    """The SDK test pages, ``/node_modules/`` (tests/js) and ``/store/`` (the example) on 127.0.0.1."""

    def __init__(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-debug-pages", daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class AppServer(LocalServer):
    """A Flask app (the bridge's) on a real server in a thread, started: WebSockets need one."""

    def __init__(self, app: Any) -> None:
        super().__init__(app, "127.0.0.1", 0, name="test-app-server")
        self.start()

    def url(self, path: str = "/") -> str:
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"


class Agent:
    """An agent on the debug WebSocket: what it received, in order, and commands it sends."""

    def __init__(self, url: str, session_id: str, header: list[str] | None = None) -> None:
        self.session_id = session_id
        self.ws = websocket.create_connection(url, timeout=5, header=header or [])
        self.ws.settimeout(0.2)   # the reader looks at `closed` this often
        self.messages: list[dict[str, Any]] = []
        self.closed = False
        self._seq = 0
        self._thread = threading.Thread(target=self._read_loop, name="test-agent", daemon=True)
        self._thread.start()

    def _read_loop(self) -> None:
        while not self.closed:
            try:
                text = self.ws.recv()
            except websocket.WebSocketTimeoutException:
                continue
            except (websocket.WebSocketException, OSError):
                return
            if not text:
                return
            self.messages.append(json.loads(text))

    def send(self, type: str, **fields: Any) -> str:
        """Send one command; returns its requestId."""
        self._seq += 1
        request_id = fields.pop("requestId", f"t-{self._seq}-{time.monotonic_ns()}")
        self.ws.send(json.dumps(protocol.envelope(self.session_id, type, requestId=request_id, **fields)))
        return request_id

    def wait_for(self, predicate: Any, timeout_s: float = 5.0, after: int = 0) -> dict[str, Any]:
        """The first message (from index ``after``) that ``predicate`` accepts; fails at the deadline."""
        return wait_until(lambda: next((m for m in self.messages[after:] if predicate(m)), None), timeout_s)

    def of_type(self, type: str, after: int = 0) -> list[dict[str, Any]]:
        return [m for m in self.messages[after:] if m.get("type") == type]

    def reply(self, request_id: str, timeout_s: float = 5.0) -> dict[str, Any]:
        """The answer to one command: its command_result or its data reply."""
        return self.wait_for(lambda m: m.get("requestId") == request_id and m.get("type") != "command" and
                             m.get("type") not in protocol.COMMAND_TYPES, timeout_s)

    def close(self) -> None:
        self.closed = True
        self._thread.join(2)
        try:
            self.ws.close(timeout=1)
        except (websocket.WebSocketException, OSError):
            pass


def recv_until(ws: websocket.WebSocket, pred: Any, timeout_s: float = 10.0) -> dict[str, Any]:
    """The first JSON message on ``ws`` that ``pred`` accepts (others are skipped), within the deadline."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        ws.settimeout(max(0.01, deadline - time.monotonic()))
        msg = json.loads(ws.recv())
        if pred(msg):
            return msg
    raise AssertionError("no such message in time")


class EventStream(queue.Queue):
    """The parsed ``data:`` messages of a Server-Sent Events answer that a reader thread takes."""

    def __init__(self, resp: Any) -> None:
        super().__init__()
        self.resp = resp

    def close(self) -> None:
        """End the stream at once. A plain ``resp.close()`` waits for the reader thread's read to
        return, which is at the stream's next byte: its heartbeat, 15 s away."""
        try:
            self.resp.raw._fp.fp.raw._sock.shutdown(socket.SHUT_RDWR)
        except (AttributeError, OSError):
            pass  # already closed, or not a plain socket: close() alone will do
        self.resp.close()


def stream_events(resp: Any) -> EventStream:
    """The ``data:`` messages of an open Server-Sent Events answer, parsed, as a reader thread gets
    them; ``close()`` the result, not ``resp``, to end it."""
    events = EventStream(resp)

    def read() -> None:
        try:
            for line in resp.iter_lines(decode_unicode=True):
                if line.startswith("data:"):
                    events.put(json.loads(line[5:]))
        except Exception:  # the test closed the stream under us: the reading is over
            pass

    threading.Thread(target=read, name="test-sse-reader", daemon=True).start()
    return events
