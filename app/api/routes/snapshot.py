"""GET /snapshot: the page as a compact accessibility tree with refs (and diffs, and files)."""
from __future__ import annotations

from typing import Any

from flask import Response

from cdp import snapshot_doc

from ...web.files import output_file, saved, stamp, write_atomic
from ...web.openapi import TEXT, Blueprint, tab_route
from .. import idpi_hooks
from ..contract import OneOf, SavedFileResponse
from .common import caller, on_tab, state, tab
from .snapshot_contract import SnapshotQuerySchema, SnapshotResponse

bp = Blueprint("snapshot", __name__)
MIME = {"compact": "text/plain; charset=utf-8", "text": "text/plain; charset=utf-8",
        "yaml": "text/yaml; charset=utf-8", "json": "application/json"}
EXT = {"compact": "txt", "text": "txt", "yaml": "yaml", "json": "json"}


@tab_route(bp, "/snapshot", methods=["GET"])
@bp.arguments(SnapshotQuerySchema, location="query")
@bp.alt_response(200, content_type="text/plain", schema=TEXT)
@bp.alt_response(200, content_type="text/yaml", schema=TEXT)
@bp.response(200, OneOf(SnapshotResponse, SavedFileResponse),
             description="format=json: the nodes (output=file: where they were written); compact and text as "
                         "text/plain, yaml as text/yaml")
def snapshot(req: dict[str, Any], tab_id: str | None) -> Response | dict[str, Any]:
    """The page as an accessibility tree with refs."""
    target = tab(req.get("tabId"))
    view = caller().view  # read here: the job runs on the tab's worker, outside the request
    filt = "interactive" if (req["interactive"] or req["filter"] == "interactive") else "all"
    fmt = "compact" if req["compact"] and req["format"] == "json" else req["format"]
    doc = on_tab(target, lambda t: snapshot_doc.build(t, filter=filt, format=fmt, selector=req["selector"],
                                                      depth=req["depth"], max_tokens=req["maxTokens"],
                                                      after=req["after"], diff=req["diff"], caller=view),
                 req.get("timeout"))
    doc.doc.update(idpi_hooks.screen(idpi_hooks.node_text(doc.doc), doc.doc["url"]))
    doc.doc.update(idpi_hooks.untrusted())
    if doc.format == "json" and req["output"] != "file":
        return doc.doc  # dumped by its schema: nodes handed on whole (contract.RawList)
    body, fmt = snapshot_doc.render(doc)
    if req["output"] == "file":
        path = output_file(state().config.server.state_dir, req["path"], f"snapshots/snapshot-{stamp()}.{EXT[fmt]}")
        size = write_atomic(path, body.encode())
        return saved(path, size, fmt)
    return Response(body, content_type=MIME[fmt])
