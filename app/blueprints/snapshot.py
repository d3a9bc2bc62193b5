"""GET /snapshot: the page as a compact accessibility tree with refs."""
from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, jsonify

from cdp import actions, formats, snapshot as snap
from cdp.navigation import page_info
from cdp.tab import Tab

from ..bridge import bridge
from ..errors import BadRequest
from ..params import from_query
from ..schemas import SnapshotQuerySchema
from . import tab_route
from .common import on_tab

bp = Blueprint("snapshot", __name__)


def take(tab: Tab, req: dict[str, Any]) -> dict[str, Any]:
    """Run on the tab's worker: the snapshot document (before formatting)."""
    filt = "interactive" if (req["interactive"] or req["filter"] == "interactive") else "all"
    fmt = "compact" if req["compact"] and req["format"] == "json" else req["format"]
    root = None
    if req["selector"]:
        root = actions.find(tab, actions.Target(selector=req["selector"]))
    nodes = snap.take(tab, filter=filt, details=(fmt in ("json", "yaml")), max_depth=req["depth"], root=root)
    info = page_info(tab)
    count = len(nodes)
    try:
        nodes = formats.page_after(nodes, req["after"])
    except KeyError:
        raise BadRequest(f"after={req['after']}: no such ref in this snapshot", details={"field": "after"}) from None
    nodes, truncated = formats.budget(nodes, req["maxTokens"], fmt)
    doc: dict[str, Any] = {"url": info["url"], "title": info["title"], "nodes": nodes, "count": len(nodes)}
    if req["after"] or truncated:
        doc["total"] = count
    if truncated:
        doc["truncated"] = True
        doc["maxTokens"] = req["maxTokens"]
        if nodes:
            doc["next"] = f"after={nodes[-1]['ref']}"
    doc["_format"] = fmt
    return doc


@tab_route(bp, "/snapshot", methods=["GET"])
def snapshot(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(SnapshotQuerySchema, tab_id)
    tab = bridge().tab(req.get("tabId"))
    doc = on_tab(tab, lambda t: take(t, req))
    return render(doc)


def render(doc: dict[str, Any]) -> Response:
    fmt = doc.pop("_format")
    cut = doc.get("maxTokens") if doc.get("truncated") else None
    cursor = doc.get("next", "").removeprefix("after=") or None
    if fmt == "compact":
        text = formats.render_compact(doc["nodes"], title=doc["title"], url=doc["url"], count=doc["count"],
                                      truncated_at=cut, next_cursor=cursor)
        return Response(text, mimetype="text/plain", content_type="text/plain; charset=utf-8")
    if fmt == "text":
        text = formats.render_text(doc["nodes"], title=doc["title"], url=doc["url"], count=doc["count"],
                                   truncated_at=cut, next_cursor=cursor)
        return Response(text, content_type="text/plain; charset=utf-8")
    if fmt == "yaml":
        return Response(formats.render_yaml(doc), content_type="text/yaml; charset=utf-8")
    return Response(json.dumps(doc, ensure_ascii=False, separators=(",", ":")), content_type="application/json")
