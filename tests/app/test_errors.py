"""Unit tests for app.web.errors: which status, code and body each failure becomes."""
from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from marshmallow import Schema, ValidationError, fields

from app.api.contract import ActionSchema
from app.api.routes.navigation_contract import NavigateSchema
from app.web import errors as api
from app.web.errors import (
    MAX_MESSAGE,
    APIError,
    BadRequest,
    Forbidden,
    NotFound,
    Unauthorized,
    body,
    disabled,
    first_validation_error,
    from_exception,
)
from cdp import errors as cdp


def mapped(exc: BaseException) -> APIError:
    err = from_exception(exc)
    assert err is not None, f"{type(exc).__name__} is not mapped"
    return err


# --- cdp errors ----------------------------------------------------------------------------------
def test_stale_ref_is_409_with_its_candidates_in_details() -> None:
    candidates = [{"ref": "e12", "role": "button", "name": "Buy"}, {"ref": "e14", "role": "button", "name": "Buy now"}]
    err = mapped(cdp.StaleRef("e5", role="button", name="Buy", candidates=candidates))
    assert (err.status, err.code) == (409, "stale_ref")
    assert err.details["ref"] == "e5"
    assert err.details["role"] == "button"
    assert err.details["name"] == "Buy"
    assert err.details["candidates"] == candidates
    assert "e5" in err.message and "snapshot" in err.message
    assert not err.retryable


def test_stale_ref_without_candidates_has_an_empty_candidate_list() -> None:
    err = mapped(cdp.StaleRef("e5"))
    assert body(err)["details"]["candidates"] == []


def test_unknown_ref_is_404_ref_not_found() -> None:
    err = mapped(cdp.UnknownRef("e99"))
    assert (err.status, err.code) == (404, "ref_not_found")
    assert err.details == {"ref": "e99"}
    assert "e99" in err.message


def test_no_such_element_is_404_element_not_found() -> None:
    err = mapped(cdp.NoSuchElement("no element matches '#missing'"))
    assert (err.status, err.code) == (404, "element_not_found")
    assert err.message == "no element matches '#missing'"


def test_dialog_blocking_is_409_and_says_what_dialog() -> None:
    err = mapped(cdp.DialogBlocking("confirm", "Delete everything?"))
    assert (err.status, err.code) == (409, "dialog_blocking")
    assert err.details["dialog_type"] == "confirm"
    assert err.details["dialog_message"] == "Delete everything?"
    assert "/dialog" in err.details["suggestion"]


def test_action_error_is_400_action_failed() -> None:
    err = mapped(cdp.ActionError("element is not a <select>"))
    assert (err.status, err.code) == (400, "action_failed")
    assert isinstance(err, BadRequest)
    assert not err.retryable


def test_navigation_error_is_502_navigation_failed() -> None:
    err = mapped(cdp.NavigationError("net::ERR_NAME_NOT_RESOLVED"))
    assert (err.status, err.code) == (502, "navigation_failed")
    assert "ERR_NAME_NOT_RESOLVED" in err.message


def test_crashed_tab_is_409_tab_crashed_not_tab_closed() -> None:
    err = mapped(cdp.TargetCrashed("the tab crashed"))
    assert (err.status, err.code) == (409, "tab_crashed")


def test_closed_tab_is_404_tab_closed() -> None:
    err = mapped(cdp.TargetClosed("target detached"))
    assert (err.status, err.code) == (404, "tab_closed")


def test_timeout_is_504_and_retryable() -> None:
    err = mapped(cdp.CDPTimeout("Page.navigate did not answer within 30.0 s"))
    assert (err.status, err.code) == (504, "timeout")
    assert err.retryable
    assert body(err)["retryable"] is True


def test_browser_gone_is_503_browser_unavailable_and_retryable() -> None:
    err = mapped(cdp.BrowserGone("browser connection lost"))
    assert (err.status, err.code) == (503, "browser_unavailable")
    assert err.retryable
    assert err.message.startswith("browser connection lost")
    assert "restarted" in err.message


def test_launch_error_is_503_browser_launch_failed() -> None:
    err = mapped(cdp.LaunchError("no Chrome or Chromium found"))
    assert (err.status, err.code) == (503, "browser_launch_failed")
    assert err.retryable


def test_bad_snapshot_cursor_is_400_naming_the_after_field() -> None:
    err = mapped(cdp.BadCursor("e42"))
    assert (err.status, err.code) == (400, "bad_cursor")
    assert err.message == "after=e42: no such ref in this snapshot"
    assert err.details == {"field": "after"}


def test_other_cdp_errors_are_500_action_failed_and_retryable() -> None:
    err = mapped(cdp.CDPError("DOM.focus", "Element is not focusable", -32000))
    assert (err.status, err.code) == (500, "action_failed")
    assert err.retryable
    assert err.message == "DOM.focus: Element is not focusable"


def test_api_errors_pass_through_unchanged() -> None:
    original = NotFound("tab T1 not found", code="tab_not_found")
    assert from_exception(original) is original


def test_foreign_exceptions_are_not_mapped() -> None:
    assert from_exception(RuntimeError("boom")) is None
    assert from_exception(KeyError("x")) is None


def test_each_cdp_error_class_gets_its_own_code() -> None:
    samples = [
        cdp.StaleRef("e1"), cdp.UnknownRef("e1"), cdp.NoSuchElement("x"), cdp.DialogBlocking("alert", "hi"),
        cdp.ActionError("x"), cdp.NavigationError("x"), cdp.TargetCrashed("x"), cdp.TargetClosed("x"),
        cdp.CDPTimeout("x"), cdp.BrowserGone("x"), cdp.LaunchError("x"),
    ]
    codes = [mapped(e).code for e in samples]
    assert len(set(codes)) == len(codes)


# --- validation errors ---------------------------------------------------------------------------
def test_validation_error_is_400_naming_the_field() -> None:
    err = mapped(ValidationError({"url": ["url required"]}))
    assert (err.status, err.code) == (400, "bad_request")
    assert err.message == "url: url required"
    assert err.details == {"field": "url"}


def test_nested_validation_error_names_the_dotted_path() -> None:
    err = mapped(ValidationError({"viewport": {"width": ["Not a valid integer."]}}))
    assert err.message == "viewport.width: Not a valid integer."
    assert err.details == {"field": "viewport.width"}


def test_validation_error_in_a_list_item_names_its_index() -> None:
    err = mapped(ValidationError({"actions": {1: {"kind": ["Missing data for required field."]}}}))
    assert err.details == {"field": "actions.1.kind"}
    assert err.message.startswith("actions.1.kind: ")


def test_schema_level_validation_error_has_no_field() -> None:
    err = mapped(ValidationError("the request as a whole is wrong"))
    assert err.status == 400
    assert err.message == "the request as a whole is wrong"
    assert "details" not in body(err)


def test_schema_level_error_under_a_nested_field_names_that_field() -> None:
    field, reason = first_validation_error({"viewport": {"_schema": ["width and height go together"]}})
    assert (field, reason) == ("viewport", "width and height go together")


def test_validation_error_from_a_real_schema_names_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        NavigateSchema().load({})
    err = mapped(info.value)
    assert err.status == 400
    assert err.details == {"field": "url"}
    assert err.message == "url: url required"


def test_validation_error_from_a_nested_schema_names_the_path() -> None:
    class Size(Schema):
        width = fields.Integer(required=True)

    class Outer(Schema):
        viewport = fields.Nested(Size, required=True)

    with pytest.raises(ValidationError) as info:
        Outer().load({"viewport": {"width": "wide"}})
    err = mapped(info.value)
    assert err.details == {"field": "viewport.width"}
    assert err.message.startswith("viewport.width: ")


def test_action_schema_rule_errors_reach_the_client_with_the_field() -> None:
    with pytest.raises(ValidationError) as info:
        ActionSchema().load({"kind": "type", "ref": "e1"})
    err = mapped(info.value)
    assert err.details == {"field": "text"}
    assert err.message == "text: type needs 'text'"


# --- disabled ------------------------------------------------------------------------------------
def test_disabled_feature_is_a_403_with_a_feature_code_and_the_setting() -> None:
    err = disabled("evaluate", "security.allowEvaluate")
    assert isinstance(err, Forbidden)
    assert err.status == 403
    assert err.code == "evaluate_disabled"
    assert err.details["setting"] == "security.allowEvaluate"
    assert "security.allowEvaluate" in err.message
    assert "evaluate" in err.message
    assert "security.allowEvaluate" in err.details["hint"]


def test_disabled_body_carries_code_and_details_but_is_not_retryable() -> None:
    out = body(disabled("download", "security.allowDownload"))
    assert out["code"] == "download_disabled"
    assert out["details"]["setting"] == "security.allowDownload"
    assert "retryable" not in out


# --- body ----------------------------------------------------------------------------------------
def test_body_has_error_and_code_only_when_nothing_else_applies() -> None:
    assert body(BadRequest("nope")) == {"error": "nope", "code": "bad_request"}


def test_body_caps_the_message_length() -> None:
    out = body(BadRequest("x" * 10_000))
    assert len(out["error"]) == MAX_MESSAGE == 1024


def test_body_keeps_a_message_of_exactly_the_limit() -> None:
    msg = "y" * MAX_MESSAGE
    assert body(BadRequest(msg))["error"] == msg


def test_body_caps_long_messages_from_mapped_exceptions() -> None:
    out = body(mapped(cdp.NavigationError("z" * 5000)))
    assert len(out["error"]) <= 1024


def test_body_includes_retryable_and_details_when_set() -> None:
    out = body(APIError("later", status=503, code="busy", retryable=True, details={"after": 2}))
    assert out == {"error": "later", "code": "busy", "retryable": True, "details": {"after": 2}}


def test_explicit_status_and_code_override_the_class_defaults() -> None:
    err = NotFound("gone", code="tab_not_found", status=410)
    assert (err.status, err.code) == (410, "tab_not_found")
    assert (NotFound("x").status, NotFound("x").code) == (404, "not_found")


# --- the Flask handlers (in-process test client, no sockets) -------------------------------------
@pytest.fixture
def client() -> Any:
    app = Flask("errors_test")
    api.register(app)

    @app.get("/raise/<what>")
    def raiser(what: str) -> Any:
        raise {
            "stale": cdp.StaleRef("e3", "link", "Next"),
            "crash": cdp.TargetCrashed("the tab crashed"),
            "auth": Unauthorized("missing bearer token"),
            "bug": ZeroDivisionError("division by zero"),
            "long": BadRequest("q" * 4000),
        }[what]

    return app.test_client()


def test_handler_answers_with_the_mapped_status_and_body(client: Any) -> None:
    resp = client.get("/raise/stale")
    assert resp.status_code == 409
    data = resp.get_json()
    assert data["code"] == "stale_ref"
    assert data["details"]["ref"] == "e3"


def test_handler_maps_a_crashed_tab(client: Any) -> None:
    resp = client.get("/raise/crash")
    assert (resp.status_code, resp.get_json()["code"]) == (409, "tab_crashed")


def test_unauthorized_answer_carries_a_bearer_challenge(client: Any) -> None:
    resp = client.get("/raise/auth")
    assert resp.status_code == 401
    assert resp.get_json()["code"] == "missing_token"
    assert resp.headers["WWW-Authenticate"] == 'Bearer realm="pinchtab", error="missing_token"'


def test_unexpected_exception_is_a_500_that_names_only_its_type(client: Any) -> None:
    resp = client.get("/raise/bug")
    assert resp.status_code == 500
    data = resp.get_json()
    assert data == {"error": "internal error: ZeroDivisionError", "code": "internal"}


def test_handler_caps_long_messages(client: Any) -> None:
    assert len(client.get("/raise/long").get_json()["error"]) == 1024


def test_unknown_route_points_at_the_openapi_listing(client: Any) -> None:
    resp = client.get("/no/such/route")
    assert resp.status_code == 404
    assert resp.get_json() == {"error": "no such route; GET /openapi.json lists every route", "code": "not_found"}


def test_wrong_method_is_405_method_not_allowed(client: Any) -> None:
    resp = client.post("/raise/stale")
    assert resp.status_code == 405
    assert resp.get_json()["code"] == "method_not_allowed"
