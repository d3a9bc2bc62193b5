"""The small HTTP client of Pinchtab's REST API that ``pinchtab mcp`` and the CLI verbs share.

Both are thin clients: everything they do is one or a few REST calls, so what a request
carries is decided here once: the base URL, the bearer token, ``X-Agent-Id`` (so each client
keeps its own current tab on the server), ``X-PinchTab-Source``, a timeout and a cap on the
size of an answer. Every failure, from the server or on the way to it, is one exception,
:class:`ClientError`, carrying the status, the server's error code and its message.
"""
from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import requests

from ..config import load_config

__all__ = ["DEFAULT_TIMEOUT_S", "MAX_RESPONSE_BYTES", "Client", "ClientError", "Reply", "connect"]

DEFAULT_TIMEOUT_S = 120.0
MAX_RESPONSE_BYTES = 10 * 1024 * 1024
CONNECT_TIMEOUT_S = 10.0
_CHUNK_BYTES = 64 * 1024


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


@dataclass(frozen=True)
class Reply:
    """A successful answer: status, content type, headers and the (capped) body."""

    status: int
    content_type: str
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)

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


class Client:
    """Calls Pinchtab's REST API as one named caller.

    Thread-safe: each thread gets its own ``requests.Session`` (the MCP server runs calls on
    worker threads, and a Session is not documented as safe to share).
    """

    def __init__(self, base_url: str, *, token: str = "", agent_id: str = "", source: str = "",
                 timeout_s: float = DEFAULT_TIMEOUT_S, max_bytes: int = MAX_RESPONSE_BYTES,
                 session: str = "") -> None:
        self.base_url = normalise_base_url(base_url)
        self.timeout_s = timeout_s
        self.max_bytes = max_bytes
        headers = {"Accept": "application/json"}
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

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = self._local.session = requests.Session()
            session.headers.update(self._headers)
            session.trust_env = False  # a proxy from the environment must not see the bearer token
        return session

    def _send(self, method: str, path: str, params: Mapping[str, Any] | None, body: Any, timeout: float,
              headers: dict[str, str] | None = None) -> requests.Response:
        """The response to one request, its body not read yet; ClientError when there is none in time."""
        query = {k: _query_value(v) for k, v in (params or {}).items() if v is not None}
        try:
            return self._session().request(method, self.base_url + path, params=query, json=body, stream=True,
                                           headers=headers, timeout=(min(CONNECT_TIMEOUT_S, timeout), timeout))
        except requests.Timeout:
            raise ClientError(f"no answer from {self.base_url} within {timeout:g} s", code="timeout") from None
        except requests.RequestException as exc:
            raise ClientError(f"cannot reach pinchtab at {self.base_url} ({type(exc).__name__}); is it running? "
                              "Start one with `pinchtab bridge` or point --server at it", code="unreachable") from None

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
        with resp:
            data = self._read_capped(resp, timeout)
        reply = Reply(resp.status_code, resp.headers.get("Content-Type", ""), data, dict(resp.headers))
        if resp.status_code >= 400:
            raise error_from(reply)
        return reply

    def _read_capped(self, resp: requests.Response, timeout: float) -> bytes:
        """The body, refused past ``max_bytes`` without reading the rest."""
        too_large = ClientError(f"the answer is larger than the client's {self.max_bytes // (1024 * 1024)} MB cap; "
                                "ask for less (a selector, maxTokens, maxChars, a smaller screenshot)",
                                status=resp.status_code, code="response_too_large")
        declared = resp.headers.get("Content-Length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise too_large
        chunks: list[bytes] = []
        size = 0
        try:
            for chunk in resp.iter_content(_CHUNK_BYTES):
                size += len(chunk)
                if size > self.max_bytes:
                    raise too_large
                chunks.append(chunk)
        except requests.Timeout:
            raise ClientError(f"the answer from {self.base_url} stalled for {timeout:g} s", code="timeout") from None
        except requests.RequestException as exc:
            raise ClientError(f"the connection to {self.base_url} broke ({type(exc).__name__})",
                              code="unreachable") from None
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
        with resp:
            ctype = resp.headers.get("Content-Type", "")
            if resp.status_code >= 400 or "text/event-stream" not in ctype:
                reply = Reply(resp.status_code, ctype, self._read_capped(resp, timeout), dict(resp.headers))
                if resp.status_code >= 400:
                    raise error_from(reply)
                yield "result", reply.json()
                return
            yield from self._read_events(resp, timeout)

    def _read_events(self, resp: requests.Response, timeout: float) -> Iterator[tuple[str, Any]]:
        """The events of a text/event-stream body (``event:`` and ``data:`` lines; comments skipped)."""
        buffer = bytearray()
        scanned = 0  # where the search for the next blank line resumes: a large report is not rescanned per chunk
        try:
            for chunk in resp.iter_content(_CHUNK_BYTES):
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
                            raise ClientError(f"a {event} event that is not JSON", status=resp.status_code,
                                              code="bad_response") from None
                scanned = max(0, len(buffer) - 1)
                if len(buffer) > self.max_bytes:
                    raise ClientError(f"an event larger than the client's {self.max_bytes // (1024 * 1024)} MB cap",
                                      status=resp.status_code, code="response_too_large")
        except requests.Timeout:
            raise ClientError(f"the answer from {self.base_url} stalled for {timeout:g} s", code="timeout") from None
        except requests.RequestException as exc:
            raise ClientError(f"the connection to {self.base_url} broke ({type(exc).__name__})",
                              code="unreachable") from None

    def get(self, path: str, params: Mapping[str, Any] | None = None, *, tab: str | None = None) -> Any:
        """GET ``path`` and return its JSON."""
        return self.request("GET", path, params=params, tab=tab).json()

    def post(self, path: str, body: Mapping[str, Any] | None = None, *, tab: str | None = None,
             params: Mapping[str, Any] | None = None) -> Any:
        """POST ``body`` as JSON to ``path`` and return the JSON answer."""
        return self.request("POST", path, body=body if body is not None else {}, params=params, tab=tab).json()


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
        config = load_config(env=env)
        # 127.0.0.1 even when the server binds wider: this client runs on the same machine.
        base = base or f"http://127.0.0.1:{config.server.port}"
        token = config.server.token if token is None else token
    return Client(base, token=token, agent_id=agent_id, source=source, timeout_s=timeout_s, session=session)
