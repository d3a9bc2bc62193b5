"""The hub's routing and limits, with in-memory peers (pure logic: no sockets, no browser)."""
from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from app.debug import hub as hub_module
from app.debug import protocol
from app.debug.hub import Hub, Outbox, Peer, queued_peer


class Inbox:
    """A peer that keeps what it is handed."""

    def __init__(self, role: str, peer_id: str) -> None:
        self.got: list[dict[str, Any]] = []
        self.closed: list[tuple[int, str]] = []
        self.peer = Peer(role, peer_id, self.deliver, lambda code, reason: self.closed.append((code, reason)))

    def deliver(self, text: str, msg: dict[str, Any] | None) -> None:
        self.got.append(json.loads(text))

    def types(self) -> list[str]:
        return [m["type"] if m["type"] != "connection_event" else m["event"] for m in self.got]


def frame(session: str, type: str, **fields: Any) -> str:
    return json.dumps(protocol.envelope(session, type, **fields))


def setup() -> tuple[Hub, Any, Inbox, Inbox, Inbox]:
    h = Hub()
    s = h.create()
    app, a1, a2 = Inbox("app", "app-1"), Inbox("agent", "agent-1"), Inbox("agent", "agent-2")
    for p in (a1, a2, app):
        h.join(s, p.peer)
    return h, s, app, a1, a2


def test_session_ids_are_long_and_unique() -> None:
    h = Hub()
    ids = {h.create().id for _ in range(100)}
    assert len(ids) == 100 and all(len(i) >= 22 for i in ids)
    assert not [i for i in ids if i.startswith("-")]   # `--session <id>` must not read as an option


def test_telemetry_fans_out_and_a_result_goes_to_its_sender_only() -> None:
    h, s, app, a1, a2 = setup()
    h.from_app(s, app.peer, frame(s.id, "console", level="log", args=["hi"]))
    assert a1.types()[-1] == "console" and a2.types()[-1] == "console"
    h.from_agent(s, a1.peer, frame(s.id, "click", requestId="r1", target={"stableId": "e1"}))
    assert app.got[-1]["type"] == "click"
    h.from_app(s, app.peer, frame(s.id, "command_result", requestId="r1", requestType="click",
                                  success=True, duration=3))
    assert a1.got[-1]["type"] == "command_result" and a1.got[-1]["requestId"] == "r1"
    assert all(m["type"] != "command_result" for m in a2.got)


def test_connection_events_go_to_the_others() -> None:
    h, s, app, a1, a2 = setup()
    # a1 saw a2 and the app join; the app saw both agents.
    assert a1.types() == ["agent_connected", "app_connected"]
    assert app.types() == []
    h.leave(s, a2.peer)
    assert app.types() == ["agent_disconnected"] and a1.types()[-1] == "agent_disconnected"
    assert a1.got[-1]["connectedAgents"] == 1


def test_a_late_agent_learns_the_apps_hello_capabilities_and_where_it_is() -> None:
    h, s, app, a1, _ = setup()
    h.from_app(s, app.peer, frame(s.id, "hello", url="http://x/", userAgent="UA", viewport={"width": 1, "height": 2},
                                  appName="shop"))
    h.from_app(s, app.peer, frame(s.id, "capabilities", capabilities=["console"]))
    h.from_app(s, app.peer, frame(s.id, "navigation", url="http://x/", trigger="initial"))
    h.from_app(s, app.peer, frame(s.id, "navigation", url="http://x/#cart", trigger="hashchange"))
    late = Inbox("agent", "late")
    h.join(s, late.peer)
    assert late.types() == ["app_connected", "hello", "capabilities", "navigation"]
    assert late.got[-1]["url"] == "http://x/#cart"   # only the latest
    assert s.describe()["apps"][0]["appName"] == "shop"
    assert s.describe()["apps"][0]["url"] == "http://x/#cart"


def test_a_command_with_no_app_is_answered_at_once() -> None:
    h = Hub()
    s = h.create()
    agent = Inbox("agent", "a")
    h.join(s, agent.peer)
    h.from_agent(s, agent.peer, frame(s.id, "click", requestId="r9", target={"selector": "#x"}))
    res = agent.got[-1]
    assert res["type"] == "command_result" and res["success"] is False and res["requestId"] == "r9"
    assert "no app" in res["error"]["message"]


def test_bad_frames_never_raise_commands_get_invalid_command() -> None:
    h, s, app, a1, _ = setup()
    h.from_app(s, app.peer, "not json")
    h.from_app(s, app.peer, frame(s.id, "no_such_type"))
    assert s.invalid == 2 and a1.types() == ["agent_connected", "app_connected"]
    h.from_agent(s, a1.peer, frame(s.id, "click", requestId="r2"))   # no target
    assert a1.got[-1]["type"] == "command_result"
    assert a1.got[-1]["error"]["code"] == "INVALID_COMMAND" and a1.got[-1]["requestId"] == "r2"
    assert all(m["type"] != "click" for m in app.got)


def test_outbox_drops_the_oldest_and_counts() -> None:
    woke = threading.Event()
    box = Outbox(woke.set, limit=3)
    for i in range(5):
        box.put(str(i))
    items, dropped = box.take()
    assert items == ["2", "3", "4"] and dropped == 2 and box.total_dropped == 2 and woke.is_set()


def test_outbox_is_bounded_in_bytes_too_and_still_takes_one_frame_over_it() -> None:
    box = Outbox(lambda: None, max_bytes=3000)
    for i in range(5):
        box.put(str(i) * 1000)   # ~1 KB each: two fit
    items, dropped = box.take()
    assert [t[0] for t in items] == ["3", "4"] and dropped == 3 and box.bytes == 0
    box.put("a" * 100)
    box.put("b" * 5000)          # larger than the whole budget: everything older goes, it stays
    items, dropped = box.take()
    assert items == ["b" * 5000] and dropped == 1


def test_a_stalled_peer_is_cut_loose() -> None:
    closed: list[int] = []
    peer = queued_peer("agent", "slow", lambda: None, lambda code, reason: closed.append(code))
    assert peer.outbox is not None
    peer.outbox.limit = 2
    for i in range(3):
        peer.deliver(str(i), None)
    assert closed == []   # overflowing, but it took something lately
    peer.outbox.last_take -= hub_module.SLOW_S + 1
    peer.deliver("3", None)
    assert closed == [1008]


def test_sse_history_resumes_and_reports_what_fell_out() -> None:
    h, s, app, _, _ = setup()
    start = s.last_event_id
    for i in range(3):
        h.from_app(s, app.peer, frame(s.id, "console", level="log", args=[str(i)]))
    held, lost = s.since(start + 1)
    assert [json.loads(t)["args"] for _, _, t in held] == [["1"], ["2"]] and lost == 0
    small = hub_module.Session("x", max_messages=2)
    for i in range(5):
        small.record("console", str(i))
    held, lost = small.since(1)
    assert [t for _, _, t in held] == ["3", "4"] and lost == 2


def test_deleting_a_session_closes_its_peers_and_ends_streams() -> None:
    h, s, app, a1, _ = setup()
    h.delete(s.id)
    assert app.closed and a1.closed and s.ended and h.get(s.id) is None
    assert list(h.stream(s, s.last_event_id, None, 0.01)) == []


def test_memory_stays_bounded_after_many_messages() -> None:
    h, s, app, a1, _ = setup()
    box_peer = queued_peer("agent", "q", lambda: None, lambda c, r: None)
    h.join(s, box_peer)
    text = frame(s.id, "console", level="log", args=["x" * 20])
    for _ in range(20_000):
        h.from_app(s, app.peer, text)
    assert len(s.history) == hub_module.HISTORY_LIMIT
    assert box_peer.outbox is not None and len(box_peer.outbox) == hub_module.OUTBOX_LIMIT
    assert s.describe()["dropped"] >= 20_000 - hub_module.OUTBOX_LIMIT


def test_made_sessions_outlive_a_restart_and_tab_sessions_do_not(tmp_path) -> None:
    store = tmp_path / "debug" / "sessions.json"
    first = Hub(store=store)
    kept = first.create().id
    first.create(tab_id="T1")
    gone = first.create().id
    first.delete(gone)
    assert oct(store.stat().st_mode & 0o777) == "0o600"
    again = Hub(store=store)
    assert [s.id for s in again.sessions()] == [kept]


def test_an_unreadable_store_is_ignored_not_fatal(tmp_path) -> None:
    store = tmp_path / "sessions.json"
    store.write_text("{not json")
    assert Hub(store=store).sessions() == []


def test_sessions_are_capped(monkeypatch) -> None:
    monkeypatch.setattr(hub_module, "MAX_SESSIONS", 3)
    h = Hub()
    for _ in range(3):
        h.create()
    with pytest.raises(hub_module.TooManySessions):
        h.create()


def test_a_data_reply_without_request_id_reaches_the_waiting_rest_caller() -> None:
    # The npm SDK answers request_state with state_update messages that carry no requestId.
    h, s, app, a1, _ = setup()
    got: list[dict[str, Any]] = []
    h.command(s, protocol.envelope(s.id, "request_state", requestId="rest-1"), None,
              lambda text, msg: got.append(json.loads(text)))
    h.from_app(s, app.peer, frame(s.id, "state_update", scope="store", state={"n": 1}))
    assert got and got[0]["state"] == {"n": 1}
    assert a1.got[-1]["type"] == "state_update"   # agents see it as telemetry too
    assert not s.pending


def test_the_npm_sdks_echo_of_connection_events_is_not_counted_as_invalid() -> None:
    h, s, app, _, _ = setup()
    h.from_app(s, app.peer, json.dumps({"type": "command_result", "requestType": "connection_event",
                                        "success": False, "error": {"code": "INVALID_COMMAND"}},
                                       separators=(",", ":")))
    h.from_app(s, app.peer, "{broken")
    assert s.invalid == 1
