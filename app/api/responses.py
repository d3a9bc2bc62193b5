"""What each browser route answers: marshmallow schemas that describe every success answer.

They document ``GET /openapi.json``; views build their answers directly (a snapshot is too hot a
path to serialise twice), and tests load real answers with these schemas, whose unknown-field
check makes any drift between answer and document fail.
"""
from __future__ import annotations

from marshmallow import Schema, fields

from ..web.schemas import PageInfoResponse, StatusResponse  # noqa: F401 (answered by both apps)

IDPI_WARNING = "why the IDPI scanner flagged the content (security.idpi; also the X-IDPI-Warning header)"


class IdpiWarned(Schema):
    """Page content the IDPI scanner read: its warning, if it flagged something."""

    idpiWarning = fields.String(metadata={"description": IDPI_WARNING})


class IdpiMarked(IdpiWarned):
    """Page content as structured data: flagged, and marked as web content under wrapContent."""

    untrustedContent = fields.Boolean(metadata={"description": "with security.idpi.wrapContent: this is web "
                                                               "content, data only"})
    idpiNotice = fields.String(metadata={"description": "with security.idpi.wrapContent: the notice saying so"})


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
    status = fields.String(required=True, metadata={"enum": ["active", "paused_handoff"]})
    reason = fields.String(metadata={"description": "paused: why (the same as handoffReason)"})
    handoffReason = fields.String()
    pausedAt = fields.String()
    owner = fields.String(metadata={"description": "who holds the tab's lease"})
    lockedUntil = fields.String()


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


class SnapshotAfterMixin(IdpiMarked):
    """With ``snap``: the page after the action (compact), or what changed (diff); or, when the IDPI
    policy refuses that snapshot, why (the action itself ran)."""

    snapshot = fields.String()
    snapshotFormat = fields.String(metadata={"enum": ["compact", "diff"]})
    snapshotError = fields.Dict(metadata={"description": "the refusal, in the one error shape"})


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


class SnapshotResponse(IdpiMarked):
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


class Annotation(Schema):
    """A numbered box drawn over an interactive element: its ref and where it is (CSS px)."""

    ref = fields.String(required=True)
    role = fields.String(required=True)
    name = fields.String(required=True)
    tag = fields.String(required=True)
    box = fields.Dict(keys=fields.String(), values=fields.Float(), required=True,
                      metadata={"description": "{x, y, w, h}"})


class ScreenshotResponse(InlineFileResponse):
    """The picture in base64; with annotate=true, the boxes drawn on it (in its coordinates)."""

    annotations = fields.List(fields.Nested(Annotation))


class SavedScreenshotResponse(SavedFileResponse):
    annotations = fields.List(fields.Nested(Annotation))


# --- pictures with more than pixels: /capture, /annotate; live frames: /screencast, /record/*
class CaptureImage(Schema):
    format = fields.String(required=True)
    bytes = fields.Integer(required=True)
    path = fields.String(metadata={"description": "output=file: where the image was written"})
    base64 = fields.String(metadata={"description": "output=inline: the image"})
    coordinateSpace = fields.String(required=True, metadata={"enum": ["viewport", "document", "clip"]})
    clip = fields.Dict(keys=fields.String(), values=fields.Float())
    devicePixelRatio = fields.Float(required=True)
    viewport = fields.Dict(keys=fields.String(), values=fields.Float(), required=True,
                           metadata={"description": "{w, h, scrollX, scrollY}"})


class CaptureSnapshot(Schema):
    filter = fields.String(required=True)
    nodeCount = fields.Integer(required=True)
    nodes = fields.List(fields.Dict(), required=True,
                        metadata={"description": "snapshot nodes, with boundingBox and visible (withBounds)"})


class CaptureResponse(IdpiMarked):
    """A screenshot and a snapshot of one document; ``pairing.navigated``: a new document started
    loading while they were taken."""

    status = fields.String(required=True)
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    capturedAt = fields.String(required=True)
    epoch = fields.Dict(keys=fields.String(), values=fields.String(), required=True,
                        metadata={"description": "{frameId, loaderId, domEpoch}"})
    pairing = fields.Dict(required=True, metadata={"description": "{navigated, captureDurationMs}"})
    image = fields.Nested(CaptureImage, required=True)
    snapshot = fields.Nested(CaptureSnapshot, required=True)


class AnnotateResponse(Schema):
    """The overlay drawn (``annotated`` boxes), or ``cleared`` with clear=true."""

    annotated = fields.Integer()
    annotations = fields.List(fields.Nested(Annotation))
    cleared = fields.Boolean()


class ScreencastTab(Schema):
    id = fields.String(required=True)
    url = fields.String()
    title = fields.String()


class RecordStartResponse(Schema):
    status = fields.String(required=True)
    tabId = fields.String(required=True)
    format = fields.String(required=True)
    fps = fields.Integer(required=True)
    quality = fields.Integer(required=True)
    scale = fields.Float(required=True)


class RecordStopResponse(Schema):
    """The recording stopped: its file is being made at ``path`` (``status: encoding``), or it was
    dropped (``status: discarded``)."""

    status = fields.String(required=True, metadata={"enum": ["encoding", "discarded"]})
    path = fields.String(metadata={"description": "where the file will be once GET /record/status says finished"})
    frames = fields.Integer(required=True)
    durationMs = fields.Integer(required=True)
    format = fields.String(required=True)
    hint = fields.String()


class RecordStatusResponse(Schema):
    active = fields.Boolean(required=True, metadata={"description": "a recording runs or its file is being made"})
    state = fields.String(required=True, metadata={"enum": ["idle", "recording", "encoding", "finished", "failed"]})
    tabId = fields.String()
    format = fields.String()
    fps = fields.Integer()
    frames = fields.Integer()
    durationMs = fields.Integer()
    path = fields.String()
    outputPath = fields.String(metadata={"description": "the same as path (the original's name)"})
    size = fields.Integer(metadata={"description": "finished: the file's size in bytes"})
    error = fields.String()


class PdfResponse(InlineFileResponse, IdpiWarned):
    """The PDF in base64 (and the IDPI scanner's warning about the page, if any)."""


class SavedPdfResponse(SavedFileResponse, IdpiWarned):
    """output=file: where the PDF went (and the scanner's warning, if any)."""


# --- reading a page: /text, /screenshot
class TextResponse(IdpiWarned):
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


class FindResponse(IdpiWarned):
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
class Fingerprint(Schema):
    """A tab's device (the original's fingerprint)."""

    os = fields.String(required=True)
    browser = fields.String(required=True)
    userAgent = fields.String(required=True)
    platform = fields.String(required=True, metadata={"description": "navigator.platform"})
    vendor = fields.String(required=True)
    screenWidth = fields.Integer(required=True)
    screenHeight = fields.Integer(required=True)
    language = fields.String(required=True)
    uaPlatform = fields.String(required=True, metadata={"description": "navigator.userAgentData.platform"})
    uaPlatformVersion = fields.String(required=True)
    timezoneOffset = fields.Integer()
    timezone = fields.String()


class StealthStatusResponse(Schema):
    level = fields.String(required=True)
    levels = fields.List(fields.String(), required=True)
    headless = fields.Boolean(required=True)
    launchMode = fields.String(required=True, metadata={"enum": ["allocator", "attached"]})
    scriptHash = fields.String(required=True, metadata={"description": "sha256:<hex> of the injected script"})
    webdriverMode = fields.String(required=True)
    patchIds = fields.List(fields.String(), required=True)
    flags = fields.Dict(keys=fields.String(), values=fields.Boolean(), required=True,
                        metadata={"description": "which launch-time measures are on"})
    capabilities = fields.Dict(keys=fields.String(), values=fields.Boolean(), required=True)
    tradeoffs = fields.List(fields.String(), required=True)
    tabOverrides = fields.Dict(keys=fields.String(), values=fields.Boolean(), required=True)
    launchFlags = fields.List(fields.String(), required=True, metadata={"description": "the launch flags it adds"})
    patches = fields.List(fields.String(), required=True)
    commands = fields.List(fields.String(), required=True, metadata={"description": "CDP methods it runs per tab"})
    userAgent = fields.String(required=True)
    window = fields.String(required=True, metadata={"description": "WIDTHxHEIGHT, empty when off"})
    fingerprint = fields.Nested(Fingerprint, metadata={"description": "with tabId: the device that tab was given"})


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


# --- live state and storage: GET /state, GET|POST|DELETE /storage
class LiveStateResponse(Schema):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
    origins = fields.List(fields.String(), required=True)
    cookies = fields.List(fields.Dict(), required=True)
    storage = fields.Dict(required=True, metadata={"description": "by origin: local and session storage"})
    metadata = fields.Dict(required=True, metadata={"description": "url, title, origin, userAgent"})


class StorageItem(Schema):
    key = fields.String(required=True)
    value = fields.String(required=True)


class StorageResponse(Schema):
    local = fields.List(fields.Nested(StorageItem), required=True)
    session = fields.List(fields.Nested(StorageItem), required=True)
    origin = fields.String(required=True)


class StorageChangedResponse(Schema):
    success = fields.Boolean(required=True)
    origin = fields.String(required=True)
    action = fields.String(metadata={"enum": ["removeItem", "clear"]})
    key = fields.String()
    type = fields.String(metadata={"enum": ["all"]})


# --- the shared clipboard
class ClipboardWrittenResponse(Schema):
    success = fields.Boolean(required=True)


class ClipboardTextResponse(Schema):
    text = fields.String(required=True)


# --- emulation
class ViewportResponse(Schema):
    width = fields.Integer(required=True)
    height = fields.Integer(required=True)
    deviceScaleFactor = fields.Float(required=True)
    mobile = fields.Boolean(required=True)
    status = fields.String(required=True)


class GeolocationResponse(Schema):
    latitude = fields.Float(required=True)
    longitude = fields.Float(required=True)
    accuracy = fields.Float(required=True)
    status = fields.String(required=True, metadata={"enum": ["applied"]})
    permissionGranted = fields.Boolean(required=True, metadata={
        "description": "whether the page's origin may read the position without a prompt (Chrome grants it "
                       "only to secure origins: https, localhost)"})


class OfflineResponse(Schema):
    offline = fields.Boolean(required=True)
    status = fields.String(required=True, metadata={"enum": ["offline", "online"]})


class HeadersResponse(Schema):
    headers = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    status = fields.String(required=True)


class CredentialsResponse(Schema):
    username = fields.String(metadata={"description": "absent once cleared"})
    status = fields.String(required=True, metadata={"enum": ["applied", "cleared"]})


class MediaResponse(Schema):
    feature = fields.String(required=True)
    value = fields.String(required=True)
    status = fields.String(required=True)


# --- the browser: /cache/status (the rest answer StatusResponse)
class CacheStatusResponse(Schema):
    canClear = fields.Boolean(required=True)


# --- frame scope: GET|POST /frame
class FrameScopeInfo(Schema):
    frameId = fields.String(required=True)
    frameUrl = fields.String(required=True)
    frameName = fields.String(required=True)
    ownerRef = fields.String(metadata={"description": "the ref of its <iframe>, once a snapshot named it"})


class FrameResponse(Schema):
    tabId = fields.String(required=True)
    scoped = fields.Boolean(required=True)
    target = fields.String(required=True, metadata={"description": "main, or the scoped frame's id"})
    current = fields.Raw(required=True, metadata={"description": "main, or the scoped frame"})
    frame = fields.Nested(FrameScopeInfo)


# --- several agents and people on one tab: /lock, /unlock, /tabs/{id}/handoff|resume, /macro
class LockResponse(Schema):
    locked = fields.Boolean(required=True)
    tabId = fields.String(required=True)
    owner = fields.String(required=True)
    expiresAt = fields.String(required=True)


class UnlockResponse(Schema):
    unlocked = fields.Boolean(required=True)
    tabId = fields.String(required=True)
    released = fields.Boolean(required=True, metadata={"description": "false: there was no lease to release"})


class Resolution(Schema):
    status = fields.String(required=True)
    resolvedData = fields.Raw(allow_none=True)
    resumedAt = fields.String(required=True)


class HandoffStateResponse(Schema):
    tabId = fields.String(required=True)
    status = fields.String(required=True, metadata={"enum": ["active", "paused_handoff"]})
    reason = fields.String(metadata={"description": "paused: why (the same as handoffReason)"})
    handoffReason = fields.String()
    pausedAt = fields.String()
    expiresAt = fields.String()
    lastResolution = fields.Nested(Resolution)


class ResumeResponse(Schema):
    tabId = fields.String(required=True)
    status = fields.String(required=True)
    resumed = fields.Boolean(required=True)
    resolution = fields.Nested(Resolution, required=True)


class MacroResponse(ActionsResponse):
    kind = fields.String(required=True, metadata={"enum": ["macro"]})


class Persona(Schema):
    seed = fields.Integer(required=True)
    hardwareConcurrency = fields.Integer(required=True)
    deviceMemory = fields.Integer(required=True)
    webglVendor = fields.String(required=True)
    webglRenderer = fields.String(required=True)


class FingerprintRotateResponse(Schema):
    rotated = fields.Boolean(required=True)
    status = fields.String(required=True, metadata={"enum": ["rotated"]})
    persona = fields.Nested(Persona, metadata={"description": "with seed (or no device field): every tab's"})
    tabs = fields.Integer(metadata={"description": "open tabs whose next documents get the persona"})
    tabId = fields.String(metadata={"description": "with a device field: the tab given the device"})
    fingerprint = fields.Nested(Fingerprint, metadata={"description": "the tab's device, applied at once"})


class SessionRecord(Schema):
    """An agent session as the API shows it; never its token."""

    id = fields.String(required=True)
    agentId = fields.String(required=True)
    label = fields.String(required=True)
    status = fields.String(required=True, metadata={"description": "active (revoked and lapsed sessions are gone)"})
    createdAt = fields.String(required=True)
    lastSeenAt = fields.String(required=True)
    expiresAt = fields.String(required=True)
    idleTimeoutSec = fields.Integer(required=True)


class SessionCreatedResponse(SessionRecord):
    sessionToken = fields.String(required=True,
                                 metadata={"description": "shown once: send 'Authorization: Session <token>'"})
    token = fields.String(required=True, metadata={"description": "the same token (our earlier name)"})


class SessionRevokedResponse(Schema):
    status = fields.String(required=True)
    id = fields.String(required=True)
