"""Reading a page: GET /text and GET /screenshot."""
from __future__ import annotations

import base64

from flask import Blueprint, Response, jsonify

from cdp import content
from cdp.navigation import page_info

from ..browser_state import bridge
from ...files import saved, stamp, write_atomic
from ..parser import from_query
from ..schemas import ScreenshotRequestSchema, TextQuerySchema
from . import doc, tab_route
from .common import on_tab
from .inspect import output_file

bp = Blueprint("content", __name__)


@tab_route(bp, "/text", methods=["GET"])
@doc("The page's readable (or raw) text", query=TextQuerySchema)
def text(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(TextQuerySchema, tab_id)
    tab = bridge().tab(req.get("tabId"))

    def read(t):  # type: ignore[no-untyped-def]
        return page_info(t), content.text(t, raw=req["mode"] == "raw")

    info, body = on_tab(tab, read)
    truncated = False
    if req.get("maxChars") and len(body) > req["maxChars"]:
        body, truncated = body[: req["maxChars"]], True
    if req["format"] in ("text", "plain"):
        return Response(body, content_type="text/plain; charset=utf-8")
    return jsonify({"url": info["url"], "title": info["title"], "text": body, "truncated": truncated})


@tab_route(bp, "/screenshot", methods=["GET"])
@doc("A screenshot of the page or of one element (JSON with base64, the image with raw=true, or a file "
     "with output=file)", query=ScreenshotRequestSchema)
def screenshot(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(ScreenshotRequestSchema, tab_id)
    fmt = "jpeg" if req["format"] == "jpg" else req["format"]
    br = bridge()
    target = output_file(br.config.server.state_dir, req["path"],
                         f"screenshots/screenshot-{stamp()}.{'jpg' if fmt == 'jpeg' else 'png'}") \
        if req["output"] == "file" else None
    tab = br.tab(req.get("tabId"))
    data = on_tab(tab, lambda t: content.screenshot(t, fmt=fmt, quality=req["quality"],
                                                    full_page=req["beyondViewport"], scale=req["scale"],
                                                    selector=req["selector"].strip()))
    if target is not None:
        return jsonify(saved(target, write_atomic(target, data), fmt))
    if req["raw"]:
        return Response(data, content_type=f"image/{fmt}")
    return jsonify({"format": fmt, "base64": base64.b64encode(data).decode()})
