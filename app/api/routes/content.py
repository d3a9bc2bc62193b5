"""Reading a page: GET /text and GET /screenshot."""
from __future__ import annotations

import base64
from typing import Any

from flask import Response

from cdp import capture, content
from cdp.navigation import page_info
from cdp.tab import Tab

from ...web.files import output_file, saved, stamp, write_atomic
from ...web.openapi import BINARY, TEXT, Blueprint, tab_route
from .. import idpi_hooks
from ..contract import OneOf
from .common import on_tab, state, tab
from .content_contract import (
    SavedScreenshotResponse,
    ScreenshotRequestSchema,
    ScreenshotResponse,
    TextQuerySchema,
    TextResponse,
)

bp = Blueprint("content", __name__)


@tab_route(bp, "/text", methods=["GET"])
@bp.arguments(TextQuerySchema, location="query")
@bp.alt_response(200, content_type="text/plain", schema=TEXT)
@bp.response(200, TextResponse, description="the text, as JSON or (format=text or plain) alone")
def text(req: dict[str, Any], tab_id: str | None) -> Response | dict[str, Any]:
    """The page's readable (or raw) text; one element's with selector (or ref), one frame's with frameId."""
    target = tab(req.get("tabId"))
    element = (req["selector"] or req["ref"]).strip()

    def read(t: Tab) -> tuple[dict[str, Any], str]:
        if element:
            return page_info(t), content.element_text(t, element)
        return page_info(t), content.text(t, raw=req["mode"] == "raw", frame_id=req["frameId"])

    info, body = on_tab(target, read)
    truncated = False
    if req.get("maxChars") and len(body) > req["maxChars"]:
        body, truncated = body[: req["maxChars"]], True
    warning = idpi_hooks.screen(body, info["url"])
    body = idpi_hooks.wrap_text(body, info["url"])
    if req["format"] in ("text", "plain"):
        return Response(body, content_type="text/plain; charset=utf-8")
    return {"url": info["url"], "title": info["title"], "text": body, "truncated": truncated, **warning}


@tab_route(bp, "/screenshot", methods=["GET"])
@bp.arguments(ScreenshotRequestSchema, location="query")
@bp.alt_response(200, content_type="image/jpeg", schema=BINARY)
@bp.alt_response(200, content_type="image/png", schema=BINARY)
@bp.response(200, OneOf(ScreenshotResponse, SavedScreenshotResponse),
             description="the image in base64, where it was written (output=file), or itself (raw=true); "
                         "with annotate=true, the boxes drawn on it")
def screenshot(req: dict[str, Any], tab_id: str | None) -> Response | dict[str, Any]:
    """A screenshot of the page or of one element.

    JSON with the image in base64, the image itself with raw=true, or a file with output=file.
    annotate=true draws numbered boxes (labelled with refs) over the interactive elements for this
    picture and lists them; noAnimations=true holds animations still for the capture.
    """
    fmt = "jpeg" if req["format"] == "jpg" else req["format"]
    target = output_file(state().config.server.state_dir, req["path"],
                         f"screenshots/screenshot-{stamp()}.{'jpg' if fmt == 'jpeg' else 'png'}") \
        if req["output"] == "file" else None
    shot = tab(req.get("tabId"))
    still = req["noAnimations"] or state().config.instance_defaults.no_animations
    data, annotations = on_tab(shot, lambda t: capture.screenshot(
        t, fmt=fmt, quality=req["quality"], full_page=req["beyondViewport"], scale=req["scale"],
        selector=req["selector"].strip(), annotated=req["annotate"], no_animations=still))
    extra = {"annotations": annotations} if annotations is not None else {}
    if target is not None:
        return {**saved(target, write_atomic(target, data), fmt), **extra}
    if req["raw"]:
        return Response(data, content_type=f"image/{fmt}")
    return {"format": fmt, "base64": base64.b64encode(data).decode(), **extra}
