"""The contract of the network routes (GET /network..., the exports, POST /network/clear, /network/route):
what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from cdp import intercept

from ...web.schemas import Loose
from .. import har
from ..contract import MAX_COUNT, Answer, Number, TabIdMixin

BODY_WAIT_S = 2.0       # a body Chrome is still handing over is waited for this long (default of timeoutMs)
MAX_BODY_WAIT_MS = 30_000
BODY_MODES = ("auto", "retained-preferred", "retained-only", "live-only")
_STATUS = r"^([1-5]xx|[1-5][0-9]{2}|[1-5][0-9]{2}-[1-5][0-9]{2})$"


# --- what the routes take ------------------------------------------------------------------------
def _format_field() -> fields.String:
    """``format``: checked by the view (:func:`_export_format`), so that another name is answered with
    the original's ``unknown_format`` and the list of formats."""
    return fields.String(load_default="har", metadata={
        "enum": list(har.FORMATS), "description": "har (a HAR 1.2 document) or ndjson (one HAR entry a line); "
                                                  "another name: 400 unknown_format with the available list"})



class NetworkFilterSchema(Loose, TabIdMixin):
    filter = fields.String(load_default="", metadata={"description": "a substring of the URL"})
    method = fields.String(load_default="", validate=validate.Length(max=16))
    status = fields.String(load_default="", validate=validate.Regexp(_STATUS, error="status: 404, 4xx or 400-499"),
                           metadata={"description": "a status (404), a class (4xx) or a range (400-499)"})
    type = fields.String(load_default="", validate=validate.Length(max=64),
                         metadata={"description": "resource type, any case: document, xhr, fetch, image, ... "
                                                  "(xhr and fetch each match both)"})


class NetworkQuerySchema(NetworkFilterSchema):
    limit = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_COUNT),
                           metadata={"description": "the last N entries (0: all)"})
    bufferSize = fields.Integer(validate=validate.Range(min=1, max=10000), metadata={
        "description": "accepted for compatibility: capture starts with each tab, sized by server.networkBufferSize"})
    broken = fields.Boolean(load_default=False,
                            metadata={"description": "only responses of 400 and above and failed loads, short"})


class NetworkDetailQuerySchema(Loose, TabIdMixin):
    body = fields.Boolean(load_default=False, metadata={"description": "include the retained response body"})
    bodyMode = fields.String(load_default="auto", validate=validate.OneOf(BODY_MODES), metadata={
        "description": "accepted for the original's clients: bodies here are the retained ones "
                       "(server.retainNetworkBodies), never fetched again from the page"})
    timeoutMs = fields.Integer(load_default=int(BODY_WAIT_S * 1000),
                               validate=validate.Range(min=0, max=MAX_BODY_WAIT_MS),
                               metadata={"description": "how long to wait for a body still being retained"})


class NetworkExportQuerySchema(NetworkQuerySchema):
    body = fields.Boolean(load_default=False, metadata={"description": "include response bodies"})
    redact = fields.Boolean(load_default=True,
                            metadata={"description": "false: keep cookies and authorization headers"})
    format = _format_field()
    output = fields.String(load_default="", validate=validate.OneOf(("", "json", "file")))
    path = fields.String(load_default="", metadata={"description": "with output=file: where, in the state dir"})


class NetworkExportStreamQuerySchema(NetworkFilterSchema):
    path = fields.String(required=True, validate=validate.Length(min=1),
                         error_messages={"required": "path required for streaming export"},
                         metadata={"description": "where the HAR is written, in the state dir"})
    body = fields.Boolean(load_default=False)
    redact = fields.Boolean(load_default=True)
    format = _format_field()


class NetworkClearQuerySchema(Loose):
    tabId = fields.String(validate=validate.Length(min=1), metadata={"description": "this tab only (default: all)"})


class RouteSchema(Loose, TabIdMixin):
    pattern = fields.String(required=True, validate=validate.Length(min=1, max=intercept.MAX_PATTERN),
                            error_messages={"required": "pattern required"},
                            metadata={"description": "URL glob (* any characters, ? one); no wildcard: substring"})
    action = fields.String(load_default="continue", validate=validate.OneOf(intercept.ACTIONS))
    body = fields.String(load_default="", validate=validate.Length(max=intercept.MAX_FULFILL_BODY),
                         metadata={"description": "fulfill: the response body"})
    contentType = fields.String(load_default="", validate=validate.Length(max=256),
                                metadata={"description": "fulfill: one of the types a browser never runs "
                                                         "(default application/json)"})
    status = fields.Integer(load_default=0, validate=validate.Range(min=0, max=599),
                            metadata={"description": "fulfill: 100-599 (default 200)"})
    resourceType = fields.String(load_default="", validate=validate.Length(max=64),
                                 metadata={"description": "only requests of this type (document, xhr, image, ...)"})
    method = fields.String(load_default="", validate=validate.Length(max=16),
                           metadata={"description": "only requests of this HTTP method"})
    headers = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=256)),
                          values=fields.String(validate=validate.Length(max=8192)), load_default=dict,
                          metadata={"description": "continue: request headers to set; fulfill: response headers"})


class UnrouteQuerySchema(Loose, TabIdMixin):
    pattern = fields.String(load_default="", metadata={"description": "the rule to remove (default: all)"})


# --- what they answer ----------------------------------------------------------------------------
class NetworkEntrySchema(Loose):
    requestId = fields.String(required=True)
    url = fields.String(required=True)
    method = fields.String(required=True)
    status = fields.Integer(required=True)
    statusText = fields.String(required=True)
    resourceType = fields.String(required=True)
    requestHeaders = fields.Dict(required=True)
    responseHeaders = fields.Dict(required=True)
    mimeType = fields.String(required=True)
    startTime = fields.String(required=True)
    endTime = fields.String(allow_none=True)
    duration = Number(allow_none=True, metadata={"description": "ms"})
    size = fields.Integer(required=True, metadata={"description": "bytes received"})
    error = fields.String(required=True)
    finished = fields.Boolean(required=True)
    failed = fields.Boolean(required=True)


class NetworkResponse(Answer):
    entries = fields.List(fields.Nested(NetworkEntrySchema))
    items = fields.List(fields.Nested(NetworkEntrySchema), metadata={"description": "the same as entries"})
    broken = fields.List(fields.Dict(), metadata={"description": "with broken=true: {url, resourceType, "
                                                                 "statusCode, error?}"})
    count = fields.Integer(required=True)
    tabId = fields.String(required=True)


class NetworkDetailResponse(Answer):
    entry = fields.Nested(NetworkEntrySchema, required=True)
    tabId = fields.String(required=True)
    bodyRetained = fields.Boolean()
    bodySource = fields.String(metadata={"enum": ["retained"], "description": "where responseBody came from"})
    responseBody = fields.String()
    base64Encoded = fields.Boolean()
    bodyTruncated = fields.Boolean(metadata={"description": "cut at server.retainNetworkBodyMaxBytes"})
    bodyPending = fields.Boolean()
    bodyNote = fields.String(metadata={"description": "why there is no body, or that it was cut"})


class NetworkClearedResponse(Answer):
    cleared = fields.Boolean(required=True)
    tabId = fields.String()
    all = fields.Boolean()


class SavedExportResponse(Answer):
    path = fields.String(required=True)
    size = fields.Integer(required=True)
    format = fields.String(required=True)
    timestamp = fields.String(required=True)
    entries = fields.Integer(required=True)


class HarResponse(Answer):
    """A HAR 1.2 document."""

    log = fields.Dict(required=True, metadata={"description": "{version, creator, pages, entries}"})


class RuleSchema(Answer):
    pattern = fields.String(required=True)
    action = fields.String(required=True)
    body = fields.String()
    contentType = fields.String()
    status = fields.Integer()
    resourceType = fields.String()
    method = fields.String()
    headers = fields.Dict()


class RoutesResponse(Answer):
    ok = fields.Boolean()
    tabId = fields.String(required=True)
    removed = fields.Integer()
    rules = fields.List(fields.Nested(RuleSchema), required=True)
