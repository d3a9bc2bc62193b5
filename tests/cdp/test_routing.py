"""Unit tests for cdp.routing: classifying CDP messages and finding the sink that owns a session."""
from __future__ import annotations

from cdp.routing import Route, route, session_owner


def test_reply_without_session_is_a_browser_level_reply_with_its_call_id() -> None:
    r = route({"id": 7, "result": {"targetId": "T1"}})
    assert r == Route("reply", None, call_id=7)


def test_reply_on_a_session_keeps_its_session_id_and_call_id() -> None:
    r = route({"id": 12, "sessionId": "S1", "result": {}})
    assert r.kind == "reply"
    assert r.session_id == "S1"
    assert r.call_id == 12
    assert r.method is None


def test_error_reply_is_still_a_reply() -> None:
    r = route({"id": 3, "sessionId": "S1", "error": {"code": -32000, "message": "No node"}})
    assert (r.kind, r.session_id, r.call_id) == ("reply", "S1", 3)


def test_reply_with_call_id_zero_is_a_reply_not_an_event() -> None:
    r = route({"id": 0, "result": {}})
    assert r.kind == "reply"
    assert r.call_id == 0


def test_event_on_a_session_carries_its_method_and_session() -> None:
    r = route({"method": "Page.loadEventFired", "sessionId": "S2", "params": {"timestamp": 1.5}})
    assert r == Route("event", "S2", method="Page.loadEventFired")
    assert r.call_id is None


def test_browser_level_event_has_no_session() -> None:
    r = route({"method": "Target.targetCreated", "params": {"targetInfo": {"targetId": "T9"}}})
    assert r.kind == "event"
    assert r.session_id is None
    assert r.method == "Target.targetCreated"


def test_event_without_params_is_an_event() -> None:
    r = route({"method": "Page.domContentEventFired", "sessionId": "S1"})
    assert (r.kind, r.method, r.session_id) == ("event", "Page.domContentEventFired", "S1")


def test_attached_to_target_names_the_child_session_and_the_parent_it_arrived_on() -> None:
    r = route({"method": "Target.attachedToTarget", "sessionId": "PARENT",
               "params": {"sessionId": "CHILD", "targetInfo": {"type": "iframe"}, "waitingForDebugger": False}})
    assert r.kind == "attached"
    assert r.session_id == "PARENT"
    assert r.child_session_id == "CHILD"
    assert r.method == "Target.attachedToTarget"


def test_browser_level_attach_has_no_parent_session_but_names_the_child() -> None:
    r = route({"method": "Target.attachedToTarget", "params": {"sessionId": "TAB1"}})
    assert (r.kind, r.session_id, r.child_session_id) == ("attached", None, "TAB1")


def test_detached_from_target_names_the_detached_child_session() -> None:
    r = route({"method": "Target.detachedFromTarget", "sessionId": "PARENT",
               "params": {"sessionId": "CHILD", "targetId": "F1"}})
    assert r.kind == "detached"
    assert r.session_id == "PARENT"
    assert r.child_session_id == "CHILD"


def test_detach_without_params_has_no_child_session() -> None:
    r = route({"method": "Target.detachedFromTarget"})
    assert r.kind == "detached"
    assert r.child_session_id is None


def test_target_crashed_is_its_own_kind_on_the_crashed_session() -> None:
    r = route({"method": "Inspector.targetCrashed", "sessionId": "S3", "params": {}})
    assert r == Route("crashed", "S3", method="Inspector.targetCrashed")


def test_a_reply_is_never_mistaken_for_an_attach_even_with_a_method_field() -> None:
    # Only messages without "id" are events; an "id" always means the answer to a command.
    r = route({"id": 5, "method": "Target.attachedToTarget", "params": {"sessionId": "X"}})
    assert r.kind == "reply"
    assert r.child_session_id is None


def test_session_owner_finds_the_sink_of_a_known_session() -> None:
    sink_a, sink_b = object(), object()
    owners = {"S1": sink_a, "S2": sink_b}
    assert session_owner("S1", owners) is sink_a
    assert session_owner("S2", owners) is sink_b


def test_session_owner_of_an_unknown_session_is_none() -> None:
    assert session_owner("nope", {"S1": object()}) is None


def test_session_owner_of_browser_level_messages_is_none_even_if_an_empty_key_exists() -> None:
    assert session_owner(None, {"": object(), "S1": object()}) is None
