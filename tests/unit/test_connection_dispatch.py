"""Unit tests for cdp.connection.Connection's message dispatch and session bookkeeping.

No socket and no reader thread: the object is built with ``Connection.__new__`` and given the
private tables ``__init__`` sets up; messages are fed to ``_dispatch`` as the reader would.
"""
from __future__ import annotations

import itertools
import threading
from concurrent.futures import Future
from typing import Any

import pytest

from cdp import connection as connection_mod
from cdp.connection import MAX_UNCLAIMED, Connection
from cdp.errors import BrowserGone, CDPError, TargetClosed, TargetCrashed


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


def make_conn(browser_sink: FakeSink | None = None) -> Connection:
    conn = Connection.__new__(Connection)
    conn.ws_url = "ws://unit.test/devtools/browser/x"
    conn._send_lock = threading.Lock()
    conn._lock = threading.Lock()
    conn._ids = itertools.count(1)
    conn._pending = {}
    conn._owners = {}
    conn._unclaimed = {}
    conn._browser_sink = browser_sink
    conn._closed = None
    return conn


def pend(conn: Connection, call_id: int, session_id: str | None, method: str = "Runtime.evaluate") -> Future:
    """A call in flight, as ``send`` would have recorded it."""
    fut: Future = Future()
    fut.call_id = call_id  # type: ignore[attr-defined]
    conn._pending[call_id] = (fut, session_id, method)
    return fut


def event(method: str, session_id: str | None = None, **params: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"method": method, "params": params}
    if session_id is not None:
        msg["sessionId"] = session_id
    return msg


# --- replies -------------------------------------------------------------------------------------
def test_reply_completes_the_future_with_the_same_id_only() -> None:
    conn = make_conn()
    first = pend(conn, 1, "S1")
    second = pend(conn, 2, "S1")
    conn._dispatch({"id": 2, "sessionId": "S1", "result": {"value": 42}})
    assert second.result(timeout=0) == {"value": 42}
    assert not first.done()


def test_reply_routes_by_id_not_by_session() -> None:
    conn = make_conn()
    fut = pend(conn, 5, "S1")
    conn._dispatch({"id": 5, "sessionId": "OTHER", "result": {"ok": True}})
    assert fut.result(timeout=0) == {"ok": True}


def test_reply_without_result_completes_with_an_empty_dict() -> None:
    conn = make_conn()
    fut = pend(conn, 1, None, "Target.activateTarget")
    conn._dispatch({"id": 1})
    assert fut.result(timeout=0) == {}


def test_error_reply_fails_the_future_with_a_cdp_error_naming_the_method() -> None:
    conn = make_conn()
    fut = pend(conn, 3, "S1", "DOM.resolveNode")
    conn._dispatch({"id": 3, "sessionId": "S1", "error": {"code": -32000, "message": "No node with given id found"}})
    exc = fut.exception(timeout=0)
    assert isinstance(exc, CDPError)
    assert exc.method == "DOM.resolveNode"
    assert exc.cdp_message == "No node with given id found"
    assert exc.code == -32000
    assert str(exc) == "DOM.resolveNode: No node with given id found"


def test_error_reply_without_message_still_fails_the_future() -> None:
    conn = make_conn()
    fut = pend(conn, 3, None, "Browser.getVersion")
    conn._dispatch({"id": 3, "error": {}})
    exc = fut.exception(timeout=0)
    assert isinstance(exc, CDPError)
    assert exc.cdp_message == "error"
    assert exc.code is None


def test_reply_is_not_handed_to_any_sink() -> None:
    browser = FakeSink("browser")
    tab = FakeSink("tab")
    conn = make_conn(browser)
    conn._owners["S1"] = tab
    pend(conn, 1, "S1")
    pend(conn, 2, None)
    conn._dispatch({"id": 1, "sessionId": "S1", "result": {}})
    conn._dispatch({"id": 2, "result": {}})
    assert tab.delivered == []
    assert browser.delivered == []


def test_reply_removes_the_call_from_the_pending_table() -> None:
    conn = make_conn()
    pend(conn, 1, "S1")
    conn._dispatch({"id": 1, "result": {}})
    assert 1 not in conn._pending


def test_reply_for_a_forgotten_call_is_ignored() -> None:
    conn = make_conn()
    fut = pend(conn, 9, "S1")
    conn.forget(fut)
    conn._dispatch({"id": 9, "sessionId": "S1", "result": {"late": True}})  # must not raise
    assert not fut.done()
    assert conn._pending == {}


def test_reply_for_an_unknown_id_is_ignored_and_leaves_other_calls_pending() -> None:
    conn = make_conn()
    fut = pend(conn, 1, "S1")
    conn._dispatch({"id": 999, "result": {}})
    assert not fut.done()
    assert 1 in conn._pending


def test_second_reply_with_the_same_id_is_ignored() -> None:
    conn = make_conn()
    fut = pend(conn, 1, None)
    conn._dispatch({"id": 1, "result": {"n": 1}})
    conn._dispatch({"id": 1, "result": {"n": 2}})  # must not raise InvalidStateError
    assert fut.result(timeout=0) == {"n": 1}


# --- events and ownership ------------------------------------------------------------------------
def test_event_on_a_claimed_session_goes_to_its_owner_with_the_session_id() -> None:
    conn = make_conn()
    tab, other = FakeSink("tab"), FakeSink("other")
    conn.claim("S1", tab)
    conn.claim("S2", other)
    msg = event("Page.loadEventFired", "S1", timestamp=1.0)
    conn._dispatch(msg)
    assert tab.delivered == [("S1", msg)]
    assert other.delivered == []


def test_browser_level_event_goes_to_the_browser_sink_with_an_empty_session_id() -> None:
    browser = FakeSink("browser")
    conn = make_conn(browser)
    tab = FakeSink("tab")
    conn.claim("S1", tab)
    msg = event("Target.targetCreated", targetInfo={"targetId": "T1"})
    conn._dispatch(msg)
    assert browser.delivered == [("", msg)]
    assert tab.delivered == []


def test_browser_level_event_without_a_browser_sink_is_dropped_quietly() -> None:
    conn = make_conn(None)
    conn._dispatch(event("Target.targetDestroyed", targetId="T1"))
    assert conn._unclaimed == {}


def test_events_for_an_unclaimed_session_are_handed_over_in_order_on_claim() -> None:
    conn = make_conn()
    msgs = [event(f"Domain.event{i}", "S1", i=i) for i in range(5)]
    for m in msgs:
        conn._dispatch(m)
    tab = FakeSink("tab")
    conn.claim("S1", tab)
    assert tab.delivered == [("S1", m) for m in msgs]


def test_events_after_claim_follow_the_buffered_ones() -> None:
    conn = make_conn()
    conn._dispatch(event("Early.one", "S1"))
    tab = FakeSink()
    conn.claim("S1", tab)
    conn._dispatch(event("Late.two", "S1"))
    assert tab.methods() == ["Early.one", "Late.two"]


def test_claim_hands_over_only_the_claimed_sessions_buffer() -> None:
    conn = make_conn()
    conn._dispatch(event("For.s1", "S1"))
    conn._dispatch(event("For.s2", "S2"))
    tab = FakeSink()
    conn.claim("S1", tab)
    assert tab.methods() == ["For.s1"]
    later = FakeSink()
    conn.claim("S2", later)
    assert later.methods() == ["For.s2"]


def test_buffer_is_handed_over_once() -> None:
    conn = make_conn()
    conn._dispatch(event("Once.only", "S1"))
    first = FakeSink()
    conn.claim("S1", first)
    second = FakeSink()
    conn.claim("S1", second)
    assert first.methods() == ["Once.only"]
    assert second.delivered == []


def test_unclaimed_buffer_is_capped_keeping_the_earliest_messages() -> None:
    conn = make_conn()
    for i in range(MAX_UNCLAIMED + 25):
        conn._dispatch(event("Network.dataReceived", "S1", n=i))
    assert len(conn._unclaimed["S1"]) == MAX_UNCLAIMED
    tab = FakeSink()
    conn.claim("S1", tab)
    got = [m["params"]["n"] for _, m in tab.delivered]
    assert got == list(range(MAX_UNCLAIMED))


def test_unclaimed_cap_is_per_session() -> None:
    conn = make_conn()
    for i in range(MAX_UNCLAIMED + 1):
        conn._dispatch(event("Spam.event", "NOISY", n=i))
    conn._dispatch(event("Quiet.event", "QUIET"))
    tab = FakeSink()
    conn.claim("QUIET", tab)
    assert tab.methods() == ["Quiet.event"]


def test_unclaimed_cap_follows_the_module_constant(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection_mod, "MAX_UNCLAIMED", 3)
    conn = make_conn()
    for i in range(10):
        conn._dispatch(event("E.e", "S1", n=i))
    tab = FakeSink()
    conn.claim("S1", tab)
    assert [m["params"]["n"] for _, m in tab.delivered] == [0, 1, 2]


def test_release_drops_the_owner_and_the_buffer() -> None:
    conn = make_conn()
    tab = FakeSink()
    conn.claim("S1", tab)
    conn.release("S1")
    conn._dispatch(event("After.release", "S1"))
    assert tab.delivered == []
    conn.release("S1")  # the buffered message goes too
    newcomer = FakeSink()
    conn.claim("S1", newcomer)
    assert newcomer.delivered == []


# --- attach / detach -----------------------------------------------------------------------------
def test_child_attached_under_a_claimed_session_gets_the_same_owner() -> None:
    conn = make_conn()
    tab = FakeSink("tab")
    conn.claim("PARENT", tab)
    attach = event("Target.attachedToTarget", "PARENT", sessionId="CHILD", targetInfo={"type": "iframe"})
    conn._dispatch(attach)
    assert conn._owners["CHILD"] is tab
    child_event = event("Runtime.executionContextCreated", "CHILD", context={"id": 1})
    conn._dispatch(child_event)
    assert tab.delivered == [("PARENT", attach), ("CHILD", child_event)]


def test_grandchild_attached_under_a_child_session_gets_the_same_owner() -> None:
    conn = make_conn()
    tab = FakeSink("tab")
    conn.claim("TAB", tab)
    conn._dispatch(event("Target.attachedToTarget", "TAB", sessionId="OOPIF"))
    conn._dispatch(event("Target.attachedToTarget", "OOPIF", sessionId="WORKER"))
    assert conn._owners["WORKER"] is tab


def test_child_attached_under_an_unclaimed_session_is_not_owned_and_its_events_wait() -> None:
    conn = make_conn()
    conn._dispatch(event("Target.attachedToTarget", "PARENT", sessionId="CHILD"))
    assert "CHILD" not in conn._owners
    conn._dispatch(event("Child.event", "CHILD"))
    tab = FakeSink()
    conn.claim("CHILD", tab)
    assert tab.methods() == ["Child.event"]


def test_browser_level_attach_does_not_assign_an_owner() -> None:
    browser = FakeSink("browser")
    conn = make_conn(browser)
    attach = event("Target.attachedToTarget", sessionId="TAB1", targetInfo={"type": "page"})
    conn._dispatch(attach)
    assert "TAB1" not in conn._owners
    assert browser.delivered == [("", attach)]


def test_detaching_a_child_fails_its_pending_calls_with_target_closed_at_once() -> None:
    conn = make_conn()
    tab = FakeSink("tab")
    conn.claim("PARENT", tab)
    conn._dispatch(event("Target.attachedToTarget", "PARENT", sessionId="CHILD"))
    child_call = pend(conn, 1, "CHILD", "DOM.getDocument")
    parent_call = pend(conn, 2, "PARENT", "Page.navigate")
    conn._dispatch(event("Target.detachedFromTarget", "PARENT", sessionId="CHILD"))
    assert child_call.done()
    exc = child_call.exception(timeout=0)
    assert type(exc) is TargetClosed
    assert not parent_call.done()
    assert 1 not in conn._pending and 2 in conn._pending


def test_detaching_leaves_other_sessions_calls_pending() -> None:
    browser = FakeSink("browser")
    conn = make_conn(browser)
    a, b = FakeSink("a"), FakeSink("b")
    conn.claim("SA", a)
    conn.claim("SB", b)
    a_call = pend(conn, 1, "SA")
    b_call = pend(conn, 2, "SB")
    browser_call = pend(conn, 3, None, "Target.getTargets")
    conn._dispatch(event("Target.detachedFromTarget", sessionId="SA", targetId="TA"))
    assert isinstance(a_call.exception(timeout=0), TargetClosed)
    assert not b_call.done()
    assert not browser_call.done()


def test_detached_child_is_forgotten_so_its_later_events_reach_no_sink() -> None:
    conn = make_conn()
    tab = FakeSink("tab")
    conn.claim("PARENT", tab)
    conn._dispatch(event("Target.attachedToTarget", "PARENT", sessionId="CHILD"))
    conn._dispatch(event("Target.detachedFromTarget", "PARENT", sessionId="CHILD"))
    assert "CHILD" not in conn._owners
    assert "PARENT" in conn._owners
    before = len(tab.delivered)
    conn._dispatch(event("Late.child.event", "CHILD"))
    assert len(tab.delivered) == before


def test_detach_of_a_child_reaches_its_owner_once() -> None:
    conn = make_conn()
    tab = FakeSink("tab")
    conn.claim("PARENT", tab)
    conn._dispatch(event("Target.attachedToTarget", "PARENT", sessionId="CHILD"))
    detach = event("Target.detachedFromTarget", "PARENT", sessionId="CHILD")
    conn._dispatch(detach)
    detaches = [d for d in tab.delivered if d[1] is detach]
    assert detaches == [("PARENT", detach)]


def test_browser_level_detach_of_a_tab_session_tells_the_tab_and_the_browser() -> None:
    browser = FakeSink("browser")
    conn = make_conn(browser)
    tab = FakeSink("tab")
    conn.claim("TAB1", tab)
    detach = event("Target.detachedFromTarget", sessionId="TAB1", targetId="T1")
    conn._dispatch(detach)
    assert tab.delivered == [("TAB1", detach)]
    assert browser.delivered == [("", detach)]
    assert "TAB1" not in conn._owners


def test_detach_of_an_unknown_session_fails_nothing_else() -> None:
    browser = FakeSink("browser")
    conn = make_conn(browser)
    call = pend(conn, 1, "S1")
    conn._dispatch(event("Target.detachedFromTarget", sessionId="NEVER_SEEN"))
    assert not call.done()


# --- crashes -------------------------------------------------------------------------------------
def test_target_crashed_fails_that_sessions_pending_calls_with_target_crashed() -> None:
    conn = make_conn()
    tab, other = FakeSink("tab"), FakeSink("other")
    conn.claim("S1", tab)
    conn.claim("S2", other)
    crashed_call = pend(conn, 1, "S1", "Runtime.evaluate")
    second_crashed_call = pend(conn, 2, "S1", "Page.reload")
    healthy_call = pend(conn, 3, "S2", "Runtime.evaluate")
    crash = event("Inspector.targetCrashed", "S1")
    conn._dispatch(crash)
    for fut in (crashed_call, second_crashed_call):
        exc = fut.exception(timeout=0)
        assert isinstance(exc, TargetCrashed)
        assert isinstance(exc, TargetClosed)  # a crashed tab is also a closed one to callers
    assert not healthy_call.done()
    assert tab.delivered == [("S1", crash)]
    assert other.delivered == []


def test_target_crashed_on_an_unclaimed_session_still_fails_its_calls() -> None:
    conn = make_conn()
    call = pend(conn, 1, "S9")
    conn._dispatch(event("Inspector.targetCrashed", "S9"))
    assert isinstance(call.exception(timeout=0), TargetCrashed)


# --- shutting down -------------------------------------------------------------------------------
def test_shut_fails_every_pending_future_and_tells_every_sink() -> None:
    browser = FakeSink("browser")
    conn = make_conn(browser)
    a, b = FakeSink("a"), FakeSink("b")
    conn.claim("SA", a)
    conn.claim("SB", b)
    conn.claim("SA-child", a)  # one sink owning two sessions is told once
    futs = [pend(conn, 1, "SA"), pend(conn, 2, "SB"), pend(conn, 3, None), pend(conn, 4, "UNCLAIMED")]
    gone = BrowserGone("browser connection lost: test")
    conn._shut(gone)
    for fut in futs:
        assert fut.exception(timeout=0) is gone
    assert a.failed == [gone]
    assert b.failed == [gone]
    assert browser.failed == [gone]
    assert conn.closed
    assert conn._pending == {}


def test_shut_twice_keeps_the_first_error_and_tells_sinks_once() -> None:
    browser = FakeSink("browser")
    conn = make_conn(browser)
    tab = FakeSink("tab")
    conn.claim("S1", tab)
    first = BrowserGone("first")
    conn._shut(first)
    conn._shut(BrowserGone("second"))
    assert tab.failed == [first]
    assert browser.failed == [first]
    assert conn._closed is first


def test_shut_skips_futures_that_already_finished() -> None:
    conn = make_conn()
    done = pend(conn, 1, "S1")
    done.set_result({"early": True})
    waiting = pend(conn, 2, "S1")
    conn._shut(BrowserGone("gone"))  # must not raise InvalidStateError
    assert done.result(timeout=0) == {"early": True}
    assert isinstance(waiting.exception(timeout=0), BrowserGone)


def test_send_after_shut_fails_at_once_with_the_shutdown_error() -> None:
    conn = make_conn()  # no websocket: send must not touch it once the connection is shut
    gone = BrowserGone("browser connection closed")
    conn._shut(gone)
    fut = conn.send("Runtime.evaluate", {"expression": "1"}, session_id="S1")
    assert fut.done()
    assert fut.exception(timeout=0) is gone
    assert conn._pending == {}


def test_connection_is_open_until_shut() -> None:
    conn = make_conn()
    assert not conn.closed
    conn._shut(BrowserGone("x"))
    assert conn.closed
