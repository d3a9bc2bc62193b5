"""GET /snapshot: the page as a compact accessibility tree with refs (and diffs, and files)."""
from __future__ import annotations

import json
from typing import Any

from flask import Blueprint, Response, jsonify

from cdp import actions, formats, snapshot as snap
from cdp.navigation import page_info
from cdp.tab import Tab

from ..browser_state import bridge
from ...errors import BadRequest
from ...files import inside, saved, stamp, write_atomic
from ..parser import from_query
from ..schemas import SnapshotQuerySchema
from . import doc, tab_route
from .common import on_tab

bp = Blueprint("snapshot", __name__)
MIME = {"compact": "text/plain; charset=utf-8", "text": "text/plain; charset=utf-8",
        "yaml": "text/yaml; charset=utf-8", "json": "application/json"}
EXT = {"compact": "txt", "text": "txt", "yaml": "yaml", "json": "json"}


def take(tab: Tab, req: dict[str, Any], caller: str) -> dict[str, Any]:
    """Run on the tab's worker: the snapshot document (before rendering)."""
    filt = "interactive" if (req["interactive"] or req["filter"] == "interactive") else "all"
    fmt = "compact" if req["compact"] and req["format"] == "json" else req["format"]
    root = actions.find(tab, actions.Target(selector=req["selector"])) if req["selector"] else None
    nodes = snap.take(tab, filter=filt, details=(fmt in ("json", "yaml")), max_depth=req["depth"], root=root)
    info = page_info(tab)
    previous = snap.remember(tab, caller, filt, nodes) if not req["selector"] else None
    doc: dict[str, Any] = {"url": info["url"], "title": info["title"], "_format": fmt, "_filter": filt}
    if req["diff"] and previous is not None:
        changes = formats.diff(previous, nodes)
        doc.update(diff=True, **changes, count=len(nodes),
                   counts={**{k: len(v) for k, v in changes.items()}, "total": len(nodes)})
        return doc
    count = len(nodes)
    try:
        nodes = formats.page_after(nodes, req["after"])
    except KeyError:
        raise BadRequest(f"after={req['after']}: no such ref in this snapshot", details={"field": "after"}) from None
    nodes, truncated = formats.budget(nodes, req["maxTokens"], fmt)
    doc.update(nodes=nodes, count=len(nodes))
    if req["after"] or truncated:
        doc["total"] = count
    if truncated:
        doc["truncated"] = True
        doc["maxTokens"] = req["maxTokens"]
        if nodes:
            doc["next"] = f"after={nodes[-1]['ref']}"
    return doc


def render_text(doc: dict[str, Any]) -> tuple[str, str]:
    """(body, format) of a snapshot document."""
    fmt = doc.pop("_format")
    interactive = doc.pop("_filter") == "interactive"
    if doc.get("diff"):
        if fmt in ("compact", "text"):
            return formats.render_diff_compact(doc, title=doc["title"], url=doc["url"], count=doc["count"]), fmt
        return (formats.render_yaml(doc) if fmt == "yaml" else json.dumps(doc, ensure_ascii=False)), fmt
    cut = doc.get("maxTokens") if doc.get("truncated") else None
    cursor = doc.get("next", "").removeprefix("after=") or None
    if fmt == "compact":
        return formats.render_compact(doc["nodes"], title=doc["title"], url=doc["url"], count=doc["count"],
                                      truncated_at=cut, next_cursor=cursor, interactive=interactive), fmt
    if fmt == "text":
        return formats.render_text(doc["nodes"], title=doc["title"], url=doc["url"], count=doc["count"],
                                   truncated_at=cut, next_cursor=cursor), fmt
    if fmt == "yaml":
        return formats.render_yaml(doc), fmt
    return json.dumps(doc, ensure_ascii=False, separators=(",", ":")), fmt


@tab_route(bp, "/snapshot", methods=["GET"])
@doc("The page as an accessibility tree with refs", query=SnapshotQuerySchema, produces="text/plain")
def snapshot(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(SnapshotQuerySchema, tab_id)
    br = bridge()
    tab = br.tab(req.get("tabId"))
    caller = br.caller()  # read here: the job runs on the tab's worker, outside the request
    doc = on_tab(tab, lambda t: take(t, req, caller), req.get("timeout"))
    body, fmt = render_text(doc)
    if req["output"] == "file":
        path = _file_path(br, req, fmt)
        size = write_atomic(path, body.encode())
        return jsonify(saved(path, size, fmt))
    return Response(body, content_type=MIME[fmt])


def _file_path(br: Any, req: dict[str, Any], fmt: str):  # type: ignore[no-untyped-def]
    """``path`` is relative to the state dir; without one, ``snapshots/snapshot-<time>.<ext>``."""
    if req["path"]:
        return inside(br.config.server.state_dir, req["path"], "")
    return inside(br.config.server.state_dir, None, f"snapshots/snapshot-{stamp()}.{EXT[fmt]}")
