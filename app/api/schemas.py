"""What each route takes: marshmallow schemas that validate requests (and describe them)."""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

from marshmallow import (
    Schema,
    ValidationError,
    fields,
    missing,
    post_load,
    pre_load,
    validate,
    validates_schema,
)

from cdp import steps
from cdp.input import Target
from cdp.steps import Step

from ..web.errors import BadRequest
from ..web.schemas import Loose, Strict

WAIT_FOR = ("none", "dom", "load", "networkidle", "selector")
SNAPSHOT_FORMATS = ("json", "compact", "text", "yaml")
ACTION_KINDS = tuple(steps.ACTION_KINDS)
SNAP = ("", "diff", "compact")


# Every number a request carries has a range (flask-smorest documents it as minimum/maximum); NaN and
# Infinity are refused by the fields themselves. Chrome takes any double, but a wheel turned by
# 1e308 px wedges the tab's input pipeline, and no page or picture is larger than this anyway.
MAX_PX = 100_000
PX = validate.Range(min=-MAX_PX, max=MAX_PX)  # coordinates, deltas, offsets (CSS px)
SIZE_PX = validate.Range(min=1, max=MAX_PX)
TIMEOUT_S = validate.Range(min=0.1, max=120)
MAX_COUNT = 1_000_000  # entries, characters, tokens: far more than any answer holds


class TabIdMixin(Schema):
    tabId = fields.String(validate=validate.Length(min=1))


def _wait_for(value: str) -> None:
    # Its own code, as the original's: not a ValidationError (which would answer bad_request).
    if value not in WAIT_FOR:
        raise BadRequest(f"invalid waitFor {value!r}: one of {', '.join(WAIT_FOR)}", code="bad_wait_for",
                         details={"field": "waitFor"})


class NavigateSchema(Loose, TabIdMixin):
    url = fields.String(required=True, validate=validate.Length(min=1),
                        error_messages={"required": "url required"})
    newTab = fields.Boolean(load_default=False)
    # Taken as 120 when above it (the original clamps rather than refuses); 0: the config's default.
    timeout = fields.Float(validate=validate.Range(min=0, max=MAX_COUNT),
                           metadata={"description": "seconds (default timeouts.navigateSec); above 120 means 120"})
    waitFor = fields.String(load_default="dom", validate=_wait_for, metadata={"enum": list(WAIT_FOR)})
    waitSelector = fields.String(load_default="")
    waitTitle = fields.Float(load_default=0, validate=validate.Range(min=0, max=MAX_COUNT),
                             metadata={"description": "seconds (at most 30) to wait for a real title after load"})
    blockImages = fields.Boolean(metadata={"description": "refuse images in this tab (default: instanceDefaults)"})
    blockMedia = fields.Boolean(metadata={"description": "refuse audio and video (default: instanceDefaults)"})
    blockAds = fields.Boolean(metadata={"description": "refuse known ad and tracker hosts (default: instanceDefaults)"})
    dismissBanners = fields.Boolean(load_default=False,
                                    metadata={"description": "best effort: accept a cookie/consent banner after load"})
    browser = fields.String(metadata={"description": "engine: chrome, cloak or ghost-chrome (browsers.available)"})

    @validates_schema
    def _selector_needs_wait_for(self, data, **kwargs):  # type: ignore[no-untyped-def]
        if data.get("waitFor") == "selector" and not data.get("waitSelector"):
            raise ValidationError("waitFor 'selector' needs waitSelector", "waitSelector")


TAB_ACTION_ERROR = "action must be 'new' or 'focus'; use /close to close a tab"


class TabActionSchema(Loose, TabIdMixin):
    action = fields.String(required=True, validate=validate.OneOf(("new", "focus"), error=TAB_ACTION_ERROR),
                           error_messages={"required": TAB_ACTION_ERROR})
    url = fields.String()


class CloseSchema(Loose, TabIdMixin):
    pass


class TabQuerySchema(Loose, TabIdMixin):
    pass


class HistoryQuerySchema(TabQuerySchema):
    """``POST /back|/forward|/reload``: the tab, and whether to dismiss a consent banner after."""

    dismissBanners = fields.Boolean(load_default=False, metadata={
        "description": "best effort: click a cookie/consent banner's accept button once the page is there"})


class SnapshotQuerySchema(Loose, TabIdMixin):
    filter = fields.String(load_default="all", validate=validate.OneOf(("all", "interactive")))
    interactive = fields.Boolean(load_default=False)
    format = fields.String(load_default="json", validate=validate.OneOf(SNAPSHOT_FORMATS))
    compact = fields.Boolean(load_default=False)
    depth = fields.Integer(load_default=-1, validate=validate.Range(min=-1, max=10_000))
    maxTokens = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_COUNT))
    selector = fields.String(load_default="")
    after = fields.String(load_default="")
    diff = fields.Boolean(load_default=False)
    output = fields.String(load_default="", validate=validate.OneOf(("", "inline", "file")))
    path = fields.String(load_default="")
    timeout = fields.Float(validate=TIMEOUT_S)


class TargetMixin(Schema):
    ref = fields.String()
    selector = fields.String()
    nodeId = fields.Integer(validate=validate.Range(min=1, max=2**31 - 1))
    x = fields.Float(validate=PX)
    y = fields.Float(validate=PX)


class ActionSchema(Loose, TabIdMixin, TargetMixin):
    kind = fields.String(required=True, validate=validate.OneOf(ACTION_KINDS, error="unknown action kind: {input}"),
                         error_messages={"required": "missing required field 'kind'"})
    text = fields.String()
    value = fields.String()
    key = fields.String()
    modifiers = fields.Integer(load_default=0, validate=validate.Range(min=0, max=15))
    button = fields.String(load_default="left", validate=validate.OneOf(("left", "right", "middle")))
    scrollX = fields.Float(validate=PX)
    scrollY = fields.Float(validate=PX)
    deltaX = fields.Float(validate=PX)
    deltaY = fields.Float(validate=PX)
    direction = fields.String(validate=validate.OneOf(("up", "down", "left", "right")))
    pixels = fields.Float(validate=SIZE_PX)
    dragX = fields.Float(load_default=0, validate=PX)
    dragY = fields.Float(load_default=0, validate=PX)
    frameW = fields.Float(validate=SIZE_PX)
    frameH = fields.Float(validate=SIZE_PX)
    waitNav = fields.Boolean(load_default=False)
    dismissBanners = fields.Boolean(load_default=False, metadata={
        "description": "with waitNav: dismiss a cookie/consent banner on the page the step lands on"})
    dialogAction = fields.String(load_default="", validate=validate.OneOf(("", "accept", "dismiss")))
    dialogText = fields.String(load_default="")
    humanize = fields.Boolean()
    fast = fields.Boolean(load_default=False)
    snap = fields.String(load_default="", validate=validate.OneOf(SNAP, error="snap must be 'diff' or 'compact'"))
    timeout = fields.Float(validate=TIMEOUT_S)
    owner = fields.String(validate=validate.Length(min=1, max=200), metadata={"description": "the tab's lock owner"})
    mode = fields.String(load_default="", validate=validate.OneOf(steps.CLICK_MODES),
                         metadata={"description": "click delivery: '' (input events), dom (el.click()), "
                                                  "dispatch (synthetic DOM events)"})
    autoSwitch = fields.Boolean(load_default=True, metadata={"description": "a click that opens a tab makes it "
                                                                            "the caller's current tab; false: "
                                                                            "that tab is closed (closedTab)"})
    browser = fields.String(validate=validate.Length(max=64))

    @validates_schema
    def _needs(self, data, **kwargs):  # type: ignore[no-untyped-def]
        missing = steps.missing_field(data.get("kind", ""), data)
        if missing is not None:
            raise ValidationError(missing[1], missing[0])
        if ("x" in data) != ("y" in data):
            raise ValidationError("x and y go together", "y" if "x" in data else "x")
        if data.get("mode") and data.get("humanize"):
            raise ValidationError("mode cannot be combined with humanize", "mode")


    @post_load
    def _request(self, data: dict[str, Any], **kwargs: Any) -> ActionRequest:
        dx = data.get("deltaX", data.get("scrollX", 0)) or 0
        dy = data.get("deltaY", data.get("scrollY", 0)) or 0
        if data.get("direction"):
            sx, sy = _DIRECTIONS[data["direction"]]
            amount = data.get("pixels", 300)
            dx, dy = sx * amount, sy * amount
        target = Target(ref=data.get("ref", ""), selector=data.get("selector", ""), node_id=data.get("nodeId"),
                        x=data.get("x"), y=data.get("y"), frame_w=data.get("frameW"), frame_h=data.get("frameH"))
        step = Step(kind=data["kind"], target=target, text=data.get("text", data.get("value", "")),
                    value=data.get("value"), key=data.get("key", ""), modifiers=data["modifiers"],
                    button=data["button"], dx=dx, dy=dy, drag_x=data["dragX"], drag_y=data["dragY"],
                    wait_nav=data["waitNav"], dismiss_banners=data["dismissBanners"],
                    dialog_action=data["dialogAction"], dialog_text=data["dialogText"], fast=data["fast"],
                    mode=data["mode"])
        return ActionRequest(step=step, tab_id=data.get("tabId"), snap=data["snap"], timeout_s=data.get("timeout"),
                             humanize=data.get("humanize"), owner=data.get("owner"), auto_switch=data["autoSwitch"],
                             browser=data.get("browser"))


_DIRECTIONS = {"up": (0, -1), "down": (0, 1), "left": (-1, 0), "right": (1, 0)}


@dataclass
class ActionRequest:
    """A validated ``/action`` (or one step of ``/actions``): the step, and how to run and answer it."""

    step: Step
    tab_id: str | None = None
    snap: str = ""
    timeout_s: float | None = None
    humanize: bool | None = None  # None: the config's instanceDefaults.humanize
    owner: str | None = None  # the lock owner the request speaks for
    auto_switch: bool = True  # a click that opens a tab makes it the caller's current tab
    browser: str | None = None  # the engine asked for (app/api/engines.py)


class ActionsSchema(Loose, TabIdMixin):
    actions = fields.List(fields.Dict(), required=True, validate=validate.Length(min=1, error="actions array is empty"),
                          error_messages={"required": "actions array is empty"})
    stopOnError = fields.Boolean(load_default=False)
    snap = fields.String(load_default="", validate=validate.OneOf(SNAP, error="snap must be 'diff' or 'compact'"))
    owner = fields.String(validate=validate.Length(min=1, max=200))


class TextQuerySchema(Loose, TabIdMixin):
    mode = fields.String(load_default="readable", validate=validate.OneOf(("readable", "raw")))
    format = fields.String(load_default="json", validate=validate.OneOf(("json", "text", "plain")))
    maxChars = fields.Integer(validate=validate.Range(min=1, max=100 * MAX_COUNT))
    selector = fields.String(load_default="", metadata={"description": "the text of this element alone"})
    ref = fields.String(load_default="", metadata={"description": "the same as selector (any selector)"})
    frameId = fields.String(load_default="", metadata={"description": "the text of this frame (and its frames)"})


class ScreenshotQuerySchema(Loose, TabIdMixin):
    format = fields.String(load_default="jpeg", validate=validate.OneOf(("jpeg", "jpg", "png")))
    quality = fields.Integer(load_default=80, validate=validate.Range(min=0, max=100))
    raw = fields.Boolean(load_default=False)
    beyondViewport = fields.Boolean(load_default=False)
    scale = fields.Float(load_default=1.0, validate=validate.Range(min=0.05, max=4))


class EvaluateSchema(Loose, TabIdMixin):
    expression = fields.String(required=True, validate=validate.Length(min=1),
                               error_messages={"required": "expression required"})
    awaitPromise = fields.Boolean(load_default=False)


# The original's names; ``networkidle`` is its alias of ``network-idle`` (the wait answers the latter).
LOAD_STATES = ("ready-state", "content-loaded", "network-idle", "networkidle")


class WaitSchema(Loose, TabIdMixin):
    ms = fields.Integer(validate=validate.Range(min=0, max=30000))
    selector = fields.String(validate=validate.Length(min=1))
    state = fields.String(load_default="visible", validate=validate.OneOf(("visible", "hidden", "attached", "detached")))
    text = fields.String(validate=validate.Length(min=1))
    notText = fields.String(validate=validate.Length(min=1))
    url = fields.String(validate=validate.Length(min=1))
    load = fields.String(validate=validate.OneOf(LOAD_STATES, error="load must be one of " + ", ".join(LOAD_STATES)))
    fn = fields.String(validate=validate.Length(min=1))
    idleFor = fields.Integer(load_default=500, validate=validate.Range(min=0, max=10000),
                             metadata={"description": "ms with no request in flight that network-idle needs"})
    # ms; the wait view clamps it to 100..30000 rather than refusing a long one (as the original does)
    timeout = fields.Integer(load_default=10000, metadata={"description": "ms, clamped to 100..30000"})

    @post_load
    def _canonical_load(self, data, **kwargs):  # type: ignore[no-untyped-def]
        if data.get("load") == "networkidle":
            data["load"] = "network-idle"
        return data


class FindSchema(Loose, TabIdMixin):
    query = fields.String(required=True, validate=validate.Length(min=1, error="missing required field 'query'"),
                          error_messages={"required": "missing required field 'query'"})
    threshold = fields.Float(load_default=0.3, validate=validate.Range(min=0, max=1))
    topK = fields.Integer(load_default=3, validate=validate.Range(min=1, max=50))
    explain = fields.Boolean(load_default=False)


# --- upload, download, saved state
STATE_NAME = r"^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$"
_STATE_NAME_ERROR = ("name must be 1-64 letters, digits, '-', '_' or '.', not starting with a dot "
                     "(no slashes: state files stay in <stateDir>/sessions)")


def _state_name(**kwargs):  # type: ignore[no-untyped-def]
    return fields.String(validate=validate.Regexp(STATE_NAME, error=_STATE_NAME_ERROR), **kwargs)


class UploadSchema(Loose, TabIdMixin):
    selector = fields.String(load_default="input[type=file]", validate=validate.Length(min=1))
    files = fields.List(fields.String(), load_default=list)
    paths = fields.List(fields.String(validate=validate.Length(min=1)), load_default=list)
    owner = fields.String(validate=validate.Length(min=1, max=200), metadata={"description": "the tab's lock owner"})

    # _needs_something, in the document's words (app/web/openapi.py reads it).
    OPENAPI_RULES = {"anyOf": [{"required": ["files"], "properties": {"files": {"minItems": 1}}},
                               {"required": ["paths"], "properties": {"paths": {"minItems": 1}}}]}

    @validates_schema
    def _needs_something(self, data, **kwargs):  # type: ignore[no-untyped-def]
        if not data.get("files") and not data.get("paths"):
            raise ValidationError("files or paths required", "files")


class DownloadQuerySchema(Loose, TabIdMixin):
    url = fields.String(required=True, validate=validate.Length(min=1, error="url required"),
                        error_messages={"required": "url required"})
    output = fields.String(load_default="", validate=validate.OneOf(("", "inline", "json", "file")))
    path = fields.String(load_default="")
    raw = fields.Boolean(load_default=False)


class StateSaveSchema(Loose, TabIdMixin):
    name = _state_name()
    encrypt = fields.Boolean(load_default=False)
    metadata = fields.Dict(load_default=dict)


class StateLoadSchema(Loose, TabIdMixin):
    name = _state_name(required=True, error_messages={"required": "name required"})


class StateNameQuerySchema(Loose):
    name = _state_name(required=True, error_messages={"required": "name required"})
    reveal = fields.Boolean(load_default=False)


class StateCleanSchema(Loose):
    olderThanHours = fields.Float(load_default=24.0, validate=validate.Range(min=0, max=MAX_COUNT))


# --- reads, logs, cookies, dialogs
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


class ScreenshotRequestSchema(ScreenshotQuerySchema):
    """The screenshot query, plus clipping to one element and saving to a file."""

    selector = fields.String(load_default="")
    output = fields.String(load_default="", validate=validate.OneOf(("", "inline", "json", "file")))
    path = fields.String(load_default="")
    annotate = fields.Boolean(load_default=False, metadata={
        "description": "draw numbered boxes over the interactive elements for this picture; answer them"})
    noAnimations = fields.Boolean(load_default=False, metadata={
        "description": "hold animations and transitions still for the capture"})


# --- pictures with more than pixels: /capture, /annotate; live frames: /screencast, /record/*
class CaptureQuerySchema(Loose, TabIdMixin):
    selector = fields.String(load_default="")
    filter = fields.String(load_default="interactive", validate=validate.OneOf(("all", "interactive")))
    depth = fields.Integer(load_default=-1, validate=validate.Range(min=-1, max=10_000))
    format = fields.String(load_default="jpeg", validate=validate.OneOf(("jpeg", "jpg", "png")))
    quality = fields.Integer(load_default=80, validate=validate.Range(min=0, max=100))
    scale = fields.Float(load_default=1.0, validate=validate.Range(min=0.05, max=4))
    output = fields.String(load_default="file", validate=validate.OneOf(("file", "inline", "raw")))
    requirePair = fields.Boolean(load_default=False, metadata={
        "description": "409 when the page loaded a new document during the capture"})
    noAnimations = fields.Boolean(load_default=False)
    wait = fields.String(load_default="stable", validate=validate.OneOf(("stable", "load", "none")))
    withBounds = fields.Boolean(load_default=True)
    beyondViewport = fields.Boolean(load_default=False)


class AnnotateQuerySchema(Loose, TabIdMixin):
    selector = fields.String(load_default="")
    clear = fields.Boolean(load_default=False)


class ScreencastQuerySchema(Loose, TabIdMixin):
    format = fields.String(load_default="jpeg", validate=validate.OneOf(("jpeg", "png")))
    quality = fields.Integer(load_default=40, validate=validate.Range(min=1, max=100))
    maxWidth = fields.Integer(load_default=800, validate=validate.Range(min=16, max=4096))
    maxHeight = fields.Integer(load_default=600, validate=validate.Range(min=16, max=4096))
    everyNthFrame = fields.Integer(load_default=1, validate=validate.Range(min=1, max=60))
    fps = fields.Integer(load_default=5, validate=validate.Range(min=1, max=30),
                         metadata={"description": "at most this many frames a second reach the client"})


class RecordStartSchema(Loose, TabIdMixin):
    file = fields.String(load_default="", metadata={
        "description": "the file's name under the state dir's recordings folder (default: a timestamp)"})
    format = fields.String(load_default="webm", validate=validate.OneOf(("webm", "gif")))
    fps = fields.Integer(load_default=5, validate=validate.Range(min=1, max=30))
    quality = fields.Integer(load_default=80, validate=validate.Range(min=1, max=100))
    scale = fields.Float(load_default=1.0, validate=validate.Range(min=0.1, max=1))


class RecordStopSchema(Loose):
    discard = fields.Boolean(load_default=False, metadata={"description": "drop the recording, write no file"})


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


class LogsQuerySchema(Loose, TabIdMixin):
    """GET /console and /errors: the last ``limit`` entries (0: all that are kept)."""

    limit = fields.Integer(load_default=0, validate=validate.Range(min=0, max=MAX_COUNT))


class CookiesQuerySchema(Loose, TabIdMixin):
    url = fields.String(load_default="")
    name = fields.String(load_default="")


class CookieSchema(Loose):
    name = fields.String(load_default="")
    value = fields.String(load_default="")
    domain = fields.String(load_default="")
    path = fields.String(load_default="")
    secure = fields.Boolean(load_default=False)
    httpOnly = fields.Boolean(load_default=False)
    sameSite = fields.String(load_default="")
    # seconds since the epoch (0: a session cookie); Chrome refuses dates past year 9999
    expires = fields.Float(load_default=0, validate=validate.Range(min=-1, max=253_402_300_799))


class CookiesSetSchema(Loose, TabIdMixin):
    url = fields.String(required=True, validate=validate.Length(min=1, error="url is required"),
                        error_messages={"required": "url is required"})
    cookies = fields.List(fields.Nested(CookieSchema), required=True,
                          validate=validate.Length(min=1, error="cookies array is empty"),
                          error_messages={"required": "cookies array is empty"})


class DialogSchema(Loose, TabIdMixin):
    action = fields.String(required=True,
                           validate=validate.OneOf(("accept", "dismiss"), error="action must be 'accept' or 'dismiss'"),
                           error_messages={"required": "action required (accept or dismiss)"})
    text = fields.String(load_default="")


# --- several agents and people on one tab: /lock, /unlock, /tabs/{id}/handoff|resume, /macro
OWNER = validate.Length(min=1, max=200)


class LockSchema(Loose, TabIdMixin):
    owner = fields.String(required=True, validate=OWNER, error_messages={"required": "owner required"})
    timeoutSec = fields.Float(load_default=600.0, validate=validate.Range(min=1, max=86400))


class UnlockSchema(Loose, TabIdMixin):
    owner = fields.String(required=True, validate=OWNER, error_messages={"required": "owner required"})


class HandoffSchema(Loose):
    reason = fields.String(load_default="", validate=validate.Length(max=1000))
    # ms until the tab goes back to the agents by itself; 0 or absent: until POST /resume
    timeoutMs = fields.Integer(load_default=0, validate=validate.Range(min=0, max=86_400_000))


class ResumeSchema(Loose):
    status = fields.String(load_default="completed", validate=validate.Length(min=1, max=100))
    resolvedData = fields.Raw(load_default=None, allow_none=True)


class FingerprintRotateSchema(Loose):
    """``POST /fingerprint/rotate``: ours, ``seed`` (the hardware persona every tab's next document
    gets), or the original's device for one tab (``tabId``, else the current tab): ``os``,
    ``browser``, ``screen``, ``language``, ``timezone``, applied at once and kept across navigations."""

    seed = fields.Integer(validate=validate.Range(min=1, max=2**31 - 1),
                          metadata={"description": "the persona to take (the same seed, the same device); "
                                                   "random when absent"})
    tabId = fields.String(validate=validate.Length(min=1), metadata={"description": "the tab to give the device"})
    os = fields.String(validate=validate.OneOf(("windows", "mac", "linux", "random")),
                       metadata={"description": "the system the tab's user agent and navigator.platform name"})
    browser = fields.String(validate=validate.OneOf(("chrome", "edge")),
                            metadata={"description": "chrome (default), or edge on windows"})
    screen = fields.String(validate=validate.Regexp(r"^(?:random|(?:[3-9]\d{2}|[1-7]\d{3})x(?:2[4-9]\d|[3-9]\d{2}|"
                                                    r"[1-4]\d{3}))$", error="WIDTHxHEIGHT (300-7999 by 240-4999) "
                                                                             "or random"),
                           metadata={"description": "the viewport and screen, e.g. 1366x768 (default 1920x1080)"})
    language = fields.String(validate=validate.Regexp(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,3}$",
                                                      error="a language tag, like en-US"))
    timezone = fields.Integer(metadata={"description": "minutes east of UTC: one of "
                                                       "-480, -420, -360, -300, -240, 0, 60, 120, 330, 480, 540"})
    webgl = fields.Boolean(metadata={"description": "accepted for the original's clients (WebGL, canvas, fonts "
                                                    "and audio follow the stealth level)"})
    canvas = fields.Boolean()
    fonts = fields.Boolean()
    audio = fields.Boolean()


class MacroSchema(Loose, TabIdMixin):
    owner = fields.String(validate=OWNER)
    steps = fields.List(fields.Dict(), required=True,
                        validate=validate.Length(min=1, max=200, error="steps must hold 1 to 200 actions"),
                        error_messages={"required": "steps required"})
    stopOnError = fields.Boolean(load_default=True)
    stepTimeout = fields.Float(validate=validate.Range(min=0.1, max=60))


# --- storage, clipboard, emulation, frame scope
_STORAGE_TYPE_ERROR = "type must be 'local' or 'session'"


class StorageQuerySchema(Loose, TabIdMixin):
    """GET /storage: both storages unless ``type`` names one; only ``key`` when given."""

    type = fields.String(load_default="", validate=validate.OneOf(("", "local", "session"), error=_STORAGE_TYPE_ERROR))
    key = fields.String(load_default="")


class StorageSetSchema(Loose, TabIdMixin):
    key = fields.String(required=True, validate=validate.Length(min=1, error="key is required"),
                        error_messages={"required": "key is required"})
    value = fields.String(load_default="")
    type = fields.String(required=True, validate=validate.OneOf(("local", "session"), error=_STORAGE_TYPE_ERROR),
                         error_messages={"required": "type is required (local or session)"})


class StorageDeleteSchema(Loose, TabIdMixin):
    """DELETE /storage: one key of one storage, one storage, or (the default) both."""

    type = fields.String(load_default="all", validate=validate.OneOf(
        ("local", "session", "all"), error="type must be 'local', 'session', or 'all'"))
    key = fields.String(load_default="")

    # _key_needs_one_storage, in the document's words (app/web/openapi.py reads it).
    OPENAPI_RULES = {"anyOf": [{"properties": {"key": {"maxLength": 0}}},
                               {"required": ["type"], "properties": {"type": {"enum": ["local", "session"]}}}]}

    @validates_schema
    def _key_needs_one_storage(self, data, **kwargs):  # type: ignore[no-untyped-def]
        if data.get("key") and data.get("type") == "all":
            raise ValidationError("key cannot be used with type=all; omit key to clear both storages", "key")


CLIPBOARD_MAX_BYTES = 64 * 1024


def _clipboard_size(text: str) -> None:
    if len(text.encode("utf-8")) > CLIPBOARD_MAX_BYTES:
        raise ValidationError(f"text is larger than {CLIPBOARD_MAX_BYTES} bytes")


class ClipboardWriteSchema(Strict):
    """The shared clipboard takes text alone: any other field (a tabId too) is refused."""

    text = fields.String(required=True, validate=_clipboard_size, error_messages={"required": "text required"})


class ViewportSchema(Loose, TabIdMixin):
    width = fields.Integer(required=True, validate=validate.Range(min=1, max=10_000))
    height = fields.Integer(required=True, validate=validate.Range(min=1, max=10_000))
    deviceScaleFactor = fields.Float(load_default=1.0, validate=validate.Range(min=0, max=10),
                                     metadata={"description": "0: the screen's own"})
    mobile = fields.Boolean(load_default=False)


class GeolocationSchema(Loose, TabIdMixin):
    latitude = fields.Float(required=True, validate=validate.Range(min=-90, max=90))
    longitude = fields.Float(required=True, validate=validate.Range(min=-180, max=180))
    accuracy = fields.Float(load_default=1.0, validate=validate.Range(min=0, max=1_000_000),
                            metadata={"description": "metres"})


class OfflineSchema(Loose, TabIdMixin):
    offline = fields.Boolean(required=True, error_messages={"required": "offline required (true or false)"})
    latency = fields.Float(load_default=0, validate=validate.Range(min=0, max=60_000), metadata={"description": "ms"})
    downloadThroughput = fields.Float(load_default=-1, validate=validate.Range(min=-1, max=1e10),
                                      metadata={"description": "bytes/s; 0 or -1: not throttled"})
    uploadThroughput = fields.Float(load_default=-1, validate=validate.Range(min=-1, max=1e10),
                                    metadata={"description": "bytes/s; 0 or -1: not throttled"})


HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP token (RFC 9110)


def _header_value(value: str) -> None:
    if any(c in value for c in "\r\n\0"):
        raise ValidationError("header values must not contain line breaks or NUL")


class HeadersSchema(Loose, TabIdMixin):
    headers = fields.Dict(keys=fields.String(validate=validate.Regexp(HEADER_NAME, error="not a valid header name")),
                          values=fields.String(validate=_header_value), required=True,
                          error_messages={"required": "headers required (an empty object clears them)"})


class CredentialsSchema(Loose, TabIdMixin):
    username = fields.String(required=True, error_messages={"required": "missing required field: username"},
                             metadata={"description": "empty: stop answering auth challenges"})
    password = fields.String(load_default="")


MEDIA_FEATURES = ("media", "prefers-color-scheme", "prefers-reduced-motion", "prefers-reduced-transparency",
                  "prefers-reduced-data", "prefers-contrast", "forced-colors", "color-gamut", "inverted-colors")


class MediaSchema(Loose, TabIdMixin):
    feature = fields.String(required=True, validate=validate.OneOf(MEDIA_FEATURES),
                            error_messages={"required": "feature required"},
                            metadata={"description": "a CSS media feature, or media for the media type "
                                                     "(screen, print)"})
    value = fields.String(load_default="", metadata={"description": "empty: stop emulating the feature"})


class FrameSchema(Loose, TabIdMixin):
    target = fields.String(required=True, validate=validate.Length(min=1, error="missing required field 'target'"),
                           error_messages={"required": "missing required field 'target'"},
                           metadata={"description": "main, a ref, an iframe selector, or a frame's name or URL"})


class SessionCreateSchema(Strict):
    """``POST /sessions``: the agent the session stands for, a label, and how long it may live."""

    agentId = fields.String(required=True, validate=validate.Regexp(r"^[A-Za-z0-9._:@-]{1,128}$",
                                                                    error="1-128 letters, digits or . _ : @ -"))
    label = fields.String(load_default="", validate=validate.Length(max=200))
    # Each at most what the config allows (sessions.agent.maxLifetimeSec, idleTimeoutSec): the
    # answer's expiresAt and idleTimeoutSec say what the session got.
    ttlSec = fields.Integer(load_default=None, allow_none=True, strict=True,
                            validate=validate.Range(min=60, max=366 * 86400),
                            metadata={"description": "at most sessions.agent.maxLifetimeSec"})
    idleSec = fields.Integer(load_default=None, allow_none=True, strict=True,
                             validate=validate.Range(min=60, max=366 * 86400),
                             metadata={"description": "at most sessions.agent.idleTimeoutSec"})
