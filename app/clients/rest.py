"""The small HTTP client of Pinchtab's REST API that ``pinchtab mcp`` and the CLI verbs share.

Both are thin clients: everything they do is one or a few REST calls, so what a request
carries is decided here once: the base URL, the bearer token, ``X-Agent-Id`` (so each client
keeps its own current tab on the server), ``X-PinchTab-Source``, a timeout and a cap on the
size of an answer. Every failure, from the server or on the way to it, is one exception,
:class:`ClientError`, carrying the status, the server's error code and its message.

It speaks HTTP through the standard library (``http.client``), and :func:`connect` reads the few
settings it needs without building the config (:mod:`app.clients.client_config`): a CLI verb is a
process per call, and its start is most of what an agent waits for.
"""
from __future__ import annotations

import http.client
import json
import os
import select
import threading
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple
from urllib.parse import quote, urlencode, urlsplit

from .client_config import server_settings

__all__ = ["DEFAULT_TIMEOUT_S", "MAX_RESPONSE_BYTES", "Client", "ClientError", "Reply", "connect"]

DEFAULT_TIMEOUT_S = 120.0
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
CONNECT_TIMEOUT_S = 10.0
_CHUNK_BYTES = 64 * 1024
# Characters left as they are in a request's path (what a browser leaves unescaped; "%" keeps an
# escape the caller made): anything else, a space or a non-ASCII name, is percent-encoded.
_PATH_SAFE = "!#$%&'()*+,/:;=?@[]~"


class ClientError(Exception):
    """A request that did not succeed.

    ``status`` is the HTTP status (0 when no answer came: the server is unreachable, too slow,
    or the answer was too large), ``code`` the server's error code (``evaluate_disabled``,
    ``stale_ref``...) or one of ours (``unreachable``, ``timeout``, ``response_too_large``),
    ``message`` what the server said, ``details`` its optional details object, ``body`` the
    whole JSON error document when there was one.
    """

    def __init__(self, message: str, *, status: int = 0, code: str = "error",
                 details: Mapping[str, Any] | None = None, retryable: bool = False, body: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.details = dict(details or {})
        self.retryable = retryable
        self.body = body

    def describe(self) -> str:
        """One line for people and models: the message, the code and status, the server's hint,
        and the other details (a stale ref's candidates, the URL a click navigated to)."""
        where = f"{self.code}, HTTP {self.status}" if self.status else self.code
        out = f"{self.message} ({where})"
        hint = self.details.get("hint")
        if isinstance(hint, str) and hint:
            out += f"; {hint}"
        rest = {k: v for k, v in self.details.items() if k not in ("hint", "remedy", "setting") and v not in (None, "")}
        if rest:
            out += " " + json.dumps(rest, ensure_ascii=False, separators=(",", ":"))[:2000]
        return out


class Reply(NamedTuple):
    """A successful answer: status, content type, headers and the (capped) body."""

    status: int
    content_type: str
    body: bytes
    headers: Mapping[str, str] = MappingProxyType({})

    def json(self) -> Any:
        """The body as JSON; a body that is not JSON is a :class:`ClientError`."""
        try:
            return json.loads(self.body)
        except ValueError:
            raise ClientError(f"expected JSON, got {self.content_type or 'no content type'}",
                              status=self.status, code="bad_response") from None

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", errors="replace")

    @property
    def is_json(self) -> bool:
        return "json" in self.content_type


class _Failure(Exception):
    """Why no answer came (or the rest of one did not): what :class:`ClientError` names it."""

    def __init__(self, kind: str, name: str = "") -> None:
        super().__init__(kind)
        self.kind = kind  # "timeout", or "broken" (the name says how)
        self.name = name


def _failure(exc: Exception) -> _Failure:
    """A transport error as the client reports it: a timeout, or a named break."""
    if isinstance(exc, TimeoutError):  # socket.timeout is TimeoutError
        return _Failure("timeout")
    if isinstance(exc, http.client.InvalidURL):
        return _Failure("broken", "InvalidURL")
    if isinstance(exc, ValueError):  # a header value (a token) with a line break in it
        return _Failure("broken", "InvalidHeader")
    # Refused, reset, no such host, a closed connection, a garbled answer: the connection failed.
    return _Failure("broken", "ConnectionError")


class _Session:
    """One thread's way to the server: the headers every request carries and a kept-alive connection."""

    def __init__(self, scheme: str, netloc: str, headers: Mapping[str, str]) -> None:
        self.headers = dict(headers)
        self._scheme = scheme
        self._netloc = netloc
        self._conn: http.client.HTTPConnection | None = None

    def _connection(self, timeout: float) -> http.client.HTTPConnection:
        conn = self._conn
        if conn is not None and conn.sock is not None and select.select([conn.sock], [], [], 0)[0]:
            conn.close()  # an idle kept-alive connection that reads as ready was closed by the server
        if conn is None:
            kind = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            conn = self._conn = kind(self._netloc)
        if conn.sock is None:
            conn.timeout = min(CONNECT_TIMEOUT_S, timeout)
            conn.connect()
        conn.sock.settimeout(timeout)
        return conn

    def send(self, method: str, target: str, data: bytes | None, headers: Mapping[str, str],
             timeout: float) -> http.client.HTTPResponse:
        """The response to one request, its body not read yet (:class:`_Failure` when there is none)."""
        try:
            conn = self._connection(timeout)
            conn.request(method, target, body=data, headers={**self.headers, **headers})
            return conn.getresponse()
        except (OSError, http.client.HTTPException, ValueError) as exc:
            self.drop()
            raise _failure(exc) from None

    def chunks(self, resp: http.client.HTTPResponse) -> Iterator[bytes]:
        """The body as it arrives; the connection is kept for the next request only when the body
        was read to its end (a body left half read, or a failure, closes it)."""
        done = False
        try:
            while chunk := resp.read1(_CHUNK_BYTES):
                yield chunk
            done = True
        except (OSError, http.client.HTTPException, ValueError) as exc:
            raise _failure(exc) from None
        finally:
            if done and not resp.will_close:
                resp.close()  # read1 leaves a body read to its end open: the connection would refuse the next one
            else:
                self.drop()

    def drop(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


class Client:
    """Calls Pinchtab's REST API as one named caller.

    Thread-safe: each thread gets its own session, and with it its own connection (the MCP
    server runs calls on worker threads).
    """

    def __init__(self, base_url: str, *, token: str = "", agent_id: str = "", source: str = "",
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_bytes: int = MAX_RESPONSE_BYTES,
                 session: str = "") -> None:
        self.base_url = normalise_base_url(base_url)
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        headers = {"Accept": "application/json", "User-Agent": "pinchtab"}
        if session:  # an agent session token (PINCHTAB_SESSION) stands in for the bearer token
            headers["Authorization"] = f"Session {session}"
        elif token:
            headers["Authorization"] = f"Bearer {token}"
        if agent_id:
            headers["X-Agent-Id"] = agent_id
        if source:
            headers["X-PinchTab-Source"] = source
        self._headers = headers
        self._local = threading.local()

    def __repr__(self) -> str:  # never the token
        return f"Client({self.base_url!r}, agent={self._headers.get('X-Agent-Id', '')!r})"

    @property
    def authorization(self) -> str | None:
        """The Authorization header this client sends (None without a token), for a WebSocket to
        the same server (``pinchtab debug attach``)."""
        return self._headers.get("Authorization")

    def _session(self) -> _Session:
        session = getattr(self._local, "session", None)
        if session is None:
            parts = urlsplit(self.base_url)
            session = self._local.session = _Session(parts.scheme, parts.netloc, self._headers)
        return session

    def _send(self, method: str, path: str, params: Mapping[str, Any] | None, body: Any, timeout: float,
              headers: dict[str, str] | None = None) -> http.client.HTTPResponse:
        """The response to one request, its body not read yet; ClientError when there is none in time."""
        name = "InvalidSchema" if not self.base_url.startswith(("http://", "https://")) else ""
        data = None
        extra = dict(headers or {})
        if body is not None:
            try:
                data = json.dumps(body, allow_nan=False).encode()
            except ValueError:  # NaN or infinity: not JSON
                name = name or "InvalidJSONError"
            extra["Content-Type"] = "application/json"
        if name:
            raise self._unreachable(name)
        target = quote(urlsplit(self.base_url).path + path, safe=_PATH_SAFE)
        query = urlencode({k: _query_value(v) for k, v in (params or {}).items() if v is not None}, doseq=True)
        if query:
            target += ("&" if "?" in target else "?") + query
        try:
            return self._session().send(method, target, data, extra, timeout)
        except _Failure as exc:
            if exc.kind == "timeout":
                raise ClientError(f"no answer from {self.base_url} within {timeout:g} s", code="timeout") from None
            raise self._unreachable(exc.name) from None

    def _unreachable(self, name: str) -> ClientError:
        return ClientError(f"cannot reach pinchtab at {self.base_url} ({name}); is it running? "
                           "Start one with `pinchtab bridge` or point --server at it", code="unreachable")

    def _chunks(self, resp: http.client.HTTPResponse, timeout: float) -> Iterator[bytes]:
        """The body as it arrives; a stall or a break is a ClientError."""
        try:
            yield from self._session().chunks(resp)
        except _Failure as exc:
            if exc.kind == "timeout":
                raise ClientError(f"the answer from {self.base_url} stalled for {timeout:g} s",
                                  code="timeout") from None
            raise ClientError(f"the connection to {self.base_url} broke ({exc.name})", code="unreachable") from None

    def request(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
                body: Mapping[str, Any] | None = None, tab: str | None = None,
                timeout_s: float | None = None) -> Reply:
        """Send one request; return the answer, or raise :class:`ClientError`.

        ``tab`` targets that tab through the ``/tabs/{id}<path>`` twin of the route. ``params``
        values that are None are left out; booleans are sent as ``true``/``false``.
        """
        if tab:
            path = f"/tabs/{quote(tab, safe='')}{path}"
        timeout = timeout_s or self.timeout_s
        resp = self._send(method, path, params, body, timeout)
        reply = Reply(resp.status, resp.getheader("Content-Type", ""), self._read_capped(resp, timeout),
                      _headers(resp))
        if resp.status >= 400:
            raise error_from(reply)
        return reply

    def _read_capped(self, resp: http.client.HTTPResponse, timeout: float) -> bytes:
        """The body, refused past ``max_bytes`` without reading the rest."""
        too_large = ClientError(f"the answer is larger than the client's {self.max_bytes // (1024 * 1024)} MB cap; "
                                "ask for less (a selector, maxTokens, maxChars, a smaller screenshot)",
                                status=resp.status, code="response_too_large")
        declared = resp.getheader("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            self._session().drop()
            raise too_large
        chunks: list[bytes] = []
        size = 0
        body = self._chunks(resp, timeout)
        with _closing(body):
            for chunk in body:
                size += len(chunk)
                if size > self.max_bytes:
                    raise too_large
                chunks.append(chunk)
        return b"".join(chunks)

    def events(self, method: str, path: str, *, params: Mapping[str, Any] | None = None,
               body: Mapping[str, Any] | None = None, timeout_s: float | None = None) -> Iterator[tuple[str, Any]]:
        """Send one request asking for Server-Sent Events and yield each ``(event, data)`` as it
        arrives (``data`` decoded from JSON). An error answer raises :class:`ClientError` as
        :meth:`request` does; a server that answers plain JSON instead (one that does not stream
        this route) yields it as one ``("result", data)``. ``timeout_s`` bounds each wait for bytes
        (the server's heartbeats keep a slow run alive); each event is capped at ``max_bytes``."""
        timeout = timeout_s or self.timeout_s
        resp = self._send(method, path, params, body, timeout, headers={"Accept": "text/event-stream"})
        ctype = resp.getheader("Content-Type", "")
        if resp.status >= 400 or "text/event-stream" not in ctype:
            reply = Reply(resp.status, ctype, self._read_capped(resp, timeout), _headers(resp))
            if resp.status >= 400:
                raise error_from(reply)
            yield "result", reply.json()
            return
        chunks = self._chunks(resp, timeout)
        with _closing(chunks):
            yield from self._read_events(chunks, resp.status)

    def _read_events(self, chunks: Iterator[bytes], status: int) -> Iterator[tuple[str, Any]]:
        """The events of a text/event-stream body (``event:`` and ``data:`` lines; comments skipped)."""
        buffer = bytearray()
        scanned = 0  # where the search for the next blank line resumes: a large report is not rescanned per chunk
        for chunk in chunks:
            buffer += chunk
            while (end := buffer.find(b"\n\n", scanned)) >= 0:
                block = bytes(buffer[:end])
                del buffer[:end + 2]
                scanned = 0
                event, data = "message", []
                for line in block.decode("utf-8", errors="replace").splitlines():
                    name, _, value = line.partition(":")
                    value = value.removeprefix(" ")
                    if name == "event":
                        event = value
                    elif name == "data":
                        data.append(value)
                if data:
                    try:
                        yield event, json.loads("\n".join(data))
                    except ValueError:
                        raise ClientError(f"a {event} event that is not JSON", status=status,
                                          code="bad_response") from None
            scanned = max(0, len(buffer) - 1)
            if len(buffer) > self.max_bytes:
                raise ClientError(f"an event larger than the client's {self.max_bytes // (1024 * 1024)} MB cap",
                                  status=status, code="response_too_large")

    def get(self, path: str, params: Mapping[str, Any] | None = None, *, tab: str | None = None) -> Any:
        """GET ``path`` and return its JSON."""
        return self.request("GET", path, params=params, tab=tab).json()

    def post(self, path: str, body: Mapping[str, Any] | None = None, *, tab: str | None = None,
             params: Mapping[str, Any] | None = None) -> Any:
        """POST ``body`` as JSON to ``path`` and return the JSON answer."""
        return self.request("POST", path, body=body if body is not None else {}, params=params, tab=tab).json()


class _closing:
    """Closes a generator when the block ends, however it ends (its ``finally`` then drops a half-read
    connection at once, not when the generator is collected)."""

    def __init__(self, gen: Iterator[bytes]) -> None:
        self.gen = gen

    def __enter__(self) -> Iterator[bytes]:
        return self.gen

    def __exit__(self, *exc: object) -> None:
        self.gen.close()  # type: ignore[attr-defined]


def _headers(resp: http.client.HTTPResponse) -> dict[str, str]:
    """The answer's headers, a repeated one joined with ", " (as HTTP folds them)."""
    out: dict[str, str] = {}
    for name, value in resp.getheaders():
        out[name] = f"{out[name]}, {value}" if name in out else value
    return out


def error_from(reply: Reply) -> ClientError:
    """The :class:`ClientError` for an error answer: our JSON shape, RFC 7807, or anything else."""
    doc: Any = None
    if reply.is_json:
        try:
            doc = json.loads(reply.body)
        except ValueError:
            doc = None
    if isinstance(doc, dict):
        # "reason": GET /health's 503 document ({"status": "error", "reason": ...}).
        message = (doc.get("error") or doc.get("detail") or doc.get("title") or doc.get("reason")
                   or f"HTTP {reply.status}")
        details = doc.get("details") if isinstance(doc.get("details"), dict) else None
        return ClientError(str(message), status=reply.status, code=str(doc.get("code") or "error"),
                           details=details, retryable=bool(doc.get("retryable")), body=doc)
    snippet = " ".join(reply.text.split())[:200]
    return ClientError(f"HTTP {reply.status}: {snippet}" if snippet else f"HTTP {reply.status}",
                       status=reply.status, code="http_error")


def normalise_base_url(url: str) -> str:
    """``host:port`` or a full URL, without the trailing slash."""
    url = url.strip()
    if "://" not in url:
        url = "http://" + url
    return url.rstrip("/")


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


def connect(server: str | None = None, *, agent_id: str, source: str,
            env: Mapping[str, str] | None = None, timeout_s: float = DEFAULT_TIMEOUT_S,
            session: str = "") -> Client:
    """A client for the server the user means.

    The URL is ``server``, else ``$PINCHTAB_SERVER``, else ``http://127.0.0.1:<server.port>``
    from the config; the token is ``$PINCHTAB_TOKEN``, else the config's ``server.token``. The
    config is read only when one of them is still missing (a bad config then raises
    :class:`~app.config.ConfigError`). An agent session token, ``session`` else
    ``$PINCHTAB_SESSION``, is sent instead of the bearer token.
    """
    env = os.environ if env is None else env
    session = session or env.get("PINCHTAB_SESSION", "")
    base = server or env.get("PINCHTAB_SERVER") or ""
    # An empty variable counts as unset, as it does for the server's own config.
    token = env.get("PINCHTAB_TOKEN") or None
    if not base or token is None:
        port, config_token = server_settings(env)
        # 127.0.0.1 even when the server binds wider: this client runs on the same machine.
        base = base or f"http://127.0.0.1:{port}"
        token = config_token if token is None else token
    return Client(base, token=token, agent_id=agent_id, source=source, timeout_s=timeout_s, session=session)
