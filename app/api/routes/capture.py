"""Pictures with more than pixels: GET /capture (a screenshot and a snapshot of one document) and
GET /annotate (numbered boxes left on the page)."""
from __future__ import annotations

import base64
import time
from typing import Any

from flask import Response

from cdp import annotate as overlay
from cdp import capture as paired_capture
from cdp.errors import NoSuchElement
from cdp.tab import Tab

from ...web.errors import BadRequest, Conflict
from ...web.files import output_file, stamp, write_atomic
from ...web.openapi import BINARY, Blueprint, ErrorSchema, tab_route
from .. import idpi_hooks
from .capture_contract import AnnotateQuerySchema, AnnotateResponse, CaptureQuerySchema, CaptureResponse
from .common import on_tab, state, tab

bp = Blueprint("capture", __name__)


@tab_route(bp, "/capture", methods=["GET"])
@bp.arguments(CaptureQuerySchema, location="query")
@bp.alt_response(200, content_type="image/jpeg", schema=BINARY)
@bp.alt_response(200, content_type="image/png", schema=BINARY)
@bp.response(200, CaptureResponse, description="the pair; output=raw: the image alone")
@bp.alt_response(409, schema=ErrorSchema,
                 description="navigation_changed: requirePair=true and the page loaded a new document meanwhile")
def capture(req: dict[str, Any], tab_id: str | None) -> Response | dict[str, Any]:
    """A screenshot and an interactive snapshot from one document, in one call.

    The page settles first (wait=stable: the DOM quiet for 250 ms, at most 750 ms; load; none).
    Snapshot nodes carry boundingBox (in the image's coordinates) and visible unless
    withBounds=false. The image is written under the state dir (output=file, the default),
    inlined in base64 (inline) or answered alone (raw).
    """
    fmt = "jpeg" if req["format"] == "jpg" else req["format"]
    target_file = output_file(state().config.server.state_dir, "",
                              f"captures/capture-{stamp()}.{'jpg' if fmt == 'jpeg' else 'png'}") \
        if req["output"] == "file" else None
    target = tab(req.get("tabId"))
    still = req["noAnimations"] or state().config.instance_defaults.no_animations

    def take(t: Tab) -> paired_capture.Capture:
        return paired_capture.paired(
            t, filter=req["filter"], depth=req["depth"], selector=req["selector"].strip(), fmt=fmt,
            quality=req["quality"], scale=req["scale"], beyond_viewport=req["beyondViewport"], wait=req["wait"],
            with_bounds=req["withBounds"], no_animations=still)

    try:
        shot = on_tab(target, take)
    except paired_capture.PairBroken as exc:
        raise Conflict(str(exc), code="navigation_changed") from None
    if req["requirePair"] and shot.navigated:
        raise Conflict("pairing broken: the page started loading a new document during the capture",
                       code="navigation_changed", details={"url": shot.url})
    if req["output"] == "raw":
        return Response(shot.image, content_type=f"image/{fmt}")
    # The snapshot half is page content like /snapshot's: scanned before anything is written.
    screened = {**idpi_hooks.screen(idpi_hooks.node_text({"nodes": shot.nodes})), **idpi_hooks.untrusted()}
    image = dict(shot.image_info)
    if target_file is not None:
        write_atomic(target_file, shot.image)
        image["path"] = str(target_file)
    else:
        image["base64"] = base64.b64encode(shot.image).decode()
    return {
        "status": "ok", "tabId": target.id, "url": shot.url, "title": shot.title,
        "capturedAt": _iso(shot.captured_at),
        "epoch": {"frameId": shot.frame_id, "loaderId": shot.loader_id, "domEpoch": shot.dom_epoch},
        "pairing": {"navigated": shot.navigated, "captureDurationMs": shot.duration_ms},
        "image": image,
        "snapshot": {"filter": req["filter"], "nodeCount": len(shot.nodes), "nodes": shot.nodes},
        **screened,
    }


@tab_route(bp, "/annotate", methods=["GET"])
@bp.arguments(AnnotateQuerySchema, location="query")
@bp.response(200, AnnotateResponse)
@bp.alt_response(400, schema=ErrorSchema, description="the selector matches no element (element_not_found)")
def annotate(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Leave numbered boxes (labelled with refs) over the page's interactive elements.

    The overlay stays until clear=true or the page navigates; clicking a label copies the element's
    page, ref, role, name, CSS and XPath paths (to the clipboard and ``window.__ptLastCopied``).
    With selector, only the elements inside it (one that matches nothing is a 400, as in the original:
    the request named the scope wrong). Issues refs as /snapshot does.
    """
    target = tab(req.get("tabId"))
    if req["clear"]:
        on_tab(target, lambda t: overlay.remove(t, overlay.PAGE_OVERLAY))
        return {"cleared": True}

    def draw(t: Tab) -> list[dict[str, Any]]:
        try:
            items = overlay.annotations(t, req["selector"].strip())
        except NoSuchElement as exc:
            raise BadRequest(str(exc), code="element_not_found", details={"field": "selector"}) from None
        overlay.draw(t, items, overlay.PAGE_OVERLAY, clickable=True)  # none: the old overlay goes
        return overlay.public(items)

    items = on_tab(target, draw)
    return {"annotated": len(items), "annotations": items}


def _iso(ts: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ts)) + f".{int((ts % 1) * 1000):03d}Z"
