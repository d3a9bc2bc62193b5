"""Debug sessions: who is in each (apps, agents), and where each message goes.

A session is the original debug bridge's room: frames from an app go to every agent, commands from
an agent go to every app. We add what a team needs around that: a command's result goes back only
to the agent that sent it; every peer has a bounded outbox (the oldest message goes first when it
is full, and the peer is told how many it missed), so a flooding page or a stalled agent costs
memory that is capped and never blocks the sender; a peer that has not taken anything for
``SLOW_S`` while its outbox overflows is cut loose. Each session keeps its last messages with
increasing ids for Server-Sent Events (resume with Last-Event-ID).

Memory is capped in bytes, not only in messages: a page may send frames of ``debug.maxFrameBytes``
each, and a thousand of them held would be gigabytes. The session's record keeps at most
``debug.maxSessionBytes`` (the oldest go first, counted as dropped); a single frame larger than
that is still handed to the peers connected now, but the record keeps a small ``dropped`` notice in
its place. Each outbox holds at most that budget too, or two of the largest frames when that is
more (:func:`outbox_bytes`), so a peer that keeps up gets even a frame the record could not keep.

Long-lived connections (WebSockets, event streams, screencasts) share one cap,
``debug.maxConnections``: the hub's :class:`~app.sockets.limiter.Limiter`, which the app's other
long-lived entries use too; the hub only ends it with its sessions at shutdown.

The hub knows nothing of transports: a WebSocket connection, the CLI's stdout, a REST caller
waiting for one answer and the CDP side of a tab are all peers.
"""
from __future__ import annotations

import json
import logging
import secrets
import sys
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..sockets.limiter import Limiter
from ..web.files import write_atomic
from . import protocol

log = logging.getLogger(__name__)

OUTBOX_LIMIT = 1000     # messages a peer may lag behind before the oldest are dropped
HISTORY_LIMIT = 1000    # messages a session keeps for SSE subscribers (and Last-Event-ID resumes)
SESSION_BYTES = 16 * 1024 * 1024   # bytes of messages a session's record may hold (debug.maxSessionBytes)
FRAME_BYTES = 8 * 1024 * 1024      # the largest frame a page may send (debug.maxFrameBytes)
ENTRY_OVERHEAD = 100    # what holding one message costs beyond its text (the tuple, its id, the slot)
PENDING_LIMIT = 1024    # commands awaiting their result, per session; the oldest are forgotten
SLOW_S = 10.0           # an overflowing peer that took nothing for this long is cut loose
INVALID_LOGGED = 20     # bad frames logged per session; after that, every 1000th
MAX_SESSIONS = 256      # sessions one process holds; past it, creating one is refused
# Data messages that answer a command (carrying its requestId) rather than a command_result.
DATA_REPLIES = {"ui_tree": "request_ui_tree", "dom_snapshot": "request_dom_snapshot",
                "state_update": "request_state", "screenshot": "request_screenshot"}
# The npm SDK answers every connection_event sent to it with a command_result without a requestId
# (requestType "connection_event", INVALID_COMMAND): expected noise, neither counted nor logged.
SDK_ECHO = '"requestType":"connection_event"'
# What a late agent is told about each app, as if it had been there: who it is, what it can do, where it is.
GREETINGS = ("hello", "capabilities", "navigation")

Deliver = Callable[[str, "dict[str, Any] | None"], None]


def text_bytes(text: str) -> int:
    """The memory a held frame costs: the string object itself (CPython keeps ASCII text at one byte
    a character, other text at two or four), so the budget is real bytes, not characters."""
    return sys.getsizeof(text)


def outbox_bytes(max_session_bytes: int, max_frame_bytes: int) -> int:
    """What one peer's outbox may hold: the session's budget, but room for two of the largest frames,
    so the frame after a large one does not push it out before the peer could take it."""
    return max(max_session_bytes, 2 * max_frame_bytes)


def new_session_id() -> str:
    """128 random bits: the id is a capability (whoever has it may join as an app). In hex: it goes
    on command lines, where an id starting with "-" would read as an option."""
    return secrets.token_hex(16)


class Outbox:
    """A bounded queue of outgoing frames; ``wake`` tells the consumer there is something to take.

    Bounded twice: at most ``limit`` frames and ``max_bytes`` of them. A frame larger than
    ``max_bytes`` alone is still queued (after everything older went): it is on its way to a
    connected peer, and it is the only one held.
    """

    def __init__(self, wake: Callable[[], None], limit: int = OUTBOX_LIMIT, max_bytes: int = SESSION_BYTES) -> None:
        self._items: deque[str] = deque()
        self._lock = threading.Lock()
        self._wake = wake
        self.limit = limit
        self.max_bytes = max_bytes
        self.bytes = 0
        self.dropped = 0          # since the consumer last took (it tells its client)
        self.total_dropped = 0
        self.last_take = time.monotonic()

    def put(self, text: str) -> bool:
        """Queue one frame; False when the consumer is stalled and should be cut loose."""
        size = text_bytes(text)
        overflowed = False
        with self._lock:
            while self._items and (len(self._items) >= self.limit or self.bytes + size > self.max_bytes):
                self.bytes -= text_bytes(self._items.popleft())
                self.dropped += 1
                self.total_dropped += 1
                overflowed = True
            self._items.append(text)
            self.bytes += size
            stalled = overflowed and time.monotonic() - self.last_take > SLOW_S
        self._wake()
        return not stalled

    def take(self) -> tuple[list[str], int]:
        """Everything queued, and how many frames were dropped before it."""
        with self._lock:
            items, self._items = list(self._items), deque()
            dropped, self.dropped = self.dropped, 0
            self.bytes = 0
            self.last_take = time.monotonic()
        return items, dropped

    def __len__(self) -> int:
        return len(self._items)


@dataclass(eq=False)
class Peer:
    """One member of a session.

    ``deliver(text, msg)`` hands it a frame (the JSON text, and the parsed message when there is
    one); it must not block. ``close(code, reason)`` ends its connection; the transport then calls
    :meth:`Hub.leave`.
    """

    role: str                       # "app" or "agent"
    id: str
    deliver: Deliver
    close: Callable[[int, str], None] = lambda code, reason: None
    info: dict[str, Any] = field(default_factory=dict)   # what GET /debug/sessions shows
    outbox: Outbox | None = None
    connected_at: float = field(default_factory=time.time)

    def describe(self) -> dict[str, Any]:
        out = {("appId" if self.role == "app" else "agentId"): self.id,
               "connectedSince": _iso(self.connected_at), **self.info}
        if self.outbox is not None:
            out["queued"] = len(self.outbox)
            out["dropped"] = self.outbox.total_dropped
        return out


def queued_peer(role: str, peer_id: str, wake: Callable[[], None], close: Callable[[int, str], None],
                info: dict[str, Any] | None = None, *, max_bytes: int = SESSION_BYTES) -> Peer:
    """A peer whose frames wait in an outbox (of at most ``max_bytes``) for its own thread to send
    (a WebSocket, the CLI)."""
    box = Outbox(wake, max_bytes=max_bytes)
    peer = Peer(role, peer_id, lambda text, msg: None, close, info or {}, box)

    def deliver(text: str, msg: dict[str, Any] | None) -> None:
        if not box.put(text):
            log.warning("debug: %s %s takes nothing and has lost %d messages; cutting it loose",
                        role, peer_id, box.total_dropped)
            close(1008, "too slow: the outbox overflowed")

    peer.deliver = deliver
    return peer


class Session:
    """One room: its apps and agents, what routes their messages, and the record SSE reads.

    The record holds at most ``max_messages`` messages and ``max_bytes`` bytes of them
    (:func:`text_bytes` each, plus ``ENTRY_OVERHEAD``); past either, the oldest go, and a subscriber
    resuming before them is told how many it missed.
    """

    def __init__(self, session_id: str, *, tab_id: str | None = None, max_bytes: int = SESSION_BYTES,
                 max_messages: int = HISTORY_LIMIT) -> None:
        self.id = session_id
        self.tab_id = tab_id            # set when the CDP side of a tab is this session's app
        self.created_at = time.time()
        self.apps: dict[str, Peer] = {}
        self.agents: dict[str, Peer] = {}
        # appId -> its latest hello, capabilities and navigation frames, for agents that join later
        self.greetings: dict[str, dict[str, str]] = {}
        # requestId -> who gets its answer, whether that is an agent (who sees data replies anyway),
        # and the command's type
        self.pending: OrderedDict[str, tuple[Deliver, bool, str]] = OrderedDict()
        self.messages = 0
        self.invalid = 0
        self.ended = False
        self._lock = threading.Lock()
        # Server-Sent Events: the last messages with their ids, and a condition to wait for more.
        self.history: deque[tuple[int, str, str]] = deque()
        self.history_bytes = 0
        self.max_bytes = max_bytes
        self.max_messages = max_messages
        self.too_large = 0              # frames over max_bytes, recorded as a notice in their place
        self.last_event_id = 0
        self.changed = threading.Condition(self._lock)

    # --- membership

    def members(self, role: str) -> list[Peer]:
        with self._lock:
            return list((self.apps if role == "app" else self.agents).values())

    def describe(self) -> dict[str, Any]:
        with self._lock:
            apps, agents = list(self.apps.values()), list(self.agents.values())
        dropped = sum(p.outbox.total_dropped for p in apps + agents if p.outbox is not None)
        out = {"sessionId": self.id, "createdAt": _iso(self.created_at),
               "apps": [p.describe() for p in apps], "agents": [p.describe() for p in agents],
               "messages": self.messages, "dropped": dropped, "invalid": self.invalid,
               "retained": len(self.history), "retainedBytes": self.history_bytes, "maxBytes": self.max_bytes}
        if self.too_large:
            out["tooLarge"] = self.too_large
        if self.tab_id:
            out["tabId"] = self.tab_id
        return out

    # --- the SSE record

    def record(self, kind: str, text: str) -> None:
        """Keep one message for SSE subscribers, the oldest going first past the budget.

        A message larger than the whole budget is not kept: a ``dropped`` notice naming its type and
        size takes its id, so a subscriber sees that something was there (the peers connected when it
        came were handed it whole).
        """
        size = text_bytes(text) + ENTRY_OVERHEAD
        too_large = size > self.max_bytes
        if too_large:
            notice = protocol.envelope(self.id, "dropped", origin="server", count=1, messageType=kind,
                                       bytes=size - ENTRY_OVERHEAD, reason="larger than debug.maxSessionBytes")
            text = dumps(notice)
            size = text_bytes(text) + ENTRY_OVERHEAD
        with self.changed:
            self.too_large += too_large
            self.last_event_id += 1
            self.history.append((self.last_event_id, kind, text))
            self.history_bytes += size
            while len(self.history) > self.max_messages or self.history_bytes > self.max_bytes:
                _, _, old = self.history.popleft()
                self.history_bytes -= text_bytes(old) + ENTRY_OVERHEAD
            self.changed.notify_all()

    def since(self, event_id: int) -> tuple[list[tuple[int, str, str]], int]:
        """Messages after ``event_id`` still held, and how many after it were already dropped."""
        with self._lock:
            held = [h for h in self.history if h[0] > event_id]
            first = held[0][0] if held else self.last_event_id + 1
        return held, max(0, first - event_id - 1)

    def wait_after(self, event_id: int, timeout_s: float) -> None:
        with self.changed:
            if self.last_event_id <= event_id and not self.ended:
                self.changed.wait(timeout_s)


class TooManySessions(Exception):
    """The process holds MAX_SESSIONS sessions already."""


class Hub:
    """Every debug session of this process (and the cap on long-lived connections it ends with them).

    With a ``store`` file, the ids of sessions made by ``POST /debug/sessions`` outlive a restart:
    a page holding one reconnects (the SDKs retry with backoff) and is back in its session. The
    file is written atomically, 0600: each id is a capability.
    """

    def __init__(self, *, max_connections: int = 16, strict_sessions: bool = True,
                 store: Path | None = None, max_session_bytes: int = SESSION_BYTES,
                 max_frame_bytes: int = FRAME_BYTES) -> None:
        self.limiter = Limiter(max_connections)   # the app's cap, installed by init_sockets
        self.max_session_bytes = max_session_bytes
        self.outbox_bytes = outbox_bytes(max_session_bytes, max_frame_bytes)   # for queued_peer
        # True: an unknown session id is refused (the bridge hands ids out). False: the standalone
        # command's one session, where a wrong id is closed with 4000 as by the original.
        self.strict_sessions = strict_sessions
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self.closing = False
        self.store = store
        for sid, created_at in self._load().items():
            self._sessions[sid] = Session(sid, max_bytes=max_session_bytes)
            self._sessions[sid].created_at = created_at

    # --- sessions

    def create(self, session_id: str | None = None, *, tab_id: str | None = None) -> Session:
        """A new session (or the named one); TooManySessions past MAX_SESSIONS."""
        with self._lock:
            sid = session_id or new_session_id()
            session = self._sessions.get(sid)
            if session is None:
                if len(self._sessions) >= MAX_SESSIONS:
                    raise TooManySessions(f"{MAX_SESSIONS} debug sessions are open; delete one first")
                session = self._sessions[sid] = Session(sid, tab_id=tab_id, max_bytes=self.max_session_bytes)
                if tab_id is None:
                    self._save()
            elif tab_id:
                session.tab_id = tab_id
            return session

    def get(self, session_id: str) -> Session | None:
        with self._lock:
            return self._sessions.get(session_id)

    def for_tab(self, tab_id: str) -> Session | None:
        with self._lock:
            return next((s for s in self._sessions.values() if s.tab_id == tab_id), None)

    def sessions(self) -> list[Session]:
        with self._lock:
            return list(self._sessions.values())

    def delete(self, session_id: str) -> bool:
        with self._lock:
            session = self._sessions.pop(session_id, None)
            if session is not None and session.tab_id is None:
                self._save()
        if session is None:
            return False
        self._end(session, 1000, "session ended")
        return True

    def close_all(self) -> None:
        """Shutdown: every connection closes and every stream ends, now."""
        self.closing = True
        for session in self.sessions():
            self._end(session, 1001, "server shutting down")
        self.limiter.close_all()

    def _end(self, session: Session, code: int, reason: str) -> None:
        with session.changed:
            session.ended = True
            session.changed.notify_all()
        for peer in session.members("app") + session.members("agent"):
            peer.close(code, reason)

    # --- the ids that outlive a restart (sessions of tabs end with their tabs, so are not kept)

    def _load(self) -> dict[str, float]:
        if self.store is None or not self.store.exists():
            return {}
        try:
            saved = json.loads(self.store.read_text(encoding="utf-8"))
            return {str(k): float(v) for k, v in saved["sessions"].items()}
        except (OSError, ValueError, KeyError, TypeError, AttributeError) as e:
            log.warning("debug: ignoring unreadable session store %s (%s)", self.store, e)
            return {}

    def _save(self) -> None:
        """Called with the lock held."""
        if self.store is None:
            return
        kept = {sid: s.created_at for sid, s in self._sessions.items() if s.tab_id is None}
        try:
            write_atomic(self.store, json.dumps({"sessions": kept}).encode())
        except OSError as e:  # the sessions still work; they just will not survive a restart
            log.warning("debug: could not save the session ids (%s)", e.strerror)

    @property
    def connections(self) -> int:
        """Open long-lived connections (WebSockets and streams), for a caller waiting for them to end."""
        return self.limiter.connections

    # --- joining and leaving

    def join(self, session: Session, peer: Peer) -> None:
        with session._lock:
            group = session.apps if peer.role == "app" else session.agents
            old = group.get(peer.id)
            group[peer.id] = peer
            # Every app already there (joined, whether or not it has said hello yet), with what it said.
            greetings = [(app_id, list(session.greetings.get(app_id, {}).values()))
                         for app_id in session.apps if app_id != peer.id]
        if old is not None:   # the same appId again (a reload that raced its own disconnect)
            old.close(1000, "replaced by a new connection")
        self._announce(session, peer, f"{peer.role}_connected")
        if peer.role == "agent":
            # A late agent learns who is there as if it had seen them join.
            for app_id, frames in greetings:
                event = protocol.connection_event(session.id, "app_connected", appId=app_id,
                                                  **self._counts(session))
                peer.deliver(dumps(event), event)
                for text in frames:
                    peer.deliver(text, None)

    def leave(self, session: Session, peer: Peer) -> None:
        with session._lock:
            group = session.apps if peer.role == "app" else session.agents
            if group.get(peer.id) is not peer:
                return
            del group[peer.id]
            if peer.role == "app":
                session.greetings.pop(peer.id, None)
            else:
                for rid in [rid for rid, (to, _, _) in session.pending.items() if to == peer.deliver]:
                    del session.pending[rid]
        self._announce(session, peer, f"{peer.role}_disconnected")

    def _counts(self, session: Session) -> dict[str, Any]:
        with session._lock:
            return {"connectedApps": list(session.apps), "connectedAgents": len(session.agents)}

    def _announce(self, session: Session, peer: Peer, event: str) -> None:
        fields: dict[str, Any] = {"appId": peer.id} if peer.role == "app" else {"agentId": peer.id}
        msg = protocol.connection_event(session.id, event, **fields, **self._counts(session))
        text = dumps(msg)
        session.record("connection_event", text)
        for other in session.members("app") + session.members("agent"):
            if other is not peer:
                other.deliver(text, msg)

    # --- messages

    def from_app(self, session: Session, peer: Peer, text: str | None = None,
                 msg: dict[str, Any] | None = None) -> None:
        """A frame from an app: telemetry to every agent, a command's result to its sender."""
        if msg is None:
            try:
                msg = protocol.parse_app_frame(text or "")
            except protocol.FrameError as e:
                if SDK_ECHO not in (text or ""):
                    self._invalid(session, peer, e.reason)
                return
        elif text is None:
            text = dumps(msg)
        assert text is not None
        session.messages += 1
        kind = msg["type"]
        if kind in GREETINGS:
            self._greeting(session, peer, kind, text, msg)
        session.record(kind, text)
        request_id = msg.get("requestId")
        if kind == "command_result" or kind in DATA_REPLIES:
            with session._lock:
                if request_id is None and kind in DATA_REPLIES:
                    # The npm SDK answers request_state without the requestId: it goes to the
                    # oldest REST caller waiting for that command (agents get it as telemetry).
                    request_id = next((rid for rid, (_, to_agent, wanted) in session.pending.items()
                                       if not to_agent and wanted == DATA_REPLIES[kind]), None)
                reply_to, to_agent, _ = session.pending.pop(request_id or "", (None, False, ""))
            if reply_to is not None and kind == "command_result":
                reply_to(text, msg)
                return
            if reply_to is not None and not to_agent:
                reply_to(text, msg)   # a REST caller waiting for its data reply; agents see it too
        for agent in session.members("agent"):
            agent.deliver(text, msg)

    def _greeting(self, session: Session, peer: Peer, kind: str, text: str, msg: dict[str, Any]) -> None:
        with session._lock:
            frames = session.greetings.setdefault(peer.id, {})
            if kind == "hello":   # a new page: what the old one said no longer holds
                frames.clear()
                peer.info.update({k: msg[k] for k in ("appName", "appVersion", "url") if k in msg})
            elif kind == "navigation":
                peer.info["url"] = msg.get("url", peer.info.get("url"))
            frames[kind] = text

    def from_agent(self, session: Session, peer: Peer, text: str) -> None:
        """A command from an agent: to every app of the session; its result comes back to this agent."""
        try:
            msg = protocol.parse_agent_frame(text)
        except protocol.FrameError as e:
            if e.request_id is None and e.type is None:
                self._invalid(session, peer, e.reason)
                return
            session.invalid += 1
            answer = protocol.command_result(session.id, e.request_id or "", e.type or "", success=False,
                                             duration_ms=0, error_code="INVALID_COMMAND", message=e.reason)
            peer.deliver(dumps(answer), answer)
            return
        self.command(session, msg, text, peer.deliver, to_agent=True)

    def command(self, session: Session, msg: dict[str, Any], text: str | None, reply_to: Deliver, *,
                to_agent: bool = False) -> None:
        """Send a parsed command to the session's apps; ``reply_to`` gets its command_result."""
        text = text or dumps(msg)
        session.messages += 1
        apps = session.members("app")
        if not apps:
            answer = protocol.command_result(
                session.id, msg["requestId"], msg["type"], success=False, duration_ms=0,
                error_code="UNKNOWN_ERROR", message=f"no app is connected to session {session.id}")
            answer["noApp"] = True
            reply_to(dumps(answer), answer)
            return
        with session._lock:
            session.pending[msg["requestId"]] = (reply_to, to_agent, msg["type"])
            while len(session.pending) > PENDING_LIMIT:
                session.pending.popitem(last=False)
        session.record("command", text)
        for app in apps:
            app.deliver(text, msg)

    def _invalid(self, session: Session, peer: Peer, reason: str) -> None:
        session.invalid += 1
        if session.invalid <= INVALID_LOGGED or session.invalid % 1000 == 0:
            log.info("debug: session %s: dropped a frame from %s %s (%s); %d so far",
                     session.id[:6], peer.role, peer.id, reason, session.invalid)

    def stream(self, session: Session, last_id: int, types: frozenset[str] | None,
               heartbeat_s: float) -> Iterator[tuple[int | None, str]]:
        """(event id, text) pairs for an SSE subscriber, from after ``last_id`` until the session ends.

        A (None, "") pair is a heartbeat; a "dropped" notice leads when the subscriber fell behind
        the held history.
        """
        while True:
            held, lost = session.since(last_id)
            if lost and last_id:
                yield None, dumps(protocol.envelope(session.id, "dropped", origin="server", count=lost))
            for event_id, kind, text in held:
                last_id = event_id
                if types is None or kind in types:
                    yield event_id, text
            if session.ended or self.closing:
                return
            if not held:
                session.wait_after(last_id, heartbeat_s)
                if session.since(last_id)[0] == [] and not session.ended:
                    yield None, ""


def dumps(msg: dict[str, Any]) -> str:
    return json.dumps(msg, separators=(",", ":"), ensure_ascii=False)


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(ts))
