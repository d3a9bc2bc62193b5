"""What each browser route answers: marshmallow schemas that describe every success answer.

They document ``GET /openapi.json``; views build their answers directly (a snapshot is too hot a
path to serialise twice), and tests load real answers with these schemas, whose unknown-field
check makes any drift between answer and document fail.
"""
from __future__ import annotations

from marshmallow import Schema, fields


class PageInfoResponse(Schema):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)


class HealthResponse(Schema):
    status = fields.String(required=True, metadata={"description": "ok, starting or error"})
    tabs = fields.Integer()
    restarts = fields.Integer()
    reason = fields.String(metadata={"description": "why the browser is not up"})


class TabInfo(Schema):
    id = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    type = fields.String(required=True)
    status = fields.String(required=True)


class TabsResponse(Schema):
    tabs = fields.List(fields.Nested(TabInfo), required=True)


class TabActionResponse(Schema):
    """``new``: the new tab's id, URL and title; ``focus``: ``focused`` and the id."""

    tabId = fields.String(required=True)
    url = fields.String()
    title = fields.String()
    focused = fields.Boolean()


class ClosedResponse(Schema):
    closed = fields.Boolean(required=True)
    tabId = fields.String(required=True)


class StatusResponse(Schema):
    status = fields.String(required=True)


class SnapshotAfterMixin(Schema):
    """With ``snap``: the page after the action (compact), or what changed (diff)."""

    snapshot = fields.String()
    snapshotFormat = fields.String(metadata={"enum": ["compact", "diff"]})


class ActionResponse(SnapshotAfterMixin):
    success = fields.Boolean(required=True)
    result = fields.Dict(required=True, metadata={"description": "what the action did, by kind"})


class StepResult(Schema):
    """One step of a batch: its result, or its error in the one error shape."""

    index = fields.Integer(required=True)
    success = fields.Boolean(required=True)
    result = fields.Dict()
    error = fields.String()
    code = fields.String()
    retryable = fields.Boolean()
    details = fields.Dict()


class ActionsResponse(SnapshotAfterMixin):
    results = fields.List(fields.Nested(StepResult), required=True)
    total = fields.Integer(required=True)
    successful = fields.Integer(required=True)
    failed = fields.Integer(required=True)


class SnapshotResponse(Schema):
    """``format=json``: the nodes (or, with ``diff=true``, what changed since the caller last looked)."""

    url = fields.String(required=True)
    title = fields.String(required=True)
    count = fields.Integer(required=True)
    nodes = fields.List(fields.Dict(), metadata={"description": "ref, role, name, value, state, depth, ..."})
    total = fields.Integer(metadata={"description": "nodes in the whole snapshot, when cut or paged"})
    truncated = fields.Boolean()
    maxTokens = fields.Integer()
    next = fields.String(metadata={"description": "the cursor for the rest: after=<ref>"})
    diff = fields.Boolean()
    added = fields.List(fields.Dict())
    changed = fields.List(fields.Dict())
    removed = fields.List(fields.Dict())
    counts = fields.Dict(keys=fields.String(), values=fields.Integer())


class SavedFileResponse(Schema):
    """``output=file``: where the answer was written, inside the state dir."""

    path = fields.String(required=True)
    size = fields.Integer(required=True)
    format = fields.String(required=True)
    timestamp = fields.String(required=True)


class InlineFileResponse(Schema):
    """The bytes in the answer: ``format`` (jpeg, png or pdf) and the bytes in base64."""

    format = fields.String(required=True)
    base64 = fields.String(required=True)


# --- reading a page: /text, /screenshot
class TextResponse(Schema):
    url = fields.String(required=True)
    title = fields.String(required=True)
    text = fields.String(required=True)
    truncated = fields.Boolean(required=True, metadata={"description": "cut at maxChars"})


# --- inspecting a page: /html, /styles, the element reads, /count (/title and /url: PageInfoResponse)
class HtmlResponse(Schema):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    html = fields.String(required=True)
    truncated = fields.Boolean(required=True, metadata={"description": "cut at maxChars"})


class StylesResponse(Schema):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    styles = fields.Dict(keys=fields.String(), values=fields.String(allow_none=True), required=True,
                         metadata={"description": "computed style, by property name (only prop with prop; "
                                                  "null for a property the browser does not know)"})


class ValueResponse(Schema):
    ref = fields.String(required=True, metadata={"description": "the selector, as given"})
    value = fields.String(required=True, allow_none=True)


class AttrResponse(ValueResponse):
    name = fields.String(required=True)


class Box(Schema):
    """Viewport CSS pixels."""

    x = fields.Float(required=True)
    y = fields.Float(required=True)
    width = fields.Float(required=True)
    height = fields.Float(required=True)
    top = fields.Float(required=True)
    right = fields.Float(required=True)
    bottom = fields.Float(required=True)
    left = fields.Float(required=True)


class BoxResponse(Schema):
    ref = fields.String(required=True)
    box = fields.Nested(Box, required=True)


class VisibleResponse(Schema):
    ref = fields.String(required=True)
    visible = fields.Boolean(required=True)


class EnabledResponse(Schema):
    ref = fields.String(required=True)
    enabled = fields.Boolean(required=True)


class CheckedResponse(Schema):
    ref = fields.String(required=True)
    checked = fields.Boolean(required=True)


class CountResponse(Schema):
    selector = fields.String(required=True)
    count = fields.Integer(required=True)


# --- running JavaScript: /evaluate
class EvaluateResponse(Schema):
    result = fields.Raw(required=True, allow_none=True,
                        metadata={"description": "the value, or a description of what cannot be sent by value"})


# --- finding and waiting: /find, /wait
class MatchExplained(Schema):
    lexical_score = fields.Float(required=True)
    role_score = fields.Float(required=True)
    composite = fields.Float(required=True)


class FindMatch(Schema):
    ref = fields.String(required=True)
    score = fields.Float(required=True)
    role = fields.String(required=True)
    name = fields.String(required=True)
    explain = fields.Nested(MatchExplained, metadata={"description": "with explain=true"})


class FindResponse(Schema):
    best_ref = fields.String(required=True, metadata={"description": "empty when nothing matched"})
    confidence = fields.String(required=True, metadata={"enum": ["high", "medium", "low"]})
    score = fields.Float(required=True)
    matches = fields.List(fields.Nested(FindMatch), required=True)
    strategy = fields.String(required=True, metadata={"enum": ["lexical", "structured"]})
    threshold = fields.Float(required=True)
    latency_ms = fields.Float(required=True)
    element_count = fields.Integer(required=True)


class WaitResponse(Schema):
    waited = fields.Boolean(required=True, metadata={"description": "false: the wait timed out"})
    elapsed = fields.Integer(required=True, metadata={"description": "milliseconds"})
    match = fields.String(metadata={"description": "what was waited for"})
    error = fields.String(metadata={"description": "why the wait ended without a match"})


# --- the page's console and errors: /console, /errors, their /clear
class ConsoleEntry(Schema):
    timestamp = fields.String(required=True)
    level = fields.String(required=True, metadata={"description": "log, info, warning, error, debug, ..."})
    message = fields.String(required=True)
    source = fields.String(metadata={"description": "the script's URL"})


class ErrorEntry(Schema):
    timestamp = fields.String(required=True)
    message = fields.String(required=True)
    url = fields.String()
    line = fields.Integer()
    column = fields.Integer()


class ConsoleResponse(Schema):
    tabId = fields.String(required=True)
    console = fields.List(fields.Nested(ConsoleEntry), required=True)


class ErrorsResponse(Schema):
    tabId = fields.String(required=True)
    errors = fields.List(fields.Nested(ErrorEntry), required=True)


class ClearedResponse(Schema):
    success = fields.Boolean(required=True)
    tabId = fields.String(required=True)


# --- cookies: /cookies (clearing answers StatusResponse)
class CookieInfo(Schema):
    name = fields.String(required=True)
    value = fields.String(required=True)
    domain = fields.String(required=True)
    path = fields.String(required=True)
    secure = fields.Boolean(required=True)
    httpOnly = fields.Boolean(required=True)
    sameSite = fields.String(required=True)
    expires = fields.Float(metadata={"description": "seconds since the epoch; absent for session cookies"})


class CookiesResponse(Schema):
    url = fields.String(required=True, metadata={"description": "the URL the cookies are for"})
    cookies = fields.List(fields.Nested(CookieInfo), required=True)
    count = fields.Integer(required=True)


class CookiesSetResponse(Schema):
    set = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    total = fields.Integer(required=True)


# --- dialogs and the tab's state: /dialog, /tabs/{tabId}/state
class DialogResponse(Schema):
    type = fields.String(required=True, metadata={"enum": ["alert", "confirm", "prompt", "beforeunload"]})
    message = fields.String(required=True)
    handled = fields.Boolean(required=True)


class DialogInfo(Schema):
    type = fields.String(required=True)
    message = fields.String(required=True)
    defaultPrompt = fields.String()


class LoadState(Schema):
    readyState = fields.String(required=True, metadata={"enum": ["loading", "interactive", "complete"]})
    navigationInProgress = fields.Boolean(required=True)
    state = fields.String(required=True, metadata={"enum": ["loading", "domcontentloaded", "load", "networkidle"]})


class TabStateResponse(Schema):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    dialogPresent = fields.Boolean(required=True)
    dialog = fields.Nested(DialogInfo, metadata={"description": "the open dialog, when there is one"})
    load = fields.Nested(LoadState, required=True)
    actionability = fields.String(required=True, metadata={"enum": ["ready", "caution", "blocked"]})


# --- stealth: /stealth/status
class StealthStatusResponse(Schema):
    level = fields.String(required=True)
    levels = fields.List(fields.String(), required=True)
    flags = fields.List(fields.String(), required=True, metadata={"description": "the launch flags it adds"})
    patches = fields.List(fields.String(), required=True)
    commands = fields.List(fields.String(), required=True, metadata={"description": "CDP methods it runs per tab"})
    userAgent = fields.String(required=True)
    window = fields.String(required=True, metadata={"description": "WIDTHxHEIGHT, empty when off"})


# --- saved state: /state/...
class StateSavedResponse(Schema):
    name = fields.String(required=True)
    path = fields.String(required=True)
    cookies = fields.Integer(required=True, metadata={"description": "how many cookies were saved"})
    origins = fields.List(fields.String(), required=True)
    encrypted = fields.Boolean(required=True)


class StateLoadedResponse(Schema):
    name = fields.String(required=True, allow_none=True)
    cookiesRestored = fields.Integer(required=True)
    storageItemsRestored = fields.Integer(required=True)
    origins = fields.List(fields.String(), required=True)
    skippedOrigins = fields.List(fields.String(), required=True,
                                 metadata={"description": "origins the tab is not on: load there to restore them"})


class StateEntry(Schema):
    name = fields.String(required=True)
    savedAt = fields.String(required=True)
    size = fields.Integer(required=True)


class StateListResponse(Schema):
    states = fields.List(fields.Nested(StateEntry), required=True)
    count = fields.Integer(required=True)


class StateRecordResponse(Schema):
    """A saved state as its file holds it (cookie values masked unless reveal=true)."""

    version = fields.Integer()
    name = fields.String()
    savedAt = fields.String()
    origins = fields.List(fields.String())
    cookies = fields.List(fields.Dict())
    storage = fields.Dict(metadata={"description": "by origin: local and session storage"})
    metadata = fields.Dict()
    encrypted = fields.Boolean()


class StateDeletedResponse(Schema):
    deleted = fields.String(required=True)


class StateCleanedResponse(Schema):
    removed = fields.Integer(required=True)
    olderThanHours = fields.Float(required=True, metadata={"description": "a whole number when it is one"})
    sessionsDir = fields.String(required=True)


# --- files in and out: /upload, /download
class UploadResponse(Schema):
    status = fields.String(required=True)
    files = fields.Integer(required=True)


class DownloadResponse(Schema):
    data = fields.String(required=True, metadata={"description": "base64"})
    contentType = fields.String(required=True)
    size = fields.Integer(required=True)
    url = fields.String(required=True, metadata={"description": "the final URL, after redirects"})


class DownloadSavedResponse(Schema):
    status = fields.String(required=True)
    path = fields.String(required=True)
    size = fields.Integer(required=True)
    contentType = fields.String(required=True)

