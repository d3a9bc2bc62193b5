"""GET /openapi.json documents every answer, and the answers a real browser gives match it."""
from __future__ import annotations

from typing import Any

from marshmallow import Schema
from support.agent import compact, nav, ref_of
from support.waits import wait_until

from app.api.contract import ActionsResponse, InlineFileResponse
from app.api.routes.actions_contract import ActionResponse
from app.api.routes.content_contract import TextResponse
from app.api.routes.locate_contract import FindResponse
from app.api.routes.logs_contract import ConsoleResponse
from app.api.routes.snapshot_contract import SnapshotResponse
from app.api.routes.tabs_contract import HealthResponse, TabsResponse
from app.web.openapi import ErrorSchema
from app.web.schemas import PageInfoResponse


def resolve(doc: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    """``node``, or what its ``$ref`` points at in ``doc``."""
    ref = node.get("$ref")
    if ref is None:
        return node
    found: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        found = found[part]
    return found


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    return [(method.upper(), path, op) for path, item in doc["paths"].items() for method, op in item.items()
            if method in ("get", "post", "put", "patch", "delete")]


def test_every_operation_documents_its_success_answer_and_the_error_shape(client):
    doc = client.get("/openapi.json").json
    ops = operations(doc)
    assert len(ops) > 60  # every route and its /tabs/{tabId} twin
    error_fields = set(ErrorSchema().fields)
    assert set(doc["components"]["schemas"]["Error"]["properties"]) == error_fields
    for method, path, op in ops:
        where = f"{method} {path}"
        success = [resolve(doc, r) for status, r in op["responses"].items() if str(status).startswith("2")]
        assert success, f"{where} documents no success answer"
        for answer in success:
            content = answer.get("content") or {}
            assert content, f"{where}: a success answer without a content type"
            for media, body in content.items():
                assert body.get("schema"), f"{where}: {media} without a schema"
        default = resolve(doc, op["responses"]["default"])
        assert default["content"]["application/json"]["schema"] == {"$ref": "#/components/schemas/Error"}, where


def test_raw_answers_document_their_content_types(client):
    paths = client.get("/openapi.json").json["paths"]

    def types(path: str, method: str = "get") -> set[str]:
        return set(paths[path][method]["responses"]["200"]["content"])

    assert types("/text") == {"application/json", "text/plain"}
    assert types("/screenshot") == {"application/json", "image/jpeg", "image/png"}
    assert types("/pdf") == types("/pdf", "post") == {"application/json", "application/pdf"}
    assert types("/download") == {"application/json", "application/octet-stream"}
    # A long run answers its report as JSON, or follows it as Server-Sent Events when asked to.
    assert types("/scrape", "post") == types("/audit", "post") == {"application/json", "text/event-stream"}


def check(schema: type[Schema], answer: Any) -> dict[str, Any]:
    """Load a JSON answer with its documented schema: a key it does not declare, or a missing
    required one, fails here."""
    assert isinstance(answer, dict), answer
    return schema().load(answer)


def test_real_answers_match_their_documented_schemas(client, site):
    check(HealthResponse, client.get("/health").json)
    info = check(PageInfoResponse, nav(client, site.url("reads_logs.html")))
    tab = info["tabId"]
    check(TabsResponse, client.get("/tabs").json)
    wait_until(lambda: client.get(f"/console?tabId={tab}").json["console"])
    logs = check(ConsoleResponse, client.get(f"/console?tabId={tab}").json)
    assert logs["tabId"] == tab

    nav(client, site.url("form.html"), tabId=tab)
    snap = check(SnapshotResponse, client.get(f"/snapshot?tabId={tab}&filter=interactive").json)
    assert snap["count"] == len(snap["nodes"]) > 0
    agree = ref_of(compact(client, tabId=tab), "checkbox", "I agree to the terms")
    r = client.post("/action", json={"tabId": tab, "kind": "click", "ref": agree, "snap": "compact"})
    assert check(ActionResponse, r.json)["snapshotFormat"] == "compact"
    r = client.post("/actions", json={"tabId": tab, "actions": [
        {"kind": "fill", "selector": "#username", "text": "agent"},
        {"kind": "click", "selector": "#no-such-element"}]})
    batch = check(ActionsResponse, r.json)
    assert [step["success"] for step in batch["results"]] == [True, False]
    check(TextResponse, client.get(f"/text?tabId={tab}").json)
    check(PageInfoResponse, client.get(f"/title?tabId={tab}").json)
    found = check(FindResponse, client.post("/find", json={"tabId": tab, "query": "username"}).json)
    assert found["best_ref"]
    shot = check(InlineFileResponse, client.get(f"/screenshot?tabId={tab}&format=png").json)
    assert shot["format"] == "png"
