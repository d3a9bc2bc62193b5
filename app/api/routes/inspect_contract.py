"""The contract of the page reads (GET /title, /url, /html, /styles, the element reads, /count, /pdf):
what they take and what they answer."""
from __future__ import annotations

import copy
import re
from typing import Any

from marshmallow import ValidationError, fields, missing, post_load, pre_load, validate, validates_schema

from ...web.schemas import Loose
from ..contract import MAX_COUNT, Answer, IdpiWarned, InlineFileResponse, Number, SavedFileResponse, TabIdMixin

# --- what the routes take --------------------------------------------------------------------------------------------
_SELECTOR_REQUIRED = "selector (or ref) query parameter is required"


class PageReadQuerySchema(Loose, TabIdMixin):
    """GET /title and /url."""


class ElementQuerySchema(Loose, TabIdMixin):
    """One element by a unified selector; ``ref`` is the legacy name and takes any selector too."""

    selector = fields.String(load_default="")
    ref = fields.String(load_default="")

    @validates_schema
    def _needs_selector(self, data, **kwargs):  # type: ignore[no-untyped-def]
        if not (data.get("selector") or data.get("ref") or "").strip():
            raise ValidationError(_SELECTOR_REQUIRED, "selector")


class AttrQuerySchema(ElementQuerySchema):
    name = fields.String(required=True, validate=validate.Length(min=1, error="name query parameter is required"),
                         error_messages={"required": "name query parameter is required"})


class HtmlQuerySchema(Loose, TabIdMixin):
    """The document, or one element with ``selector`` (or ``ref``)."""

    selector = fields.String(load_default="")
    ref = fields.String(load_default="")
    maxChars = fields.Integer(validate=validate.Range(min=1, max=100 * MAX_COUNT))


class StylesQuerySchema(Loose, TabIdMixin):
    selector = fields.String(load_default="")
    ref = fields.String(load_default="")
    prop = fields.String(load_default="")


_TEMPLATE_SCRIPT = re.compile(r"<\s*script|javascript\s*:|\bon[a-z]+\s*=", re.IGNORECASE)


def _safe_template(value: str) -> None:
    # Header and footer templates are rendered as HTML by Chrome: no scripts, no handlers.
    if _TEMPLATE_SCRIPT.search(value):
        raise ValidationError("template must not contain <script>, javascript: URLs or on* event handlers")


class PdfQuerySchema(Loose, TabIdMixin):
    """Page.printToPDF's options (inches), then how to answer: JSON base64, raw bytes or a file."""

    landscape = fields.Boolean(load_default=False)
    scale = fields.Float(load_default=1.0, validate=validate.Range(min=0.1, max=2))
    paperWidth = fields.Float(load_default=8.5, validate=validate.Range(min=0.1, max=200))
    paperHeight = fields.Float(load_default=11.0, validate=validate.Range(min=0.1, max=200))
    marginTop = fields.Float(load_default=0.4, validate=validate.Range(min=0, max=100))
    marginBottom = fields.Float(load_default=0.4, validate=validate.Range(min=0, max=100))
    marginLeft = fields.Float(load_default=0.4, validate=validate.Range(min=0, max=100))
    marginRight = fields.Float(load_default=0.4, validate=validate.Range(min=0, max=100))
    pageRanges = fields.String(load_default="")
    preferCSSPageSize = fields.Boolean(load_default=False)
    displayHeaderFooter = fields.Boolean(load_default=False)
    headerTemplate = fields.String(load_default="", validate=_safe_template)
    footerTemplate = fields.String(load_default="", validate=_safe_template)
    generateTaggedPDF = fields.Boolean(load_default=False)
    generateDocumentOutline = fields.Boolean(load_default=False)
    raw = fields.Boolean(load_default=False)
    output = fields.String(load_default="", validate=validate.OneOf(("", "inline", "json", "file")))
    path = fields.String(load_default="")


class _PdfBody(Loose):
    """POST /pdf's body: any of GET /pdf's parameters, each of its type and in its range.

    The view lays them over the query and validates the whole as GET's query is validated; this
    schema checks only the kinds of the values, in the body's order, and hands them on as sent.
    """

    @pre_load
    def _scalars_only(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        keys = {f.data_key for f in self.fields.values()}
        for key, val in data.items():
            if key in keys and val is not None and not isinstance(val, (str, bool, int, float)):
                raise ValidationError("must be a string, boolean or number", key)
        return data

    @post_load
    def _as_sent(self, data: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        return {self.fields[name].data_key: val for name, val in data.items()}


def _body_field(name: str, field: fields.Field) -> fields.Field:
    """GET /pdf's field ``name`` for the body: the same type and range (so the document shows what
    the validation will hold it to), no default (the query's, or GET's default, applies)."""
    clone = copy.deepcopy(field)
    clone.load_default = missing
    clone.data_key = name
    return clone


# GET /pdf's fields, named apart from their keys: the parser checks a field called tabId against
# the path, and here the path is checked against the merged request (a query tabId included).
PdfBodySchema = _PdfBody.from_dict(
    {f"body_{name}": _body_field(name, field) for name, field in PdfQuerySchema().fields.items()},
    name="PdfBodySchema")


# --- what they answer ------------------------------------------------------------------------------------------------
class PdfResponse(InlineFileResponse, IdpiWarned):
    """The PDF in base64 (and the IDPI scanner's warning about the page, if any)."""


class SavedPdfResponse(SavedFileResponse, IdpiWarned):
    """output=file: where the PDF went (and the scanner's warning, if any)."""


class HtmlResponse(Answer):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    html = fields.String(required=True)
    truncated = fields.Boolean(required=True, metadata={"description": "cut at maxChars"})


class StylesResponse(Answer):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    styles = fields.Dict(keys=fields.String(), values=fields.String(allow_none=True), required=True,
                         metadata={"description": "computed style, by property name (only prop with prop; "
                                                  "null for a property the browser does not know)"})


class ValueResponse(Answer):
    ref = fields.String(required=True, metadata={"description": "the selector, as given"})
    value = fields.String(required=True, allow_none=True)


class AttrResponse(ValueResponse):
    name = fields.String(required=True)


class Box(Answer):
    """Viewport CSS pixels."""

    x = Number(required=True)
    y = Number(required=True)
    width = Number(required=True)
    height = Number(required=True)
    top = Number(required=True)
    right = Number(required=True)
    bottom = Number(required=True)
    left = Number(required=True)


class BoxResponse(Answer):
    ref = fields.String(required=True)
    box = fields.Nested(Box, required=True)


class VisibleResponse(Answer):
    ref = fields.String(required=True)
    visible = fields.Boolean(required=True)


class EnabledResponse(Answer):
    ref = fields.String(required=True)
    enabled = fields.Boolean(required=True)


class CheckedResponse(Answer):
    ref = fields.String(required=True)
    checked = fields.Boolean(required=True)


class CountResponse(Answer):
    selector = fields.String(required=True)
    count = fields.Integer(required=True)
