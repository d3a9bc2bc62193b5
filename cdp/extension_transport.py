"""CDP through our extension's ``chrome.debugger``: a ``Transport`` that looks like a browser websocket.

The connection above sends browser-level and session-level CDP messages as if it talked to Chrome's
browser endpoint. The extension offers less: tabs (``tabs.*``) and a debugger per tab
(``debugger.attach/detach/send``). So this transport

- emulates the browser-level methods the client uses (Browser.getVersion, Target.setDiscoverTargets
  and the target events, Target.getTargets, createTarget, attachToTarget with flatten, closeTarget,
  detachFromTarget, activateTarget, Browser.close: which only lets go of the tabs: the person's
  Chrome keeps running), and answers any other browser-level method with a CDP error, not silence;
- forwards session-level messages as ``debugger.send`` on the session's tab, and maps the events of
  each tab back to its session. A tab's session id is ours (``ext-<tabId>-<n>``: a fresh one per
  attach, so nothing of an old session leaks into a new one); child sessions (out-of-process
  iframes, workers auto-attached inside a tab) keep Chrome's own ids, which are unique.

Target ids are ``tab-<tabId>``: stable for the tab's life, known the moment a tab exists (Chrome's
own target id would need one more lookup per tab) and readable in the API's answers.

When the person (the debugger banner's Cancel) or anything but us detaches the debugger, the
session's calls in flight fail with a ``DEBUGGER_DETACHED`` error naming the reason, the session
ends, and the tab is not attached again behind the person's back: the next attach fails the same
way. When the extension goes away, ``receive`` ends and the connection fails every pending call.
"""
from __future__ import annotations

import itertools
import json
import logging
import queue
import re
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any, Protocol

from .transport import TransportClosed

log = logging.getLogger(__name__)

DEBUGGER_DETACHED = -32050   # our code: the debugger was detached from the tab (not by us)
METHOD_NOT_FOUND = -32601    # Chrome's code for an unknown method
SERVER_ERROR = -32000        # Chrome's code for a failed command
OP_TIMEOUT_S = 30.0
WAKE_S = 1.0                 # receive looks at the closed flag at least this often
ATTACH_PREFIX = "ext-"


class RelayClosed(Exception):
    """The extension's connection ended."""


class RelayLink(Protocol):
    """The connected extension, as the bridge's relay offers it (``app/extension/relay.py``)."""

    user_agent: str

    def request(self, op: str, args: dict[str, Any] | None = None) -> Future: ...

    def subscribe(self, on_event: Callable[[dict[str, Any]], None], on_close: Callable[[str], None]) -> None: ...

    def unsubscribe(self, on_event: Callable[[dict[str, Any]], None]) -> None: ...


def target_id(tab_id: int) -> str:
    return f"tab-{tab_id}"


def tab_id_of(target: str) -> int | None:
    m = re.fullmatch(r"tab-(\d+)", target or "")
    return int(m.group(1)) if m else None


class _Forwarded:
    """A session-level call in flight: answered by the extension, or failed by a detach first."""

    __slots__ = ("call_id", "session_id", "tab_id", "answered")

    def __init__(self, call_id: int, session_id: str, tab_id: int) -> None:
        self.call_id = call_id
        self.session_id = session_id
        self.tab_id = tab_id
        self.answered = False


class ExtensionTransport:
    """A ``Transport`` over the extension relay (see the module's docstring)."""

    def __init__(self, link: RelayLink, *, op_timeout_s: float = OP_TIMEOUT_S) -> None:
        self._link = link
        self._op_timeout_s = op_timeout_s
        self._inbox: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()
        self._closed: str | None = None
        self._discover = False
        self._attach_seq = itertools.count(1)
        self._tabs: dict[int, dict[str, Any]] = {}          # tabId -> TargetInfo
        self._tab_session: dict[int, str] = {}              # tabId -> our session for it
        self._sessions: dict[str, tuple[int, str | None]] = {}  # session -> (tabId, Chrome's child session or None)
        self._refused: dict[int, str] = {}                  # tabId -> how its debugger was detached
        self._inflight: dict[int, _Forwarded] = {}          # call id -> forwarded call
        # Browser-level methods wait on several ops: they run here, never on the relay's reader thread.
        self._pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="ext-transport")
        link.subscribe(self._on_event, self._on_close)

    # --- Transport -----------------------------------------------------------------------------
    def send(self, text: str) -> None:
        """Take one CDP message from the connection; its answer comes back through ``receive``."""
        if self._closed is not None:
            raise TransportClosed(self._closed)
        msg = json.loads(text)
        call_id, method, params = msg["id"], msg.get("method", ""), msg.get("params") or {}
        session_id = msg.get("sessionId")
        if session_id:
            self._forward(call_id, session_id, method, params)
            return
        try:
            self._pool.submit(self._browser_call, call_id, method, params)
        except RuntimeError:  # the pool is shut: we are closing
            raise TransportClosed("the extension relay is closed") from None

    def receive(self) -> str:
        """The next message for the connection; raises TransportClosed once the relay has ended."""
        while True:
            try:
                item = self._inbox.get(timeout=WAKE_S)
            except queue.Empty:
                if self._closed is not None and self._inbox.empty():
                    raise TransportClosed(self._closed) from None
                continue
            if item is None:
                raise TransportClosed(self._closed or "closed")
            return item

    def close(self) -> None:
        """Let go of the tabs (the person's Chrome keeps running) and end ``receive``."""
        with self._lock:
            if self._closed is not None:
                return
            self._closed = "the extension relay is closed"
            tabs = list(self._tab_session)
            self._tab_session.clear()
            self._sessions.clear()
        self._link.unsubscribe(self._on_event)
        for tab in tabs:
            self._link.request("debugger.detach", {"tabId": tab})  # not waited: the socket may be gone
        self._inbox.put(None)
        self._pool.shutdown(wait=False, cancel_futures=True)

    # --- output --------------------------------------------------------------------------------
    def _emit(self, msg: dict[str, Any]) -> None:
        self._inbox.put(json.dumps(msg, separators=(",", ":")))

    def _reply(self, call_id: int, result: Any = None, session_id: str | None = None) -> None:
        msg: dict[str, Any] = {"id": call_id, "result": result if isinstance(result, dict) else {}}
        if session_id:
            msg["sessionId"] = session_id
        self._emit(msg)

    def _error(self, call_id: int, message: str, code: int = SERVER_ERROR, session_id: str | None = None) -> None:
        msg: dict[str, Any] = {"id": call_id, "error": {"code": code, "message": message}}
        if session_id:
            msg["sessionId"] = session_id
        self._emit(msg)

    def _event(self, method: str, params: dict[str, Any], session_id: str | None = None) -> None:
        msg: dict[str, Any] = {"method": method, "params": params}
        if session_id:
            msg["sessionId"] = session_id
        self._emit(msg)

    # --- session level: forwarded ---------------------------------------------------------------
    def _forward(self, call_id: int, session_id: str, method: str, params: dict[str, Any]) -> None:
        with self._lock:
            where = self._sessions.get(session_id)
            if where is not None:
                call = _Forwarded(call_id, session_id, where[0])
                self._inflight[call_id] = call
        if where is None:
            self._error(call_id, f"Session with given id not found: {session_id}", session_id=session_id)
            return
        tab, child = where
        args: dict[str, Any] = {"tabId": tab, "method": method, "params": params}
        if child:
            args["sessionId"] = child
        self._link.request("debugger.send", args).add_done_callback(lambda f: self._forwarded(call, f))

    def _forwarded(self, call: _Forwarded, fut: Future) -> None:
        with self._lock:
            self._inflight.pop(call.call_id, None)
            if call.answered or self._closed is not None:  # a detach answered it, or the connection fails it
                return
            call.answered = True
        exc = fut.exception()
        if exc is None:
            self._reply(call.call_id, fut.result(), call.session_id)
        else:
            self._error(call.call_id, str(exc), session_id=call.session_id)

    # --- browser level: emulated ----------------------------------------------------------------
    def _op(self, op: str, **args: Any) -> Any:
        fut = self._link.request(op, args)
        try:
            return fut.result(timeout=self._op_timeout_s)
        except FutureTimeout:
            raise RuntimeError(f"the extension did not answer {op} within {self._op_timeout_s:.0f} s") from None

    def _browser_call(self, call_id: int, method: str, params: dict[str, Any]) -> None:
        handler = _BROWSER_METHODS.get(method)
        if handler is None:
            self._error(call_id, f"'{method}' wasn't found (the extension relay does not offer it)", METHOD_NOT_FOUND)
            return
        try:
            self._reply(call_id, handler(self, params))
        except _Refused as exc:
            self._error(call_id, str(exc), DEBUGGER_DETACHED)
        except Exception as exc:  # an op's error, or the relay gone: the caller gets a CDP error
            self._error(call_id, str(exc) or type(exc).__name__)

    def _get_version(self, params: dict[str, Any]) -> dict[str, Any]:
        ua = getattr(self._link, "user_agent", "") or ""
        m = re.search(r"(?:Chrome|Chromium)/([\d.]+)", ua)
        return {"protocolVersion": "1.3", "product": f"Chrome/{m.group(1) if m else '?'}", "revision": "",
                "userAgent": ua, "jsVersion": ""}

    def _set_discover(self, params: dict[str, Any]) -> dict[str, Any]:
        infos = self._refresh()
        with self._lock:
            was, self._discover = self._discover, bool(params.get("discover"))
            announce = self._discover and not was
        if announce:
            for info in infos:
                self._event("Target.targetCreated", {"targetInfo": info})
        return {}

    def _get_targets(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"targetInfos": self._refresh()}

    def _create_target(self, params: dict[str, Any]) -> dict[str, Any]:
        tab = self._op("tabs.create", url=params.get("url") or "about:blank",
                       active=not params.get("background", False))
        self._learn(tab)
        return {"targetId": target_id(tab["tabId"])}

    def _attach(self, params: dict[str, Any]) -> dict[str, Any]:
        tab = self._tab_of(params.get("targetId", ""))
        with self._lock:
            refused = self._refused.get(tab)
            existing = self._tab_session.get(tab)
        if refused is not None:
            raise _Refused(f"the debugger was detached from tab {target_id(tab)} ({refused}); Pinchtab does not "
                           "attach again on its own: open a new tab, or reconnect the extension")
        if existing is not None:  # one session per tab: chrome.debugger allows one attach per extension
            return {"sessionId": existing}
        self._op("debugger.attach", tabId=tab)
        session = f"{ATTACH_PREFIX}{tab}-{next(self._attach_seq)}"
        with self._lock:
            self._tab_session[tab] = session
            self._sessions[session] = (tab, None)
            info = self._tabs.get(tab)
            if info is not None:
                info["attached"] = True
        return {"sessionId": session}

    def _detach(self, params: dict[str, Any]) -> dict[str, Any]:
        session = params.get("sessionId", "")
        with self._lock:
            where = self._sessions.get(session)
        if where is None:
            raise RuntimeError(f"No session with given id: {session}")
        tab, child = where
        if child:  # a child session: its parent detaches it
            self._op("debugger.send", tabId=tab, method="Target.detachFromTarget", params={"sessionId": child})
            return {}
        self._end_session(tab)
        self._op("debugger.detach", tabId=tab)
        return {}

    def _close_target(self, params: dict[str, Any]) -> dict[str, Any]:
        self._op("tabs.close", tabId=self._tab_of(params.get("targetId", "")))
        return {"success": True}

    def _activate(self, params: dict[str, Any]) -> dict[str, Any]:
        self._op("tabs.activate", tabId=self._tab_of(params.get("targetId", "")))
        return {}

    def _browser_close(self, params: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            tabs = list(self._tab_session)
        for tab in tabs:
            self._end_session(tab)
            self._op("debugger.detach", tabId=tab)
        return {}

    # --- bookkeeping ---------------------------------------------------------------------------
    def _tab_of(self, target: str) -> int:
        tab = tab_id_of(target)
        with self._lock:
            known = tab is not None and tab in self._tabs
        if tab is None or not known:
            raise RuntimeError(f"No target with given id found: {target}")
        return tab

    def _info(self, tab: dict[str, Any]) -> dict[str, Any]:
        tid = int(tab["tabId"])
        return {"targetId": target_id(tid), "type": "page", "title": tab.get("title", ""),
                "url": tab.get("url", ""), "attached": tid in self._tab_session, "canAccessOpener": False,
                "browserContextId": "extension", "agentTab": bool(tab.get("agentTab"))}

    def _refresh(self) -> list[dict[str, Any]]:
        """Ask for the tabs again; returns their TargetInfos (and updates the table)."""
        tabs = (self._op("tabs.list") or {}).get("tabs", [])
        with self._lock:
            self._tabs = {int(t["tabId"]): self._info(t) for t in tabs}
            return [dict(i) for i in self._tabs.values()]

    def _learn(self, tab: dict[str, Any]) -> None:
        """A tab the extension told us about: announce it if new, or its change."""
        with self._lock:
            info = self._info(tab)
            tid = int(tab["tabId"])
            old = self._tabs.get(tid)
            if old is not None and not tab.get("agentTab") and old.get("agentTab"):
                info["agentTab"] = True  # a tab we opened stays ours even if it leaves the group
            self._tabs[tid] = info
            discover = self._discover
        if discover:
            method = "Target.targetCreated" if old is None else "Target.targetInfoChanged"
            self._event(method, {"targetInfo": dict(info)})

    def _end_session(self, tab: int, reason: str | None = None) -> str | None:
        """Forget the session of ``tab`` (and its children); fail its calls in flight when ``reason``."""
        with self._lock:
            session = self._tab_session.pop(tab, None)
            for s in [s for s, (t, _) in self._sessions.items() if t == tab]:
                self._sessions.pop(s, None)
            doomed: list[_Forwarded] = []
            if reason is not None:
                for call in list(self._inflight.values()):
                    if call.tab_id == tab and not call.answered:
                        call.answered = True
                        doomed.append(call)
                        self._inflight.pop(call.call_id, None)
            info = self._tabs.get(tab)
            if info is not None:
                info["attached"] = False
        for call in doomed:
            self._error(call.call_id, f"the debugger was detached from tab {target_id(tab)} ({reason})",
                        DEBUGGER_DETACHED, session_id=call.session_id)
        return session

    # --- events from the extension (the relay's reader thread: only queue) ----------------------
    def _on_event(self, msg: dict[str, Any]) -> None:
        kind = msg.get("event")
        try:
            tab = int(msg.get("tabId"))  # type: ignore[arg-type]
        except (TypeError, ValueError):
            return
        if kind == "cdp":
            self._on_cdp(tab, msg)
        elif kind == "detached":
            self._on_detached(tab, str(msg.get("reason") or "unknown"))
        elif kind == "tabRemoved":
            self._on_tab_removed(tab)
        elif kind == "tabUpdated":
            self._learn(msg)

    def _on_cdp(self, tab: int, msg: dict[str, Any]) -> None:
        method = msg.get("method", "")
        params = msg.get("params") or {}
        child = msg.get("sessionId")
        with self._lock:
            session = child if child else self._tab_session.get(tab)
            if session is None or (child and child not in self._sessions):
                return  # a tab we are not attached to, or a child of a session already gone
            if method == "Target.attachedToTarget" and params.get("sessionId"):
                self._sessions[params["sessionId"]] = (tab, params["sessionId"])
            elif method == "Target.detachedFromTarget" and params.get("sessionId"):
                self._sessions.pop(params["sessionId"], None)
        self._event(method, params, session)

    def _on_detached(self, tab: int, reason: str) -> None:
        if reason != "target_closed":
            with self._lock:
                self._refused[tab] = reason
            log.warning("extension relay: the debugger was detached from tab %s (%s)", tab, reason)
        session = self._end_session(tab, None if reason == "target_closed" else reason)
        if session is not None:
            self._event("Target.detachedFromTarget", {"sessionId": session, "targetId": target_id(tab),
                                                      "reason": reason})

    def _on_tab_removed(self, tab: int) -> None:
        session = self._end_session(tab)  # its calls fail as a closed target's (the connection sees the detach)
        with self._lock:
            known = self._tabs.pop(tab, None) is not None
            self._refused.pop(tab, None)
            discover = self._discover
        if session is not None:
            self._event("Target.detachedFromTarget", {"sessionId": session, "targetId": target_id(tab)})
        if known and discover:
            self._event("Target.targetDestroyed", {"targetId": target_id(tab)})

    def _on_close(self, why: str) -> None:
        with self._lock:
            if self._closed is not None:
                return
            self._closed = f"the extension went away: {why}"
        self._inbox.put(None)
        self._pool.shutdown(wait=False, cancel_futures=True)


class _Refused(Exception):
    """The tab's debugger was detached by someone else: we do not attach again."""


_BROWSER_METHODS: dict[str, Callable[[ExtensionTransport, dict[str, Any]], dict[str, Any]]] = {
    "Browser.getVersion": ExtensionTransport._get_version,
    "Target.setDiscoverTargets": ExtensionTransport._set_discover,
    "Target.getTargets": ExtensionTransport._get_targets,
    "Target.createTarget": ExtensionTransport._create_target,
    "Target.attachToTarget": ExtensionTransport._attach,
    "Target.detachFromTarget": ExtensionTransport._detach,
    "Target.closeTarget": ExtensionTransport._close_target,
    "Target.activateTarget": ExtensionTransport._activate,
    "Browser.close": ExtensionTransport._browser_close,
}
