"""The command queue and its waiting clients, on a fake clock: no sockets, no waiting."""
from __future__ import annotations

import threading

import pytest

from app.extension import preflight
from app.extension.commands import STOPPING_ERROR, TIMEOUT_ERROR, CommandQueue
from app.extension.errors import BadCommand, DaemonClosed


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


def make_queue(clock: FakeClock, **kwargs: float) -> CommandQueue:
    return CommandQueue(timeout_s=kwargs.pop("timeout_s", 30.0), clock=clock, wall_clock=lambda: 1.7e9, **kwargs)


def cmd(request_id: object, kind: str = "get_tabs") -> dict:
    return {"type": kind, "data": {}, "requestId": request_id}


def test_commands_are_polled_first_in_first_out_one_at_a_time(clock: FakeClock) -> None:
    q = make_queue(clock)
    for rid in (1, 2, 3):
        q.submit(cmd(rid))
    assert [q.poll()["requestId"] for _ in range(3)] == [1, 2, 3]
    assert q.poll() is None


def test_poll_passes_the_command_through_whole(clock: FakeClock) -> None:
    q = make_queue(clock)
    q.submit({"type": "navigate", "data": {"url": "http://x/"}, "requestId": 7, "extra": [1]})
    assert q.poll() == {"type": "navigate", "data": {"url": "http://x/"}, "requestId": 7, "extra": [1]}


def test_a_response_completes_its_waiter_unchanged(clock: FakeClock) -> None:
    q = make_queue(clock)
    pending = q.submit(cmd(1732000000000))
    q.poll()
    answer = {"requestId": 1732000000000, "success": True, "data": [{"id": 1}], "stack": None}
    assert q.respond(answer) is True
    assert pending.done()
    assert pending.wait() == answer
    assert q.health()["pending"] == 0


def test_a_response_for_an_unknown_request_id_is_ignored_and_counted(clock: FakeClock) -> None:
    q = make_queue(clock)
    pending = q.submit(cmd("a"))
    assert q.respond({"requestId": "b", "success": True}) is False
    assert q.respond({"requestId": ["unhashable"], "success": True}) is False
    assert q.respond({"success": True}) is False
    assert not pending.done()
    assert q.health()["unknownResponses"] == 3


def test_a_second_response_for_the_same_request_is_unknown(clock: FakeClock) -> None:
    q = make_queue(clock)
    q.submit(cmd(1))
    q.poll()
    assert q.respond({"requestId": 1, "success": True}) is True
    assert q.respond({"requestId": 1, "success": True}) is False


def test_a_timed_out_command_answers_the_timeout_and_leaves_the_queue(clock: FakeClock) -> None:
    q = make_queue(clock, timeout_s=5.0)
    pending = q.submit(cmd(1))
    clock.now += 5.0
    assert pending.wait() == {"requestId": 1, "success": False, "error": TIMEOUT_ERROR}
    assert q.poll() is None  # the original would hand it to the extension now
    health = q.health()
    assert (health["pending"], health["queued"], health["timedOut"]) == (0, 0, 1)


def test_a_polled_command_times_out_too_and_its_late_result_is_unknown(clock: FakeClock) -> None:
    q = make_queue(clock, timeout_s=5.0)
    pending = q.submit(cmd(1))
    q.poll()
    clock.now += 6.0
    assert pending.wait()["error"] == TIMEOUT_ERROR
    assert q.respond({"requestId": 1, "success": True}) is False
    assert q.health()["unknownResponses"] == 1


def test_an_unpolled_command_expires_from_the_queue_before_its_deadline(clock: FakeClock) -> None:
    q = make_queue(clock, timeout_s=30.0, queue_ttl_s=2.0)
    pending = q.submit(cmd(1))
    clock.now += 1.0
    assert q.sweep() == 0
    clock.now += 1.0
    assert q.sweep() == 1
    answer = pending.wait()
    assert answer["success"] is False
    assert answer["error"].startswith(TIMEOUT_ERROR) and "did not take the command within 2 s" in answer["error"]
    assert q.poll() is None
    assert q.health()["expired"] == 1


def test_a_polled_command_does_not_expire_with_the_queue_ttl(clock: FakeClock) -> None:
    q = make_queue(clock, timeout_s=30.0, queue_ttl_s=2.0)
    pending = q.submit(cmd(1))
    q.poll()
    clock.now += 10.0
    assert q.sweep() == 0
    assert q.respond({"requestId": 1, "success": True}) is True
    assert pending.wait()["success"] is True


def test_poll_drops_expired_commands_even_with_nobody_sweeping(clock: FakeClock) -> None:
    q = make_queue(clock, timeout_s=5.0)
    q.submit(cmd(1))
    clock.now += 5.0
    q.submit(cmd(2))
    assert q.poll()["requestId"] == 2


def test_an_explicit_deadline_bounds_the_wait(clock: FakeClock) -> None:
    q = make_queue(clock, timeout_s=30.0)
    pending = q.submit(cmd(1), deadline=clock.now + 1.0)
    clock.now += 1.0
    assert pending.wait()["error"] == TIMEOUT_ERROR


def test_close_fails_every_waiter_at_once_and_refuses_new_commands(clock: FakeClock) -> None:
    q = make_queue(clock)
    waiting = [q.submit(cmd(i)) for i in range(3)]
    q.poll()
    results: list[dict] = []
    threads = [threading.Thread(target=lambda p=p: results.append(p.wait())) for p in waiting]
    for t in threads:
        t.start()
    assert q.close() == 3
    for t in threads:
        t.join(5)
        assert not t.is_alive()
    assert sorted(r["requestId"] for r in results) == [0, 1, 2]
    assert all(r == {"requestId": r["requestId"], "success": False, "error": STOPPING_ERROR} for r in results)
    assert q.poll() is None
    with pytest.raises(DaemonClosed):
        q.submit(cmd(9))


def test_a_waiter_is_woken_by_the_response_from_another_thread() -> None:
    q = CommandQueue(timeout_s=10.0)
    pending = q.submit(cmd("x"))
    got: list[dict] = []
    t = threading.Thread(target=lambda: got.append(pending.wait()))
    t.start()
    q.poll()
    q.respond({"requestId": "x", "success": True, "data": 1})
    t.join(5)
    assert got == [{"requestId": "x", "success": True, "data": 1}]


@pytest.mark.parametrize("command, reason", [
    ([1, 2], "JSON object"),
    ({"data": {}, "requestId": 1}, "type"),
    ({"type": "", "requestId": 1}, "type"),
    ({"type": "get_tabs"}, "requestId"),
    ({"type": "get_tabs", "requestId": True}, "string or a number"),
    ({"type": "get_tabs", "requestId": None}, "string or a number"),
    ({"type": "get_tabs", "requestId": {"a": 1}}, "string or a number"),
    ({"type": "get_tabs", "requestId": float("nan")}, "finite"),
])
def test_a_command_that_cannot_be_matched_is_refused(clock: FakeClock, command: object, reason: str) -> None:
    with pytest.raises(BadCommand, match=reason):
        make_queue(clock).submit(command)  # type: ignore[arg-type]


def test_a_request_id_already_waiting_is_refused_not_shared(clock: FakeClock) -> None:
    q = make_queue(clock)
    q.submit(cmd(5))
    with pytest.raises(BadCommand, match="already waiting"):
        q.submit(cmd(5))
    assert q.health()["queued"] == 1


def test_the_number_of_waiting_commands_is_capped(clock: FakeClock) -> None:
    q = CommandQueue(timeout_s=30.0, clock=clock, max_pending=2)
    q.submit(cmd(1))
    q.submit(cmd(2))
    with pytest.raises(BadCommand, match="too many"):
        q.submit(cmd(3))


def test_health_has_the_originals_fields_and_when_the_extension_was_seen(clock: FakeClock) -> None:
    q = make_queue(clock)
    first = q.health()
    assert {k: first[k] for k in ("status", "pending", "queued")} == {"status": "ok", "pending": 0, "queued": 0}
    assert first["extensionSeenAt"] is None and first["extensionSeenAgoMs"] is None
    q.poll()
    clock.now += 2.5
    seen = q.health()
    assert seen["extensionSeenAt"] == "2023-11-14T22:13:20.000Z"
    assert seen["extensionSeenAgoMs"] == 2500


# --- the selector check before click and type

def test_click_and_type_without_a_tab_are_checked_with_an_exists_query() -> None:
    click = {"type": "click", "data": {"selector": "#go", "index": 1, "tabId": None}, "requestId": 1}
    assert preflight.check_query(click, "c1") == {
        "type": "query", "data": {"selector": "#go", "mode": "exists", "options": {}}, "requestId": "c1"}
    typed = {"type": "type", "data": {"selector": "#q", "text": "hi"}, "requestId": 2}
    assert preflight.check_query(typed, "c2")["data"]["selector"] == "#q"


@pytest.mark.parametrize("command", [
    {"type": "navigate", "data": {"url": "http://x/"}, "requestId": 1},
    {"type": "click", "data": {"selector": "#go", "tabId": 5}, "requestId": 1},  # query reads the active tab only
    {"type": "click", "data": "nonsense", "requestId": 1},
])
def test_other_commands_are_not_checked(command: dict) -> None:
    assert preflight.check_query(command, "c") is None


def click(index: int = 0) -> dict:
    return {"type": "click", "data": {"selector": "a.b", "index": index, "tabId": None}, "requestId": 9}


@pytest.mark.parametrize("command, check, error", [
    (click(), {"success": True, "data": {"exists": False, "count": 0}}, "Element not found: a.b at index 0"),
    (click(2), {"success": True, "data": {"exists": True, "count": 2}}, "Element not found: a.b at index 2"),
    (click(), {"success": True, "data": None}, "Invalid selector: a.b"),
    ({"type": "type", "data": {"selector": "a.b", "text": "x"}, "requestId": 9},
     {"success": True, "data": {"exists": False, "count": 0}}, "Element not found: a.b"),
    (click(), {"requestId": "c", "success": False, "error": "No active tab found"}, "No active tab found"),
])
def test_a_failed_check_answers_the_command(command: dict, check: dict, error: str) -> None:
    answer = preflight.verdict(command, check)
    assert answer is not None
    assert (answer["requestId"], answer["success"], answer["error"]) == (9, False, error)


def test_a_passed_check_lets_the_command_go() -> None:
    assert preflight.verdict(click(1), {"success": True, "data": {"exists": True, "count": 2}}) is None


def query(mode: str | None = None) -> dict:
    data = {"selector": "div[[", "options": {}} | ({"mode": mode} if mode else {})
    return {"type": "query", "data": data, "requestId": 9}


def test_a_query_with_invalid_css_fails_with_the_reason_whatever_its_mode() -> None:
    invalid = {"success": True, "data": None}   # what the original extension answers for div[[
    for mode in (None, "list", "text", "value", "html", "exists"):
        command = query(mode)
        assert preflight.check_query(command, "c")["data"] == {"selector": "div[[", "mode": "exists", "options": {}}
        assert preflight.verdict(command, invalid) == {"requestId": 9, "success": False,
                                                       "error": "Invalid selector: div[["}, mode
    assert preflight.check_query(query("page_text"), "c") is None   # no selector is used


def test_a_valid_query_goes_ahead_and_an_exists_query_is_answered_by_its_check() -> None:
    none_found = {"requestId": "c", "success": True, "data": {"exists": False, "count": 0}}
    assert preflight.verdict(query("text"), none_found) is None
    assert preflight.verdict(query(), none_found) is None
    assert preflight.verdict(query("exists"), none_found) == {**none_found, "requestId": 9}


def test_a_held_poll_takes_a_command_submitted_while_it_waits(clock: FakeClock) -> None:
    q = make_queue(clock)
    got: list[dict | None] = []
    waiter = threading.Thread(target=lambda: got.append(q.poll(wait_s=10)))
    waiter.start()
    q.submit(cmd(7))
    waiter.join(5)
    assert got and got[0] is not None and got[0]["requestId"] == 7


def test_a_held_poll_ends_empty_at_its_wait_or_when_the_queue_closes(clock: FakeClock) -> None:
    q = make_queue(clock)
    assert q.poll(wait_s=0.05) is None
    got: list[dict | None] = []
    waiter = threading.Thread(target=lambda: got.append(q.poll(wait_s=30)))
    waiter.start()
    q.close()
    waiter.join(5)
    assert got == [None]
