"""The server keeps the promises of its own ``GET /openapi.json``: schemathesis generates requests
from the document and sends them to the real app (every capability on, the test's Chromium behind
it), and every answer must be no 5xx, a documented status, a documented content type and a body
that fits the documented schema. Requests the document refuses must be refused (4xx) too.

Bounded: a few examples per operation, no shrinking, a deadline per request; the whole run takes
well under the suite's few minutes.
"""
from __future__ import annotations

import json
import os
import re
import time
from typing import Any
from urllib.parse import quote

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis.checks import not_a_server_error
from schemathesis.core.parameters import ParameterLocation
from schemathesis.generation.modes import GenerationMode
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

# Operations left out, each for a reason a fuzzer cannot respect:
EXCLUDED = (
    "/shutdown",       # stops the server (the test's own app)
    "/browser/restart",  # restarts the browser every other test of the run shares (tested on its own)
    "/events",         # an event stream: open until the client leaves, by design
    "/network/stream",  # the same
    "/network/export/stream",  # the same
    "/wait",           # waits as long as it is told (up to its documented maximum)
)
# 502 and 504 say a web server or the browser failed (a name that does not resolve, a page that
# never answers): not our fault, and documented. Every other 5xx is.
UPSTREAM = frozenset({502, 504})


@schemathesis.check
def no_server_fault(ctx: Any, response: Any, case: Any) -> bool | None:
    """not_a_server_error, except the upstream failures above."""
    if response.status_code in UPSTREAM:
        return None
    return not_a_server_error(ctx, response, case)


@schemathesis.check
def valid_is_not_malformed(ctx: Any, response: Any, case: Any) -> bool | None:
    """A value the document allows is never refused as malformed (400 ``bad_request`` naming a field
    the request sent): the document and the validation agree on every field. Rules across fields
    (``kind: type`` needs ``text``; ``selector`` or ``ref``) are beyond OpenAPI 3.0 for query
    parameters, so a refusal naming a field the request did not send (or sent empty) is not judged here."""
    if case.meta is None or not case.meta.generation.mode.is_positive or response.status_code != 400:
        return None
    try:
        answer = json.loads(response.content)
        code, field = answer.get("code"), (answer.get("details") or {}).get("field")
    except (ValueError, AttributeError):
        return None
    sent = {**(case.query or {}), **(case.body if isinstance(case.body, dict) else {})}
    if code == "bad_request" and sent.get(field) not in (None, "", [], {}):  # empty: as good as not sent
        raise AssertionError(f"the document allows {field}={sent[field]!r}, the server refused it: "
                             f"{response.content[:300]!r}")
    return None


CHECKS = [no_server_fault, valid_is_not_malformed, status_code_conformance, content_type_conformance,
          response_schema_conformance, negative_data_rejection]
MAX_EXAMPLES = int(os.environ.get("CONTRACT_MAX_EXAMPLES", "4"))
REQUEST_DEADLINE_MS = 20_000  # one request; a hang fails the example instead of the suite
TOKEN = "contract-test-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
RUN_BUDGET_S = 150.0  # the whole run, shared out evenly among the operations (see the test)


@pytest.fixture
def app(app_factory: Any, site: Any) -> Any:
    app = app_factory(**{"server.token": TOKEN, "security.allowEvaluate": True, "security.allowCookies": True,
                         "security.allowUpload": True, "security.allowDownload": True,
                         "security.allowStateExport": True})
    # A page to act on, so reads and actions meet a document rather than about:blank only.
    r = app.test_client().post("/navigate", json={"url": site.url("form.html")}, headers=AUTH)
    assert r.status_code == 200, r.json
    return app


def _auth(case: Any) -> dict[str, str]:
    """The token, unless this (negative) case breaks the headers on purpose: then it is left out."""
    headers = case.meta.components.get(ParameterLocation.HEADER) if case.meta else None
    return {} if headers is not None and headers.mode.is_negative else AUTH


def _hermetic(case: Any, site: Any) -> None:
    """Keep the browser off the internet: a generated ``url`` becomes a path on the test's own site
    (what it said is kept, quoted, so odd characters still reach the server)."""
    for part in (case.query, case.body):
        if not isinstance(part, dict):
            continue
        for key in ("url", "sitemapUrl"):
            if isinstance(part.get(key), str) and part[key]:
                part[key] = site.url(quote(part[key], safe=""))
        for key in ("urls", "only"):  # the site tools' lists of pages
            if isinstance(part.get(key), list):
                part[key] = [site.url(quote(u, safe="")) if isinstance(u, str) and u else u for u in part[key]]


def _run(operation: Any, mode: GenerationMode, deadline: float, site: Any) -> str | None:
    """Generate and send up to MAX_EXAMPLES requests for one operation; the first failure, as text."""

    @given(operation.as_strategy(generation_mode=mode))
    @settings(max_examples=MAX_EXAMPLES, deadline=REQUEST_DEADLINE_MS, derandomize=True, database=None,
              phases=[Phase.explicit, Phase.generate], suppress_health_check=list(HealthCheck))
    def check(case: Any) -> None:
        if time.monotonic() > deadline:
            return  # the operation's share of the budget is spent; what ran so far still counts
        _hermetic(case, site)
        case.call_and_validate(checks=CHECKS, headers=_auth(case))

    try:
        check()
    except Unsatisfiable:
        return None  # nothing to get wrong: e.g. no parameter to break in a negative case
    except (Exception, BaseExceptionGroup) as exc:  # a check's failure (a group), or a deadline exceeded
        return f"{operation.label} ({mode.value}): {str(exc).strip()[:1500]}"
    return None


@pytest.mark.timeout(RUN_BUDGET_S + 120)
def test_every_operation_keeps_the_documents_promises(app: Any, site: Any) -> None:
    schema = schemathesis.openapi.from_wsgi("/openapi.json", app, headers=AUTH)
    failures = []
    operations = [r.ok() for r in schema.get_all_operations()]
    assert len(operations) > 50  # the document lists the whole API
    fuzzed = [op for op in operations
              if not any(re.fullmatch(rf"(/tabs/\{{tabId\}})?{p}", op.path) for p in EXCLUDED)]
    # Each operation has its own share of the budget, half for each mode: at least an even share
    # (RUN_BUDGET_S / operations), more when those before it left time unused. On a slow machine every
    # operation gets fewer examples, rather than the same tail of the list going unchecked every time.
    end = time.monotonic() + RUN_BUDGET_S
    for n, operation in enumerate(fuzzed):
        start = time.monotonic()
        share = max(RUN_BUDGET_S / len(fuzzed), (end - start) / (len(fuzzed) - n))
        for mode, deadline in ((GenerationMode.POSITIVE, start + share / 2), (GenerationMode.NEGATIVE, start + share)):
            if time.monotonic() > deadline:
                continue  # this operation's share is spent: what ran is judged
            failure = _run(operation, mode, deadline, site)
            if failure:
                failures.append(failure)
    assert not failures, f"{len(failures)} broken promise(s):\n\n" + "\n\n".join(failures)


# --- the particular disagreements the fuzzer first found, pinned down ------------------------------
@pytest.fixture
def document(app: Any) -> dict[str, Any]:
    return app.test_client().get("/openapi.json", headers=AUTH).json


def test_the_document_lists_every_content_type_the_server_answers(document: dict[str, Any]) -> None:
    def types(path: str, method: str) -> set[str]:
        return set(document["paths"][path][method]["responses"]["200"]["content"])

    assert types("/snapshot", "get") == {"application/json", "text/plain", "text/yaml"}
    assert {"image/png", "image/jpeg", "application/json"} <= types("/screenshot", "get")
    assert {"application/pdf", "application/json"} <= types("/pdf", "get")


def test_tab_action_is_new_or_focus_in_the_document_and_the_validation(app: Any, document: dict[str, Any]) -> None:
    assert document["components"]["schemas"]["TabAction"]["properties"]["action"]["enum"] == ["new", "focus"]
    for action in ("", "close"):
        r = app.test_client().post("/tab", json={"action": action}, headers=AUTH)
        assert r.status_code == 400, r.json
        assert r.json["details"]["field"] == "action"


def test_an_empty_tab_id_is_refused_by_both(app: Any, document: dict[str, Any]) -> None:
    params = {p["name"]: p for p in document["paths"]["/text"]["get"]["parameters"]}
    assert params["tabId"]["schema"]["minLength"] == 1
    r = app.test_client().get("/text?tabId=", headers=AUTH)
    assert r.status_code == 400 and r.json["details"]["field"] == "tabId"


def test_on_tabs_tab_id_routes_only_the_path_names_the_tab(document: dict[str, Any]) -> None:
    op = document["paths"]["/tabs/{tabId}/text"]["get"]
    assert "tabId" not in {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
    body = document["paths"]["/tabs/{tabId}/navigate"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    assert {"not": {"required": ["tabId"]}} in body["allOf"]


def test_the_pdf_body_documents_the_ranges_it_is_held_to(app: Any, document: dict[str, Any]) -> None:
    scale = document["components"]["schemas"]["PdfBody"]["properties"]["scale"]
    assert (scale["minimum"], scale["maximum"]) == (0.1, 2)
    r = app.test_client().post("/pdf", json={"scale": 408}, headers=AUTH)
    assert r.status_code == 400 and r.json["details"]["field"] == "scale"


def test_a_schemas_rule_across_fields_is_in_the_document(document: dict[str, Any]) -> None:
    upload = document["components"]["schemas"]["Upload"]
    assert [sorted(rule["required"]) for rule in upload["anyOf"]] == [["files"], ["paths"]]
