"""Unit tests for cdp.connection.Connection's message dispatch and session bookkeeping.

No socket: the connection runs over an in-memory transport on which the test plays the browser.
Calls go out through ``send``; messages come in through the transport, and ``feed`` returns once
the reader thread has handled them, so the test can look at the outcome at once.
"""
from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from typing import Any

import pytest

from cdp import connection as connection_mod
from cdp.connection import MAX_UNCLAIMED, Connection
from cdp.errors import BrowserGone, CDPError, TargetClosed, TargetCrashed
from cdp.transport import TransportClosed

FEED_TIMEOUT_S = 5.0


class FakeTransport:
    """A ``Transport`` in memory: records what the connection sends, hands its reader what the test feeds."""

    def __init__(self) -> None:
        self.sent: list[str] = []
        self.closed = False
        self.refuse: Exception | None = None  # raised by the next sends, as a dead socket would
        self._inbox: deque[str | bytes | Exception] = deque()
        self._idle = False  # the reader is waiting in receive() with nothing left to take
        self._cond = threading.Condition()

    # --- the connection's side ---------------------------------------------------------------
    def send(self, text: str) -> None:
        with self._cond:
            if self.refuse is not None:
                raise self.refuse
            if self.closed:
                raise TransportClosed("closed")
            self.sent.append(text)

    def receive(self) -> str | bytes:
        with self._cond:
            self._idle = True
            self._cond.notify_all()
            self._cond.wait_for(lambda: self._inbox or self.closed)  # close() wakes it
            self._idle = False
            if not self._inbox:
                raise TransportClosed("closed")
            item = self._inbox.popleft()
        if isinstance(item, Exception):
            raise item
        return item

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    # --- the browser's side (the test) ---------------------------------------------------------
    def feed(self, *msgs: dict[str, Any]) -> None:
        """Deliver messages as the browser would and return once the reader has handled them all."""
        self.feed_raw(*(json.dumps(m) for m in msgs))

    def feed_raw(self, *items: str | bytes | Exception) -> None:
        """Deliver raw messages (an exception: receive raises it) and wait until the reader asks for more."""
        with self._cond:
            self._inbox.extend(items)
            self._cond.notify_all()
            handled = self._cond.wait_for(lambda: self._idle and not self._inbox, FEED_TIMEOUT_S)
        assert handled, "the reader did not come back for more within the deadline"

    def end(self, error: Exception | None = None) -> None:
        """The browser side goes away: receive raises ``error``, or TransportClosed when None."""
        with self._cond:
            if error is None:
                self.closed = True
            else:
                self._inbox.append(error)
            self._cond.notify_all()


class FakeSink:
    """Records what the connection hands it."""

    def __init__(self, name: str = "sink") -> None:
        self.name = name
        self.delivered: list[tuple[str, dict[str, Any]]] = []
        self.failed: list[Exception] = []

    def deliver(self, session_id: str, msg: dict[str, Any]) -> None:
        self.delivered.append((session_id, msg))

    def fail(self, exc: Exception) -> None:
        self.failed.append(exc)

    def methods(self) -> list[str]:
        return [m.get("method", "") for _, m in self.delivered]


MakeConn = Callable[..., tuple[Connection, FakeTransport]]


@pytest.fixture
def make_conn() -> Iterator[MakeConn]:
    """Builds connections over fake transports; closes them (and so ends their readers) afterwards."""
    made: list[Connection] = []

    def make(browser_sink: FakeSink | None = None) -> tuple[Connection, FakeTransport]:
        wire = FakeTransport()
        conn = Connection(wire, browser_sink=browser_sink)
        made.append(conn)
        return conn, wire

    yield make
    for conn in made:
        conn.close()


def pend(conn: Connection, session_id: str | None, method: str = "Runtime.evaluate") -> Future:
    """A call in flight: sent, its reply not yet in."""
    return conn.send(method, {}, session_id)


def call_id(fut: Future) -> int:
    """The id a call went out with, which its reply carries."""
    return fut.call_id  # type: ignore[attr-defined]


def event(method: str, session_id: str | None = None, **params: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"method": method, "params": params}
    if session_id is not None:
        msg["sessionId"] = session_id
    return msg


# --- replies -------------------------------------------------------------------------------------
def test_reply_completes_the_future_with_the_same_id_only(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    first = pend(conn, "S1")
    second = pend(conn, "S1")
    wire.feed({"id": call_id(second), "sessionId": "S1", "result": {"value": 42}})
    assert second.result(timeout=0) == {"value": 42}
    assert not first.done()


def test_reply_routes_by_id_not_by_session(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, "S1")
    wire.feed({"id": call_id(fut), "sessionId": "OTHER", "result": {"ok": True}})
    assert fut.result(timeout=0) == {"ok": True}


def test_reply_without_result_completes_with_an_empty_dict(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, None, "Target.activateTarget")
    wire.feed({"id": call_id(fut)})
    assert fut.result(timeout=0) == {}


def test_error_reply_fails_the_future_with_a_cdp_error_naming_the_method(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, "S1", "DOM.resolveNode")
    wire.feed({"id": call_id(fut), "sessionId": "S1",
               "error": {"code": -32000, "message": "No node with given id found"}})
    exc = fut.exception(timeout=0)
    assert isinstance(exc, CDPError)
    assert exc.method == "DOM.resolveNode"
    assert exc.cdp_message == "No node with given id found"
    assert exc.code == -32000
    assert str(exc) == "DOM.resolveNode: No node with given id found"


def test_error_reply_without_message_still_fails_the_future(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, None, "Browser.getVersion")
    wire.feed({"id": call_id(fut), "error": {}})
    exc = fut.exception(timeout=0)
    assert isinstance(exc, CDPError)
    assert exc.cdp_message == "error"
    assert exc.code is None


def test_reply_is_not_handed_to_any_sink(make_conn: MakeConn) -> None:
    browser = FakeSink("browser")
    tab = FakeSink("tab")
    conn, wire = make_conn(browser)
    conn.claim("S1", tab)
    on_tab = pend(conn, "S1")
    on_browser = pend(conn, None)
    wire.feed({"id": call_id(on_tab), "sessionId": "S1", "result": {}})
    wire.feed({"id": call_id(on_browser), "result": {}})
    assert tab.delivered == []
    assert browser.delivered == []


def test_reply_removes_the_call_from_the_pending_table(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, "S1")
    wire.feed({"id": call_id(fut), "result": {}})
    assert call_id(fut) not in conn._pending


def test_reply_for_a_forgotten_call_is_ignored(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, "S1")
    conn.forget(fut)
    wire.feed({"id": call_id(fut), "sessionId": "S1", "result": {"late": True}})  # must not raise
    assert not fut.done()
    assert conn._pending == {}


def test_reply_for_an_unknown_id_is_ignored_and_leaves_other_calls_pending(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, "S1")
    wire.feed({"id": call_id(fut) + 998, "result": {}})
    assert not fut.done()
    assert call_id(fut) in conn._pending


def test_second_reply_with_the_same_id_is_ignored(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, None)
    wire.feed({"id": call_id(fut), "result": {"n": 1}})
    wire.feed({"id": call_id(fut), "result": {"n": 2}})  # must not raise InvalidStateError
    assert fut.result(timeout=0) == {"n": 1}


# --- events and ownership ------------------------------------------------------------------------
def test_event_on_a_claimed_session_goes_to_its_owner_with_the_session_id(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    tab, other = FakeSink("tab"), FakeSink("other")
    conn.claim("S1", tab)
    conn.claim("S2", other)
    msg = event("Page.loadEventFired", "S1", timestamp=1.0)
    wire.feed(msg)
    assert tab.delivered == [("S1", msg)]
    assert other.delivered == []


def test_browser_level_event_goes_to_the_browser_sink_with_an_empty_session_id(make_conn: MakeConn) -> None:
    browser = FakeSink("browser")
    conn, wire = make_conn(browser)
    tab = FakeSink("tab")
    conn.claim("S1", tab)
    msg = event("Target.targetCreated", targetInfo={"targetId": "T1"})
    wire.feed(msg)
    assert browser.delivered == [("", msg)]
    assert tab.delivered == []


def test_browser_level_event_without_a_browser_sink_is_dropped_quietly(make_conn: MakeConn) -> None:
    conn, wire = make_conn(None)
    wire.feed(event("Target.targetDestroyed", targetId="T1"))
    assert conn._unclaimed == {}


def test_events_for_an_unclaimed_session_are_handed_over_in_order_on_claim(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    msgs = [event(f"Domain.event{i}", "S1", i=i) for i in range(5)]
    for m in msgs:
        wire.feed(m)
    tab = FakeSink("tab")
    conn.claim("S1", tab)
    assert tab.delivered == [("S1", m) for m in msgs]


def test_events_after_claim_follow_the_buffered_ones(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    wire.feed(event("Early.one", "S1"))
    tab = FakeSink()
    conn.claim("S1", tab)
    wire.feed(event("Late.two", "S1"))
    assert tab.methods() == ["Early.one", "Late.two"]


def test_claim_hands_over_only_the_claimed_sessions_buffer(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    wire.feed(event("For.s1", "S1"))
    wire.feed(event("For.s2", "S2"))
    tab = FakeSink()
    conn.claim("S1", tab)
    assert tab.methods() == ["For.s1"]
    later = FakeSink()
    conn.claim("S2", later)
    assert later.methods() == ["For.s2"]


def test_buffer_is_handed_over_once(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    wire.feed(event("Once.only", "S1"))
    first = FakeSink()
    conn.claim("S1", first)
    second = FakeSink()
    conn.claim("S1", second)
    assert first.methods() == ["Once.only"]
    assert second.delivered == []


def test_unclaimed_buffer_is_capped_keeping_the_earliest_messages(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    for i in range(MAX_UNCLAIMED + 25):
        wire.feed(event("Network.dataReceived", "S1", n=i))
    assert len(conn._unclaimed["S1"]) == MAX_UNCLAIMED
    tab = FakeSink()
    conn.claim("S1", tab)
    got = [m["params"]["n"] for _, m in tab.delivered]
    assert got == list(range(MAX_UNCLAIMED))


def test_unclaimed_cap_is_per_session(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    for i in range(MAX_UNCLAIMED + 1):
        wire.feed(event("Spam.event", "NOISY", n=i))
    wire.feed(event("Quiet.event", "QUIET"))
    tab = FakeSink()
    conn.claim("QUIET", tab)
    assert tab.methods() == ["Quiet.event"]


def test_unclaimed_cap_follows_the_module_constant(make_conn: MakeConn, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_mod, "MAX_UNCLAIMED", 3)
    conn, wire = make_conn()
    for i in range(10):
        wire.feed(event("E.e", "S1", n=i))
    tab = FakeSink()
    conn.claim("S1", tab)
    assert [m["params"]["n"] for _, m in tab.delivered] == [0, 1, 2]


def test_release_drops_the_owner_and_the_buffer(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    tab = FakeSink()
    conn.claim("S1", tab)
    conn.release("S1")
    wire.feed(event("After.release", "S1"))
    assert tab.delivered == []
    conn.release("S1")  # the buffered message goes too
    newcomer = FakeSink()
    conn.claim("S1", newcomer)
    assert newcomer.delivered == []


# --- attach / detach -----------------------------------------------------------------------------
def test_child_attached_under_a_claimed_session_gets_the_same_owner(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    tab = FakeSink("tab")
    conn.claim("PARENT", tab)
    attach = event("Target.attachedToTarget", "PARENT", sessionId="CHILD", targetInfo={"type": "iframe"})
    wire.feed(attach)
    assert conn._owners["CHILD"] is tab
    child_event = event("Runtime.executionContextCreated", "CHILD", context={"id": 1})
    wire.feed(child_event)
    assert tab.delivered == [("PARENT", attach), ("CHILD", child_event)]


def test_grandchild_attached_under_a_child_session_gets_the_same_owner(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    tab = FakeSink("tab")
    conn.claim("TAB", tab)
    wire.feed(event("Target.attachedToTarget", "TAB", sessionId="OOPIF"))
    wire.feed(event("Target.attachedToTarget", "OOPIF", sessionId="WORKER"))
    assert conn._owners["WORKER"] is tab


def test_child_attached_under_an_unclaimed_session_is_not_owned_and_its_events_wait(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    wire.feed(event("Target.attachedToTarget", "PARENT", sessionId="CHILD"))
    assert "CHILD" not in conn._owners
    wire.feed(event("Child.event", "CHILD"))
    tab = FakeSink()
    conn.claim("CHILD", tab)
    assert tab.methods() == ["Child.event"]


def test_browser_level_attach_does_not_assign_an_owner(make_conn: MakeConn) -> None:
    browser = FakeSink("browser")
    conn, wire = make_conn(browser)
    attach = event("Target.attachedToTarget", sessionId="TAB1", targetInfo={"type": "page"})
    wire.feed(attach)
    assert "TAB1" not in conn._owners
    assert browser.delivered == [("", attach)]


def test_detaching_a_child_fails_its_pending_calls_with_target_closed_at_once(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    tab = FakeSink("tab")
    conn.claim("PARENT", tab)
    wire.feed(event("Target.attachedToTarget", "PARENT", sessionId="CHILD"))
    child_call = pend(conn, "CHILD", "DOM.getDocument")
    parent_call = pend(conn, "PARENT", "Page.navigate")
    wire.feed(event("Target.detachedFromTarget", "PARENT", sessionId="CHILD"))
    assert child_call.done()
    exc = child_call.exception(timeout=0)
    assert type(exc) is TargetClosed
    assert not parent_call.done()
    assert call_id(child_call) not in conn._pending and call_id(parent_call) in conn._pending


def test_detaching_leaves_other_sessions_calls_pending(make_conn: MakeConn) -> None:
    browser = FakeSink("browser")
    conn, wire = make_conn(browser)
    a, b = FakeSink("a"), FakeSink("b")
    conn.claim("SA", a)
    conn.claim("SB", b)
    a_call = pend(conn, "SA")
    b_call = pend(conn, "SB")
    browser_call = pend(conn, None, "Target.getTargets")
    wire.feed(event("Target.detachedFromTarget", sessionId="SA", targetId="TA"))
    assert isinstance(a_call.exception(timeout=0), TargetClosed)
    assert not b_call.done()
    assert not browser_call.done()


def test_detached_child_is_forgotten_so_its_later_events_reach_no_sink(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    tab = FakeSink("tab")
    conn.claim("PARENT", tab)
    wire.feed(event("Target.attachedToTarget", "PARENT", sessionId="CHILD"))
    wire.feed(event("Target.detachedFromTarget", "PARENT", sessionId="CHILD"))
    assert "CHILD" not in conn._owners
    assert "PARENT" in conn._owners
    before = len(tab.delivered)
    wire.feed(event("Late.child.event", "CHILD"))
    assert len(tab.delivered) == before


def test_detach_of_a_child_reaches_its_owner_once(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    tab = FakeSink("tab")
    conn.claim("PARENT", tab)
    wire.feed(event("Target.attachedToTarget", "PARENT", sessionId="CHILD"))
    detach = event("Target.detachedFromTarget", "PARENT", sessionId="CHILD")
    wire.feed(detach)
    detaches = [d for d in tab.delivered if d[1] == detach]
    assert detaches == [("PARENT", detach)]


def test_browser_level_detach_of_a_tab_session_tells_the_tab_and_the_browser(make_conn: MakeConn) -> None:
    browser = FakeSink("browser")
    conn, wire = make_conn(browser)
    tab = FakeSink("tab")
    conn.claim("TAB1", tab)
    detach = event("Target.detachedFromTarget", sessionId="TAB1", targetId="T1")
    wire.feed(detach)
    assert tab.delivered == [("TAB1", detach)]
    assert browser.delivered == [("", detach)]
    assert "TAB1" not in conn._owners


def test_detach_of_an_unknown_session_fails_nothing_else(make_conn: MakeConn) -> None:
    browser = FakeSink("browser")
    conn, wire = make_conn(browser)
    call = pend(conn, "S1")
    wire.feed(event("Target.detachedFromTarget", sessionId="NEVER_SEEN"))
    assert not call.done()


# --- crashes -------------------------------------------------------------------------------------
def test_target_crashed_fails_that_sessions_pending_calls_with_target_crashed(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    tab, other = FakeSink("tab"), FakeSink("other")
    conn.claim("S1", tab)
    conn.claim("S2", other)
    crashed_call = pend(conn, "S1", "Runtime.evaluate")
    second_crashed_call = pend(conn, "S1", "Page.reload")
    healthy_call = pend(conn, "S2", "Runtime.evaluate")
    crash = event("Inspector.targetCrashed", "S1")
    wire.feed(crash)
    for fut in (crashed_call, second_crashed_call):
        exc = fut.exception(timeout=0)
        assert isinstance(exc, TargetCrashed)
        assert isinstance(exc, TargetClosed)  # a crashed tab is also a closed one to callers
    assert not healthy_call.done()
    assert tab.delivered == [("S1", crash)]
    assert other.delivered == []


def test_target_crashed_on_an_unclaimed_session_still_fails_its_calls(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    call = pend(conn, "S9")
    wire.feed(event("Inspector.targetCrashed", "S9"))
    assert isinstance(call.exception(timeout=0), TargetCrashed)


# --- shutting down -------------------------------------------------------------------------------
def test_shut_fails_every_pending_future_and_tells_every_sink(make_conn: MakeConn) -> None:
    browser = FakeSink("browser")
    conn, _ = make_conn(browser)
    a, b = FakeSink("a"), FakeSink("b")
    conn.claim("SA", a)
    conn.claim("SB", b)
    conn.claim("SA-child", a)  # one sink owning two sessions is told once
    futs = [pend(conn, "SA"), pend(conn, "SB"), pend(conn, None), pend(conn, "UNCLAIMED")]
    gone = BrowserGone("browser connection lost: test")
    conn._shut(gone)
    for fut in futs:
        assert fut.exception(timeout=0) is gone
    assert a.failed == [gone]
    assert b.failed == [gone]
    assert browser.failed == [gone]
    assert conn.closed
    assert conn._pending == {}


def test_shut_twice_keeps_the_first_error_and_tells_sinks_once(make_conn: MakeConn) -> None:
    browser = FakeSink("browser")
    conn, _ = make_conn(browser)
    tab = FakeSink("tab")
    conn.claim("S1", tab)
    first = BrowserGone("first")
    conn._shut(first)
    conn._shut(BrowserGone("second"))
    assert tab.failed == [first]
    assert browser.failed == [first]
    assert conn._closed is first


def test_shut_skips_futures_that_already_finished(make_conn: MakeConn) -> None:
    conn, _ = make_conn()
    done = pend(conn, "S1")
    done.set_result({"early": True})
    waiting = pend(conn, "S1")
    conn._shut(BrowserGone("gone"))  # must not raise InvalidStateError
    assert done.result(timeout=0) == {"early": True}
    assert isinstance(waiting.exception(timeout=0), BrowserGone)


def test_send_after_shut_fails_at_once_with_the_shutdown_error(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    gone = BrowserGone("browser connection closed")
    conn._shut(gone)
    fut = conn.send("Runtime.evaluate", {"expression": "1"}, session_id="S1")
    assert fut.done()
    assert fut.exception(timeout=0) is gone
    assert conn._pending == {}
    assert wire.sent == []  # the transport is not touched once the connection is shut


def test_connection_is_open_until_shut(make_conn: MakeConn) -> None:
    conn, _ = make_conn()
    assert not conn.closed
    conn._shut(BrowserGone("x"))
    assert conn.closed


# --- the transport under the connection ---------------------------------------------------------
def test_a_call_goes_out_as_one_compact_json_text_with_its_session(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    on_tab = conn.send("Runtime.evaluate", {"expression": "1+1"}, session_id="S1")
    on_browser = conn.send("Target.getTargets")
    assert wire.sent == [
        f'{{"id":{call_id(on_tab)},"method":"Runtime.evaluate","params":{{"expression":"1+1"}},"sessionId":"S1"}}',
        f'{{"id":{call_id(on_browser)},"method":"Target.getTargets","params":{{}}}}',
    ]
    assert call_id(on_tab) != call_id(on_browser)


def test_the_end_of_the_transport_fails_every_pending_call_at_once(make_conn: MakeConn) -> None:
    browser = FakeSink("browser")
    conn, wire = make_conn(browser)
    tab = FakeSink("tab")
    conn.claim("S1", tab)
    calls = [pend(conn, "S1"), pend(conn, None)]
    wire.end()
    for fut in calls:
        exc = fut.exception(timeout=FEED_TIMEOUT_S)
        assert isinstance(exc, BrowserGone)
        assert str(exc) == "browser connection closed"
    assert conn.closed
    assert conn._pending == {}
    assert [str(e) for e in tab.failed] == ["browser connection closed"]
    assert [str(e) for e in browser.failed] == ["browser connection closed"]


def test_a_transport_failure_ends_the_connection_saying_what_broke(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, "S1")
    wire.end(ConnectionResetError("reset by peer"))
    exc = fut.exception(timeout=FEED_TIMEOUT_S)
    assert isinstance(exc, BrowserGone)
    assert str(exc) == "browser connection lost: reset by peer"
    assert conn.closed


@pytest.mark.parametrize("error", [TransportClosed("socket is already closed"), BrokenPipeError("broken pipe")])
def test_a_send_the_transport_refuses_fails_that_call_only(make_conn: MakeConn, error: Exception) -> None:
    conn, wire = make_conn()
    earlier = pend(conn, "S1")
    wire.refuse = error
    fut = conn.send("Runtime.evaluate", {}, session_id="S1")
    exc = fut.exception(timeout=0)
    assert isinstance(exc, BrowserGone)
    assert str(exc) == f"browser connection lost: {error}"
    assert call_id(fut) not in conn._pending
    assert call_id(earlier) in conn._pending  # the reader, not a sender, decides the connection is gone


def test_an_unparsable_message_is_dropped_and_the_next_one_still_handled(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, "S1")
    wire.feed_raw("{not json", json.dumps({"id": call_id(fut), "result": {"ok": True}}))
    assert fut.result(timeout=0) == {"ok": True}
    assert not conn.closed


def test_a_message_may_arrive_as_text_or_as_utf8_bytes(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    tab = FakeSink("tab")
    conn.claim("S1", tab)
    wire.feed_raw(json.dumps(event("Console.text", "S1", text="caf\u00e9")),
                  json.dumps(event("Console.bytes", "S1", text="caf\u00e9"), ensure_ascii=False).encode())
    assert [(m["method"], m["params"]["text"]) for _, m in tab.delivered] == [("Console.text", "caf\u00e9"),
                                                                             ("Console.bytes", "caf\u00e9")]


def test_close_fails_pending_calls_and_closes_the_transport(make_conn: MakeConn) -> None:
    conn, wire = make_conn()
    fut = pend(conn, "S1")
    conn.close()
    exc = fut.exception(timeout=0)
    assert isinstance(exc, BrowserGone)
    assert str(exc) == "browser connection closed"
    assert wire.closed
    assert conn.closed
