"""Inspecting a page without acting on it: GET /title, /url, /html, /styles, the element reads
(/value, /attr, /box, /visible, /enabled, /checked, /count) and GET|POST /pdf."""
from __future__ import annotations

import base64
from collections.abc import Callable
from typing import Any

from flask import Response, request

from cdp import content, elements, selectors
from cdp.navigation import page_info
from cdp.pdf import print_to_pdf
from cdp.tab import Tab

from ...policy.idpi import corpus
from ...web.files import output_file, saved, stamp, write_atomic
from ...web.openapi import BINARY, Blueprint, ErrorSchema, tab_route
from ...web.parser import load
from ...web.schemas import PageInfoResponse
from .. import idpi_hooks
from ..contract import OneOf
from .common import on_tab, state, tab
from .inspect_contract import (
    AttrQuerySchema,
    AttrResponse,
    BoxResponse,
    CheckedResponse,
    CountResponse,
    ElementQuerySchema,
    EnabledResponse,
    HtmlQuerySchema,
    HtmlResponse,
    PageReadQuerySchema,
    PdfBodySchema,
    PdfQuerySchema,
    PdfResponse,
    SavedPdfResponse,
    StylesQuerySchema,
    StylesResponse,
    ValueResponse,
    VisibleResponse,
)

bp = Blueprint("inspect", __name__)


def _selector(req: dict[str, Any]) -> str:
    """The unified selector a read names: ``selector``, else the legacy ``ref`` (any selector too)."""
    return (req.get("selector") or req.get("ref") or "").strip()


# --- the page ------------------------------------------------------------------------------------
@tab_route(bp, "/title", methods=["GET"])
@bp.arguments(PageReadQuerySchema, location="query")
@bp.response(200, PageInfoResponse)
def title(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The page's title (and URL)."""
    return _page_read(req)


@tab_route(bp, "/url", methods=["GET"])
@bp.arguments(PageReadQuerySchema, location="query")
@bp.response(200, PageInfoResponse)
def url(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The page's URL (and title)."""
    return _page_read(req)


def _page_read(req: dict[str, Any]) -> dict[str, Any]:
    target = tab(req.get("tabId"))
    info = on_tab(target, page_info)
    return {"tabId": target.id, "url": info["url"], "title": info["title"]}


@tab_route(bp, "/html", methods=["GET"])
@bp.arguments(HtmlQuerySchema, location="query")
@bp.response(200, HtmlResponse)
def html(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """The document's outerHTML, or one element's with selector (or ref)."""
    sel = _selector(req)
    target = tab(req.get("tabId"))
    info, body = on_tab(target, lambda t: (page_info(t), elements.html(t, sel)))
    truncated = False
    if req.get("maxChars") and len(body) > req["maxChars"]:
        body, truncated = body[: req["maxChars"]], True
    return {"tabId": target.id, "url": info["url"], "title": info["title"], "html": body,
            "truncated": truncated}


@tab_route(bp, "/styles", methods=["GET"])
@bp.arguments(StylesQuerySchema, location="query")
@bp.response(200, StylesResponse)
def styles(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Computed styles of an element (or the root element); one property with prop."""
    sel, prop = _selector(req), req["prop"].strip()
    target = tab(req.get("tabId"))
    info, style = on_tab(target, lambda t: (page_info(t), elements.styles(t, sel, prop)))
    return {"tabId": target.id, "url": info["url"], "title": info["title"], "styles": style}


# --- one element ---------------------------------------------------------------------------------
def _element_read(req: dict[str, Any], key: str, read: Callable[[Tab, str], Any],
                  extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The shared shape of the element reads: ``{"ref": <selector as given>, <key>: <value>}``."""
    sel = _selector(req)
    target = tab(req.get("tabId"))
    value = on_tab(target, lambda t: read(t, sel))
    return {"ref": sel, **(extra or {}), key: value}


@tab_route(bp, "/value", methods=["GET"])
@bp.arguments(ElementQuerySchema, location="query")
@bp.response(200, ValueResponse)
def value(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """An element's value (null when it has none)."""
    return _element_read(req, "value", elements.value)


@tab_route(bp, "/attr", methods=["GET"])
@bp.arguments(AttrQuerySchema, location="query")
@bp.response(200, AttrResponse)
def attr(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """An element's attribute (null when absent)."""
    return _element_read(req, "value", lambda t, sel: elements.attr(t, sel, req["name"]), extra={"name": req["name"]})


@tab_route(bp, "/box", methods=["GET"])
@bp.arguments(ElementQuerySchema, location="query")
@bp.response(200, BoxResponse)
def box(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """An element's bounding box in viewport CSS pixels."""
    return _element_read(req, "box", elements.box)


@tab_route(bp, "/visible", methods=["GET"])
@bp.arguments(ElementQuerySchema, location="query")
@bp.response(200, VisibleResponse)
def visible(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Whether an element is rendered with a non-empty box."""
    return _element_read(req, "visible", elements.visible)


@tab_route(bp, "/enabled", methods=["GET"])
@bp.arguments(ElementQuerySchema, location="query")
@bp.response(200, EnabledResponse)
def enabled(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Whether an element is enabled (not disabled or aria-disabled)."""
    return _element_read(req, "enabled", elements.enabled)


@tab_route(bp, "/checked", methods=["GET"])
@bp.arguments(ElementQuerySchema, location="query")
@bp.response(200, CheckedResponse)
def checked(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Whether a checkbox, radio or aria-checked widget is checked."""
    return _element_read(req, "checked", elements.checked)


@tab_route(bp, "/count", methods=["GET"])
@bp.arguments(ElementQuerySchema, location="query")
@bp.response(200, CountResponse)
def count(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """How many elements a selector matches (a missing ref counts 0)."""
    sel = _selector(req)
    target = tab(req.get("tabId"))
    return {"selector": sel, "count": on_tab(target, lambda t: selectors.count(t, sel))}


# --- PDF -----------------------------------------------------------------------------------------
_PRINT_OPTIONS = ("landscape", "scale", "paperWidth", "paperHeight", "marginTop", "marginBottom", "marginLeft",
                  "marginRight", "pageRanges", "preferCSSPageSize", "displayHeaderFooter", "headerTemplate",
                  "footerTemplate", "generateTaggedPDF", "generateDocumentOutline")
PRINT_FAILED = "Chrome could not print the page (pdf_failed); options it refuses are a 400 bad_pdf_options"


@tab_route(bp, "/pdf", methods=["GET"])
@bp.alt_response(502, schema=ErrorSchema, description=PRINT_FAILED)
@bp.arguments(PdfQuerySchema, location="query")
@bp.alt_response(200, content_type="application/pdf", schema=BINARY)
@bp.response(200, OneOf(PdfResponse, SavedPdfResponse),
             description="the PDF in base64, where it was written (output=file), or itself (raw=true)")
def pdf(req: dict[str, Any], tab_id: str | None) -> Response | dict[str, Any]:
    """The page as PDF.

    JSON with the PDF in base64, the PDF itself with raw=true, or a file with output=file.
    """
    return _pdf(req)


@tab_route(bp, "/pdf", methods=["POST"])
@bp.alt_response(502, schema=ErrorSchema, description=PRINT_FAILED)
@bp.arguments(PdfBodySchema, required=False)
@bp.alt_response(200, content_type="application/pdf", schema=BINARY)
@bp.response(200, OneOf(PdfResponse, SavedPdfResponse),
             description="the PDF in base64, where it was written (output=file), or itself (raw=true)")
def pdf_by_body(body: dict[str, Any], tab_id: str | None) -> Response | dict[str, Any]:
    """``GET /pdf`` with options in the body too (the query's parameters are read as well; the body wins)."""
    return _pdf(load(PdfQuerySchema, {**request.args.to_dict(), **body}, tab_id))


def _pdf(req: dict[str, Any]) -> Response | dict[str, Any]:
    target = output_file(state().config.server.state_dir, req["path"], f"pdfs/page-{stamp()}.pdf") \
        if req["output"] == "file" else None
    options = {k: req[k] for k in _PRINT_OPTIONS if req[k] not in ("", None)}
    printed = tab(req.get("tabId"))
    policy = idpi_hooks.policy()  # read here: the job runs on the tab's worker, outside the request

    def page_words(t: Tab) -> tuple[str, str]:
        """The page's title, URL and text (what the PDF says, for the IDPI scanner), and its URL."""
        info = page_info(t)
        if not policy.scans:
            return "", info["url"]
        text = content.text(t, raw=True, timeout_s=policy.scan_timeout_s)
        return corpus([info["title"], info["url"], text]), info["url"]

    # Scanned before printing: a refused page is never written anywhere.
    words, url = on_tab(printed, page_words)
    warning = idpi_hooks.screen(words, url)
    data = on_tab(printed, lambda t: print_to_pdf(t, options))  # Chrome's refusals: 400 / 502 (app.web.errors)
    if target is not None:
        size = write_atomic(target, data)
        return {**saved(target, size, "pdf"), **warning}
    if req["raw"]:
        return Response(data, content_type="application/pdf")
    return {"format": "pdf", "base64": base64.b64encode(data).decode(), **warning}
