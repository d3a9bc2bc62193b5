"""Answers go out through their schemas: every JSON route of the bridge dumps what its view returns
with the schema its document shows, so a field the schema lacks never reaches the caller, and the
dump keeps the answer as the view built it (key order, ints, whole lists)."""
from __future__ import annotations

from typing import Any

from marshmallow import fields
from support.agent import nav

from app.api.contract import Answer, IdpiWarned, Number, OneOf, RawList, SavedFileResponse
from app.api.routes.snapshot_contract import SnapshotResponse


class _Point(IdpiWarned):
    x = Number(required=True)
    nodes = RawList(fields.Dict())


def test_a_field_the_schema_lacks_is_left_out_and_the_views_order_kept() -> None:
    out = _Point().dump({"x": 3, "secret": "s3cret", "idpiWarning": "w"})
    assert out == {"x": 3, "idpiWarning": "w"}
    assert list(out) == ["x", "idpiWarning"]  # the view's order, not the mixin's first


def test_a_key_the_answer_lacks_is_not_taken_from_the_dict_itself() -> None:
    class Listed(Answer):
        items = fields.List(fields.String())
        count = fields.Integer()

    assert Listed().dump({"count": 0}) == {"count": 0}  # not dict.items


def test_numbers_and_big_lists_are_handed_on_as_they_are() -> None:
    nodes = [{"ref": "e1", "role": "button", "anything": [1, 2]}]
    out = _Point().dump({"x": 3, "nodes": nodes})
    assert out["x"] == 3 and isinstance(out["x"], int)  # not 3.0
    assert _Point().dump({"x": 2.5})["x"] == 2.5
    assert out["nodes"] is nodes  # not copied node by node


def test_one_of_dumps_with_the_shape_the_answer_has() -> None:
    one = OneOf(SnapshotResponse, SavedFileResponse)
    assert one == {"oneOf": [SnapshotResponse, SavedFileResponse]}  # what the document shows
    saved = {"path": "/x.json", "size": 3, "format": "json", "timestamp": "t", "extra": 1}
    assert one.dump(saved) == {"path": "/x.json", "size": 3, "format": "json", "timestamp": "t"}
    snap = {"url": "u", "title": "t", "count": 0, "nodes": [], "extra": 1}
    assert one.dump(snap) == {"url": "u", "title": "t", "count": 0, "nodes": []}


def _json_schemas(view: Any) -> list[Any]:
    docs = getattr(view, "_apidoc", {}).get("response", {}).get("responses", {})
    return [d["schema"] for status, found in docs.items() if str(status).startswith("2") for d in found
            if d.get("content_type") in (None, "application/json") and "schema" in d]


def test_every_json_answer_is_dumped_by_a_schema(client) -> None:
    app = client.application
    views = {name: view for name, view in app.view_functions.items() if getattr(view, "_apidoc", None)}
    assert len(views) > 60
    for name, view in views.items():
        for schema in _json_schemas(view):
            assert hasattr(schema, "dump"), f"{name}: a JSON answer documented by a bare dict is not dumped"


def test_a_real_answer_holds_what_its_schema_declares(client, site) -> None:
    info = nav(client, site.url("form.html"))
    r = client.get(f"/snapshot?tabId={info['tabId']}&filter=interactive")
    assert r.status_code == 200 and r.is_json
    assert set(r.json) <= set(SnapshotResponse().fields) | {"browserRestarted"}
    assert list(r.json)[:3] == ["url", "title", "nodes"]  # as the snapshot document is built
    assert r.json["count"] == len(r.json["nodes"]) > 0
