"""Inspecting a page without acting on it: GET /title, /url, /html, /styles, the element reads
(/value, /attr, /box, /visible, /enabled, /checked, /count) and GET|POST /pdf."""
from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, jsonify, request

from cdp import inspect, selectors
from cdp.navigation import page_info
from cdp.tab import Tab

from ..browser_state import bridge
from ...errors import BadRequest
from ...files import inside, saved, stamp, write_atomic
from ..parser import from_query, json_body, load, query_args
from ..schemas import (
    PDF_KEYS,
    AttrQuerySchema,
    ElementQuerySchema,
    HtmlQuerySchema,
    PageReadQuerySchema,
    PdfQuerySchema,
    StylesQuerySchema,
)
from . import doc, tab_route
from .common import on_tab

bp = Blueprint("inspect", __name__)


def _selector(req: dict[str, Any]) -> str:
    """The unified selector a read names: ``selector``, else the legacy ``ref`` (any selector too)."""
    return (req.get("selector") or req.get("ref") or "").strip()


# --- the page ------------------------------------------------------------------------------------
@tab_route(bp, "/title", methods=["GET"])
@doc("The page's title (and URL)", query=PageReadQuerySchema)
def title(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _page_read(tab_id)


@tab_route(bp, "/url", methods=["GET"])
@doc("The page's URL (and title)", query=PageReadQuerySchema)
def url(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _page_read(tab_id)


def _page_read(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(PageReadQuerySchema, tab_id)
    tab = bridge().tab(req.get("tabId"))
    info = on_tab(tab, page_info)
    return jsonify({"tabId": tab.id, "url": info["url"], "title": info["title"]})


@tab_route(bp, "/html", methods=["GET"])
@doc("The document's outerHTML, or one element's with selector (or ref)", query=HtmlQuerySchema)
def html(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(HtmlQuerySchema, tab_id)
    sel = _selector(req)
    tab = bridge().tab(req.get("tabId"))
    info, body = on_tab(tab, lambda t: (page_info(t), inspect.html(t, sel)))
    truncated = False
    if req.get("maxChars") and len(body) > req["maxChars"]:
        body, truncated = body[: req["maxChars"]], True
    return jsonify({"tabId": tab.id, "url": info["url"], "title": info["title"], "html": body,
                    "truncated": truncated})


@tab_route(bp, "/styles", methods=["GET"])
@doc("Computed styles of an element (or the root element); one property with prop", query=StylesQuerySchema)
def styles(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(StylesQuerySchema, tab_id)
    sel, prop = _selector(req), req["prop"].strip()
    tab = bridge().tab(req.get("tabId"))
    info, style = on_tab(tab, lambda t: (page_info(t), inspect.styles(t, sel, prop)))
    return jsonify({"tabId": tab.id, "url": info["url"], "title": info["title"], "styles": style})


# --- one element ---------------------------------------------------------------------------------
def _element_read(tab_id: str | None, schema: type, key: str, read: Callable[[Tab, dict[str, Any], str], Any],
                  extra: Callable[[dict[str, Any]], dict[str, Any]] | None = None):  # type: ignore[no-untyped-def]
    """The shared shape of the element reads: ``{"ref": <selector as given>, <key>: <value>}``."""
    req = from_query(schema, tab_id)
    sel = _selector(req)
    tab = bridge().tab(req.get("tabId"))
    value = on_tab(tab, lambda t: read(t, req, sel))
    return jsonify({"ref": sel, **(extra(req) if extra else {}), key: value})


@tab_route(bp, "/value", methods=["GET"])
@doc("An element's value (null when it has none)", query=ElementQuerySchema)
def value(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _element_read(tab_id, ElementQuerySchema, "value", lambda t, req, sel: inspect.value(t, sel))


@tab_route(bp, "/attr", methods=["GET"])
@doc("An element's attribute (null when absent)", query=AttrQuerySchema)
def attr(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _element_read(tab_id, AttrQuerySchema, "value", lambda t, req, sel: inspect.attr(t, sel, req["name"]),
                         extra=lambda req: {"name": req["name"]})


@tab_route(bp, "/box", methods=["GET"])
@doc("An element's bounding box in viewport CSS pixels", query=ElementQuerySchema)
def box(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _element_read(tab_id, ElementQuerySchema, "box", lambda t, req, sel: inspect.box(t, sel))


@tab_route(bp, "/visible", methods=["GET"])
@doc("Whether an element is rendered with a non-empty box", query=ElementQuerySchema)
def visible(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _element_read(tab_id, ElementQuerySchema, "visible", lambda t, req, sel: inspect.visible(t, sel))


@tab_route(bp, "/enabled", methods=["GET"])
@doc("Whether an element is enabled (not disabled or aria-disabled)", query=ElementQuerySchema)
def enabled(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _element_read(tab_id, ElementQuerySchema, "enabled", lambda t, req, sel: inspect.enabled(t, sel))


@tab_route(bp, "/checked", methods=["GET"])
@doc("Whether a checkbox, radio or aria-checked widget is checked", query=ElementQuerySchema)
def checked(tab_id: str | None):  # type: ignore[no-untyped-def]
    return _element_read(tab_id, ElementQuerySchema, "checked", lambda t, req, sel: inspect.checked(t, sel))


@tab_route(bp, "/count", methods=["GET"])
@doc("How many elements a selector matches (a missing ref counts 0)", query=ElementQuerySchema)
def count(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = from_query(ElementQuerySchema, tab_id)
    sel = _selector(req)
    tab = bridge().tab(req.get("tabId"))
    return jsonify({"selector": sel, "count": on_tab(tab, lambda t: selectors.count(t, sel))})


# --- PDF -----------------------------------------------------------------------------------------
_PRINT_OPTIONS = ("landscape", "scale", "paperWidth", "paperHeight", "marginTop", "marginBottom", "marginLeft",
                  "marginRight", "pageRanges", "preferCSSPageSize", "displayHeaderFooter", "headerTemplate",
                  "footerTemplate", "generateTaggedPDF", "generateDocumentOutline")


def _pdf_request(tab_id: str | None) -> dict[str, Any]:
    """The PDF options from the query, and for POST from the JSON body too (the body wins)."""
    data = query_args()
    if request.method == "POST":
        for key, val in json_body().items():
            if key not in PDF_KEYS:
                continue  # other keys are ignored, as the original does
            if val is not None and not isinstance(val, (str, bool, int, float)):
                raise BadRequest(f"{key}: must be a string, boolean or number", details={"field": key})
            data[key] = val
    return load(PdfQuerySchema, data, tab_id)


def output_file(state_dir: Path, requested: str, default_name: str) -> Path:
    """Where ``output=file`` writes: ``requested`` or ``default_name``, inside the state dir and not
    a directory (checked before the work, so a bad path costs nothing)."""
    target = inside(state_dir, requested or None, default_name)
    if target.is_dir():
        raise BadRequest(f"invalid output path: {requested!r} is a directory", code="invalid_output_path",
                         details={"field": "path"})
    return target


@tab_route(bp, "/pdf", methods=["GET", "POST"])
@doc("The page as PDF (JSON with base64, raw bytes with raw=true, or a file with output=file)",
     query=PdfQuerySchema)
def pdf(tab_id: str | None):  # type: ignore[no-untyped-def]
    req = _pdf_request(tab_id)
    br = bridge()
    target = output_file(br.config.server.state_dir, req["path"], f"pdfs/page-{stamp()}.pdf") \
        if req["output"] == "file" else None
    options = {k: req[k] for k in _PRINT_OPTIONS if req[k] not in ("", None)}
    tab = br.tab(req.get("tabId"))
    try:
        data = on_tab(tab, lambda t: inspect.pdf(t, options))
    except inspect.BadPrintOptions as exc:
        raise BadRequest(str(exc), code="bad_pdf_options", details={"field": exc.field} if exc.field else None) \
            from None
    if target is not None:
        size = write_atomic(target, data)
        return jsonify(saved(target, size, "pdf"))
    if req["raw"]:
        return Response(data, content_type="application/pdf")
    return jsonify({"format": "pdf", "base64": base64.b64encode(data).decode()})
