"""Unit tests of the request schemas (what each route accepts) and app.web.parser.load (path tab ids)."""
from __future__ import annotations

from typing import Any

import pytest
from marshmallow import ValidationError

from app.api.contract import ACTION_KINDS, ActionSchema
from app.api.routes.content_contract import ScreenshotQuerySchema
from app.api.routes.navigation_contract import NavigateSchema
from app.api.routes.snapshot_contract import SnapshotQuerySchema
from app.web.errors import BadRequest
from app.web.parser import load


def errors_of(schema: Any, data: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(ValidationError) as info:
        schema.load(data)
    return info.value.messages  # type: ignore[return-value]


# --- ActionSchema --------------------------------------------------------------------------------
def test_unknown_action_kind_is_rejected_naming_kind() -> None:
    errs = errors_of(ActionSchema(), {"kind": "teleport", "ref": "e1"})
    assert list(errs) == ["kind"]
    assert "unknown action kind: teleport" in errs["kind"][0]


def test_missing_kind_says_so() -> None:
    errs = errors_of(ActionSchema(), {"ref": "e1"})
    assert errs["kind"] == ["missing required field 'kind'"]


@pytest.mark.parametrize("kind", ["type", "fill"])
def test_type_and_fill_need_text(kind: str) -> None:
    errs = errors_of(ActionSchema(), {"kind": kind, "ref": "e1"})
    assert errs == {"text": [f"{kind} needs 'text'"]}


def test_type_without_a_target_types_into_the_focused_element() -> None:
    assert ActionSchema().load({"kind": "type", "text": "hello"}).step.text == "hello"


def test_type_accepts_value_in_place_of_text() -> None:
    assert ActionSchema().load({"kind": "type", "value": "hello"}).step.value == "hello"


def test_empty_text_is_still_text() -> None:
    assert ActionSchema().load({"kind": "fill", "ref": "e1", "text": ""}).step.text == ""


@pytest.mark.parametrize("kind", ["fill", "focus", "select", "check", "uncheck"])
def test_element_actions_need_a_target(kind: str) -> None:
    errs = errors_of(ActionSchema(), {"kind": kind, "text": "x", "value": "x"})
    assert list(errs) == ["ref"]
    assert f"{kind} needs a target" in errs["ref"][0]


@pytest.mark.parametrize("kind", ["fill", "focus", "select", "check", "uncheck"])
def test_element_actions_do_not_take_a_point_as_target(kind: str) -> None:
    errs = errors_of(ActionSchema(), {"kind": kind, "text": "x", "value": "x", "x": 10, "y": 20})
    assert list(errs) == ["ref"]


@pytest.mark.parametrize("target", [{"ref": "e3"}, {"selector": "#name"}, {"nodeId": 42}])
@pytest.mark.parametrize("kind", ["fill", "focus", "select", "check", "uncheck"])
def test_element_actions_accept_any_kind_of_target(kind: str, target: dict[str, Any]) -> None:
    data = ActionSchema().load({"kind": kind, "text": "x", "value": "x", **target})
    assert data.step.kind == kind


@pytest.mark.parametrize("kind", ["click", "dblclick", "hover"])
def test_pointer_actions_need_a_target_or_a_point(kind: str) -> None:
    errs = errors_of(ActionSchema(), {"kind": kind})
    assert list(errs) == ["ref"]
    assert "'x' and 'y'" in errs["ref"][0]


@pytest.mark.parametrize("kind", ["click", "hover"])
@pytest.mark.parametrize("half", [{"x": 10}, {"y": 10}])
def test_half_a_point_is_not_a_point(kind: str, half: dict[str, Any]) -> None:
    assert list(errors_of(ActionSchema(), {"kind": kind, **half})) == ["ref"]


@pytest.mark.parametrize("kind", ["click", "dblclick", "hover"])
@pytest.mark.parametrize("target", [{"ref": "e1"}, {"selector": "button"}, {"nodeId": 7}, {"x": 0, "y": 0}])
def test_pointer_actions_accept_a_target_or_a_point(kind: str, target: dict[str, Any]) -> None:
    assert ActionSchema().load({"kind": kind, **target}).step.kind == kind


def test_point_coordinates_are_numbers() -> None:
    data = ActionSchema().load({"kind": "click", "x": "12.5", "y": 40})
    assert (data.step.target.x, data.step.target.y) == (12.5, 40.0)


def test_press_needs_a_key() -> None:
    assert errors_of(ActionSchema(), {"kind": "press"}) == {"key": ["press needs 'key'"]}
    assert errors_of(ActionSchema(), {"kind": "press", "key": ""}) == {"key": ["press needs 'key'"]}


def test_press_with_a_key_needs_no_target() -> None:
    assert ActionSchema().load({"kind": "press", "key": "Enter"}).step.key == "Enter"


def test_select_needs_a_value() -> None:
    errs = errors_of(ActionSchema(), {"kind": "select", "ref": "e1"})
    assert errs == {"value": ["select needs 'value'"]}


def test_scroll_needs_nothing_else() -> None:
    data = ActionSchema().load({"kind": "scroll"})
    assert data.step.kind == "scroll"


def test_every_documented_kind_is_accepted_with_its_requirements() -> None:
    full = {"ref": "e1", "text": "t", "value": "v", "key": "Enter", "dragX": 40}
    for kind in ACTION_KINDS:
        assert ActionSchema().load({"kind": kind, **full}).step.kind == kind


def test_action_defaults() -> None:
    data = ActionSchema().load({"kind": "click", "ref": "e1"})
    assert data.step.modifiers == 0
    assert data.step.button == "left"


@pytest.mark.parametrize("modifiers,ok", [(-1, False), (0, True), (15, True), (16, False)])
def test_modifiers_are_a_four_bit_mask(modifiers: int, ok: bool) -> None:
    data = {"kind": "press", "key": "a", "modifiers": modifiers}
    if ok:
        assert ActionSchema().load(data).step.modifiers == modifiers
    else:
        assert list(errors_of(ActionSchema(), data)) == ["modifiers"]


def test_unknown_mouse_button_is_rejected() -> None:
    assert list(errors_of(ActionSchema(), {"kind": "click", "ref": "e1", "button": "fourth"})) == ["button"]


def test_unknown_fields_are_ignored_for_compatibility() -> None:
    data = ActionSchema().load({"kind": "click", "ref": "e1", "dismissBanners": True, "hasXY": False})
    assert data.step.kind == "click" and not hasattr(data, "dismissBanners") and not hasattr(data.step, "hasXY")


def test_field_errors_come_before_cross_field_rules() -> None:
    # A bad kind is reported as such, not as a missing target.
    errs = errors_of(ActionSchema(), {"kind": "clik"})
    assert "kind" in errs
    assert "ref" not in errs


# --- NavigateSchema ------------------------------------------------------------------------------
def test_navigate_requires_url() -> None:
    assert errors_of(NavigateSchema(), {}) == {"url": ["url required"]}


def test_navigate_rejects_an_empty_url() -> None:
    assert list(errors_of(NavigateSchema(), {"url": ""})) == ["url"]


def test_navigate_defaults() -> None:
    data = NavigateSchema().load({"url": "http://example.test/"})
    assert data == {"url": "http://example.test/", "newTab": False, "waitFor": "dom", "waitSelector": "",
                    "waitTitle": 0, "dismissBanners": False}


@pytest.mark.parametrize("wait_for", ["none", "dom", "load", "networkidle"])
def test_navigate_accepts_each_wait_mode(wait_for: str) -> None:
    assert NavigateSchema().load({"url": "u", "waitFor": wait_for})["waitFor"] == wait_for


@pytest.mark.parametrize("wait_for", ["idle", "DOM", "", "domcontentloaded"])
def test_navigate_rejects_an_unknown_wait_mode(wait_for: str) -> None:
    with pytest.raises(BadRequest) as info:  # the original's own code, not a plain validation error
        NavigateSchema().load({"url": "u", "waitFor": wait_for})
    assert (info.value.code, info.value.details) == ("bad_wait_for", {"field": "waitFor"})


def test_wait_for_selector_needs_a_selector() -> None:
    errs = errors_of(NavigateSchema(), {"url": "u", "waitFor": "selector"})
    assert list(errs) == ["waitSelector"]
    assert errs["waitSelector"] == ["waitFor 'selector' needs waitSelector"]


def test_wait_for_selector_with_a_selector_is_accepted() -> None:
    data = NavigateSchema().load({"url": "u", "waitFor": "selector", "waitSelector": "#ready"})
    assert (data["waitFor"], data["waitSelector"]) == ("selector", "#ready")


# Above 120 s the view takes 120 (the original clamps rather than refuses); 0 is the config's default.
@pytest.mark.parametrize("timeout,ok", [(0, True), (0.1, True), (30, True), (120, True), (120.5, True),
                                        (-1, False)])
def test_navigate_timeout_range(timeout: float, ok: bool) -> None:
    data = {"url": "u", "timeout": timeout}
    if ok:
        assert NavigateSchema().load(data)["timeout"] == timeout
    else:
        assert list(errors_of(NavigateSchema(), data)) == ["timeout"]


# --- SnapshotQuerySchema -------------------------------------------------------------------------
def test_snapshot_query_defaults() -> None:
    data = SnapshotQuerySchema().load({})
    assert data == {"filter": "all", "interactive": False, "format": "json", "compact": False, "depth": -1,
                    "maxTokens": 0, "selector": "", "after": "", "diff": False, "output": "", "path": ""}


def test_snapshot_query_reads_boolean_strings() -> None:
    data = SnapshotQuerySchema().load({"interactive": "true", "compact": "true"})
    assert data["interactive"] is True
    assert data["compact"] is True
    data = SnapshotQuerySchema().load({"interactive": "false", "compact": "0"})
    assert data["interactive"] is False
    assert data["compact"] is False


def test_snapshot_query_reads_numbers_from_strings() -> None:
    data = SnapshotQuerySchema().load({"depth": "3", "maxTokens": "500"})
    assert (data["depth"], data["maxTokens"]) == (3, 500)


@pytest.mark.parametrize("fmt", ["json", "compact", "text", "yaml"])
def test_snapshot_query_accepts_each_format(fmt: str) -> None:
    assert SnapshotQuerySchema().load({"format": fmt})["format"] == fmt


@pytest.mark.parametrize("fmt", ["xml", "JSON", "", "markdown"])
def test_snapshot_query_rejects_unknown_formats(fmt: str) -> None:
    assert list(errors_of(SnapshotQuerySchema(), {"format": fmt})) == ["format"]


def test_snapshot_depth_minus_one_means_unlimited_and_below_is_rejected() -> None:
    assert SnapshotQuerySchema().load({"depth": "-1"})["depth"] == -1
    assert SnapshotQuerySchema().load({"depth": "0"})["depth"] == 0
    assert list(errors_of(SnapshotQuerySchema(), {"depth": "-2"})) == ["depth"]


def test_snapshot_rejects_negative_max_tokens_and_non_numbers() -> None:
    assert list(errors_of(SnapshotQuerySchema(), {"maxTokens": "-5"})) == ["maxTokens"]
    assert list(errors_of(SnapshotQuerySchema(), {"depth": "deep"})) == ["depth"]


def test_snapshot_filter_is_all_or_interactive() -> None:
    assert SnapshotQuerySchema().load({"filter": "interactive"})["filter"] == "interactive"
    assert list(errors_of(SnapshotQuerySchema(), {"filter": "buttons"})) == ["filter"]


# --- ScreenshotQuerySchema -----------------------------------------------------------------------
def test_screenshot_defaults() -> None:
    data = ScreenshotQuerySchema().load({})
    assert data == {"format": "jpeg", "quality": 80, "raw": False, "beyondViewport": False, "scale": 1.0}


@pytest.mark.parametrize("quality,ok", [("-1", False), ("0", True), ("100", True), ("101", False)])
def test_screenshot_quality_is_0_to_100(quality: str, ok: bool) -> None:
    if ok:
        assert ScreenshotQuerySchema().load({"quality": quality})["quality"] == int(quality)
    else:
        assert list(errors_of(ScreenshotQuerySchema(), {"quality": quality})) == ["quality"]


@pytest.mark.parametrize("scale,ok", [("0", False), ("0.04", False), ("0.05", True), ("4", True), ("4.01", False)])
def test_screenshot_scale_range(scale: str, ok: bool) -> None:
    if ok:
        assert ScreenshotQuerySchema().load({"scale": scale})["scale"] == float(scale)
    else:
        assert list(errors_of(ScreenshotQuerySchema(), {"scale": scale})) == ["scale"]


@pytest.mark.parametrize("fmt,ok", [("jpeg", True), ("jpg", True), ("png", True), ("gif", False), ("webp", False)])
def test_screenshot_formats(fmt: str, ok: bool) -> None:
    if ok:
        assert ScreenshotQuerySchema().load({"format": fmt})["format"] == fmt
    else:
        assert list(errors_of(ScreenshotQuerySchema(), {"format": fmt})) == ["format"]


def test_screenshot_raw_reads_a_boolean_string() -> None:
    assert ScreenshotQuerySchema().load({"raw": "true"})["raw"] is True


# --- params.load with a path tab id --------------------------------------------------------------
def test_path_tab_id_fills_in_the_tab() -> None:
    data = load(NavigateSchema, {"url": "http://example.test/"}, path_tab_id="T1")
    assert data["tabId"] == "T1"


def test_body_tab_id_equal_to_the_path_id_is_fine() -> None:
    assert load(NavigateSchema, {"url": "u", "tabId": "T1"}, path_tab_id="T1")["tabId"] == "T1"


def test_body_tab_id_that_differs_from_the_path_is_rejected() -> None:
    with pytest.raises(BadRequest) as info:
        load(NavigateSchema, {"url": "u", "tabId": "T2"}, path_tab_id="T1")
    err = info.value
    assert "does not match" in err.message
    assert err.status == 400
    assert err.details == {"field": "tabId"}


@pytest.mark.parametrize("bad", [123, ["T1"], {"id": "T1"}, True, ""])
def test_body_tab_id_that_is_not_a_non_empty_string_is_invalid(bad: Any) -> None:
    with pytest.raises(BadRequest) as info:
        load(NavigateSchema, {"url": "u", "tabId": bad}, path_tab_id="T1")
    assert info.value.message == "invalid tabId"
    assert info.value.details == {"field": "tabId"}


def test_null_body_tab_id_defers_to_the_path() -> None:
    assert load(NavigateSchema, {"url": "u", "tabId": None}, path_tab_id="T1")["tabId"] == "T1"


def test_path_tab_id_does_not_change_the_callers_dict() -> None:
    body = {"url": "u"}
    load(NavigateSchema, body, path_tab_id="T1")
    assert body == {"url": "u"}


def test_without_a_path_id_the_body_tab_id_is_kept() -> None:
    assert load(NavigateSchema, {"url": "u", "tabId": "T9"})["tabId"] == "T9"
    assert "tabId" not in load(NavigateSchema, {"url": "u"})


def test_without_a_path_id_a_non_string_tab_id_fails_validation_on_tab_id() -> None:
    with pytest.raises(ValidationError) as info:
        load(NavigateSchema, {"url": "u", "tabId": 5})
    assert "tabId" in info.value.messages


def test_schema_errors_still_apply_with_a_path_id() -> None:
    with pytest.raises(ValidationError) as info:
        load(NavigateSchema, {}, path_tab_id="T1")
    assert info.value.messages == {"url": ["url required"]}
