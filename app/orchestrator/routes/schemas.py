"""What server mode's own routes take and answer: marshmallow schemas for requests and answers."""
from __future__ import annotations

from typing import Any

from marshmallow import INCLUDE, Schema, ValidationError, fields, pre_load, validate, validates_schema

from ...config.declare import Int
from ...web.schemas import Loose, Strict
from ..scheduler import STATES


# --- requests: instances
class SecurityPolicySchema(Strict):
    """What one instance may do beyond the server's own security settings."""

    allowedDomains = fields.List(
        fields.String(validate=[validate.Length(min=1, max=253),
                                validate.Regexp(r"^\S+$", error="a host without white space")]),
        load_default=list, validate=validate.Length(max=256),
        metadata={"description": "hosts added to security.allowedDomains for this instance only "
                                 "(example.com, *.example.com, or * for any)"})


class LaunchOptions(Loose):
    """How an instance's browser runs: headless or headed, on which port (None: the next free one),
    and what it may do beyond the server's security settings."""

    mode = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(("headless", "headed")))
    # A number or a numeric string: the original's clients send "9999" (its config keeps ports as strings).
    port = Int(load_default=None, allow_none=True, validate=validate.Range(min=1024, max=65535))
    securityPolicy = fields.Nested(SecurityPolicySchema, load_default=None, allow_none=True)

    @pre_load
    def no_extensions(self, data: Any, **_: Any) -> Any:
        """Refuse ``extensionPaths`` (the original's wording): an extension runs code in every page the
        agent opens, so which ones load is the operator's choice (``browser.extensionPaths``), not a
        caller's. Checked on the raw body, as the field is not one an instance takes."""
        if isinstance(data, dict) and "extensionPaths" in data:
            raise ValidationError("extensionPaths are not supported on instance start requests; configure "
                                  "browser.extensionPaths on the server instead", "extensionPaths")
        return data


class InstanceStartSchema(LaunchOptions):
    """``POST /instances/start``: which profile (none: a temporary one), headless or headed, which port,
    and the instance's own additions to the security policy."""

    profileId = fields.String(load_default=None, allow_none=True)


class AttachSchema(Schema):
    """``POST /instances/attach``: a name for the instance and how to reach the browser: its CDP URL
    (``attachType: "cdp"``, the default), or our extension in a person's own Chrome
    (``attachType: "extension"``, on ``extensionPort`` if given)."""

    name = fields.String(load_default="", validate=validate.Length(max=64),
                         metadata={"description": "none: one is made (cdp-1a2b3c4d)"})
    attachType = fields.String(load_default="cdp", validate=validate.OneOf(("cdp", "extension")))
    cdpUrl = fields.String(load_default=None, validate=validate.Length(min=1, max=2048))
    extensionPort = fields.Integer(load_default=None, allow_none=True, strict=True,
                                   validate=validate.Range(min=1024, max=65535),
                                   metadata={"description": "where the extension connects (default: 19222 "
                                                            "when free, else one from the instance range)"})

    @validates_schema
    def one_way_to_the_browser(self, data: dict[str, Any], **_: Any) -> None:
        if data["attachType"] == "cdp":
            if not data.get("cdpUrl"):
                raise ValidationError("required with attachType 'cdp'", "cdpUrl")
            if data.get("extensionPort") is not None:
                raise ValidationError("only with attachType 'extension'", "extensionPort")
        elif data.get("cdpUrl") is not None:
            raise ValidationError("only with attachType 'cdp'", "cdpUrl")


class AttachBridgeSchema(Schema):
    """``POST /instances/attach-bridge``: a running ``pinchtab bridge`` by URL and its token."""

    name = fields.String(load_default="", validate=validate.Length(max=64),
                         metadata={"description": "none: one is made (bridge-1a2b3c4d)"})
    baseUrl = fields.String(required=True, validate=validate.Length(min=1, max=2048))
    token = fields.String(load_default="", validate=validate.Length(max=4096))


class LogStreamQuerySchema(Schema):
    """``GET /instances/{id}/logs/stream``: how many recent lines to send first."""

    lines = fields.Integer(load_default=50, validate=validate.Range(min=0, max=2000))


class OpenTabSchema(Schema):
    """``POST /instances/{id}/tabs/open``: the URL for the new tab."""

    url = fields.String(load_default="about:blank", validate=validate.Length(min=1, max=8192))


class InstanceLogsQuerySchema(Schema):
    """``GET /instances/{id}/logs``: how many of the last lines."""

    lines = fields.Integer(load_default=None, allow_none=True, validate=validate.Range(min=1, max=100000))


class ProfileStartSchema(LaunchOptions):
    """``POST /profiles/{id}/start``: headless (or mode) and port for the profile's instance."""

    headless = fields.Boolean(load_default=None, allow_none=True)


# --- requests: profiles and activity
class ProfileCreateSchema(Strict):
    name = fields.String(required=True)
    description = fields.String(load_default="")
    useWhen = fields.String(load_default="")


class ProfileUpdateSchema(Strict):
    name = fields.String()
    description = fields.String()
    useWhen = fields.String()


class ProfileMetaSchema(Strict):
    name = fields.String(required=True)
    description = fields.String()
    useWhen = fields.String()


class ProfileImportSchema(Strict):
    name = fields.String(required=True)
    sourcePath = fields.String(required=True)
    description = fields.String(load_default="")
    useWhen = fields.String(load_default="")


class ActivityQuerySchema(Loose):
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))
    agentId = fields.String()
    tabId = fields.String()
    profile = fields.String()
    instanceId = fields.String()
    path = fields.String()
    since = fields.String()
    until = fields.String()


# --- answers
class InstanceRecord(Schema):
    """An instance as the API shows it; never its token."""

    id = fields.String(required=True)
    profileId = fields.String(required=True, allow_none=True)
    profileName = fields.String(required=True, allow_none=True)
    port = fields.Integer(required=True, allow_none=True)
    url = fields.String(required=True)
    mode = fields.String(required=True)
    headless = fields.Boolean(required=True)
    status = fields.String(required=True, metadata={"enum": ["starting", "running", "stopping", "stopped", "error"]})
    startTime = fields.String(required=True)
    error = fields.String()
    attached = fields.Boolean(required=True)
    attachType = fields.String(metadata={"enum": ["cdp", "extension", "bridge"]})
    securityPolicy = fields.Dict(metadata={"description": "the instance's own additions: {allowedDomains}"})
    ownerAgent = fields.String(metadata={"description": "the agent whose session started it: that session may "
                                                        "stop or restart it (the token may stop any instance)"})
    cdpUrl = fields.String(metadata={"description": "the attached browser's CDP URL, secrets masked"})
    extensionPort = fields.Integer(metadata={"description": "extension instances: the port the extension "
                                                            "connects to (127.0.0.1)"})
    extensionUrl = fields.String(metadata={"description": "extension instances: the extension's Pinchtab URL "
                                                          "(its pinchtab_url setting)"})
    extensionConnected = fields.Boolean(metadata={"description": "extension instances: whether the extension "
                                                                 "is connected now"})


class AttachResponse(InstanceRecord):
    """The attached instance; for an extension instance also the pairing token, in this answer only."""

    pairing = fields.String(metadata={"description": "extension instances: the token to set in the extension "
                                                     "(its pinchtab_pairing setting; `pinchtab extension pair` "
                                                     "prints the same)"})


class DefaultInstance(Schema):
    id = fields.String(metadata={"description": "callers with good credentials only"})
    status = fields.String(required=True)


class ServerHealthResponse(Schema):
    status = fields.String(required=True)
    mode = fields.String(required=True)
    version = fields.String(metadata={"description": "callers with good credentials only"})
    uptime = fields.Integer(metadata={"description": "milliseconds; callers with good credentials only"})
    authRequired = fields.Boolean(required=True)
    instances = fields.Integer(required=True)
    running = fields.Integer(metadata={"description": "instances running now"})
    defaultInstance = fields.Nested(DefaultInstance, required=True, allow_none=True)
    reason = fields.String()
    profiles = fields.Integer()
    agents = fields.Integer(metadata={"description": "agents seen in the last 24 h (activity log)"})
    restartRequired = fields.Boolean()
    restartReasons = fields.List(fields.String(), metadata={"description": "config keys saved, awaiting a restart; "
                                                                          "callers with good credentials only"})
    security = fields.Dict(metadata={"description": "authenticated callers only: level, bind, allowedDomains, "
                                                    "idpiEnabled, enabledSensitiveEndpoints, guardsDown"})


class InstanceTab(Schema):
    id = fields.String(required=True)
    instanceId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)


class ProfileStoppedResponse(InstanceRecord):
    name = fields.String(required=True)


class ProfileInstanceResponse(Schema):
    name = fields.String(required=True)
    running = fields.Boolean(required=True)
    status = fields.String(required=True)
    port = fields.Integer(required=True, allow_none=True)
    id = fields.String()


class ProfileRecord(Schema):
    """A saved profile: where it lives, its size, its use, and the account it is signed in as."""

    id = fields.String(required=True)
    name = fields.String(required=True)
    path = fields.String(required=True)
    description = fields.String()
    useWhen = fields.String()
    created = fields.String(allow_none=True)
    source = fields.String()
    sourcePath = fields.String()
    pathExists = fields.Boolean()
    diskUsage = fields.Integer(allow_none=True)
    sizeMB = fields.Float(allow_none=True)
    diskUsageStale = fields.Boolean()
    lastUsed = fields.String(allow_none=True)
    running = fields.Boolean()
    lockedBy = fields.Dict(allow_none=True)
    chromePid = fields.Integer(allow_none=True)
    accountEmail = fields.String(allow_none=True)
    accountName = fields.String(allow_none=True)
    hasAccount = fields.Boolean()
    chromeProfileName = fields.String(allow_none=True)
    identitySource = fields.String()
    consentedPrimaryAccount = fields.Boolean(allow_none=True)
    error = fields.String()
    temporary = fields.Boolean(metadata={"description": "with all=true: made for one instance"})


class ProfileChangedResponse(Schema):
    status = fields.String(required=True, metadata={"enum": ["created", "imported", "updated", "deleted", "reset"]})
    id = fields.String(required=True)
    name = fields.String(required=True)


class ProfileLogEntry(Schema):
    timestamp = fields.String(allow_none=True)
    method = fields.String(allow_none=True)
    endpoint = fields.String(allow_none=True)
    url = fields.String()
    tabId = fields.String()
    durationMs = fields.Float(allow_none=True)
    status = fields.Integer(allow_none=True)
    agentId = fields.String()
    action = fields.String()


class ProfileAnalyticsResponse(Schema):
    totalActions = fields.Integer(required=True)
    last24h = fields.Integer(required=True)
    commonHosts = fields.List(fields.Dict(), required=True)
    topEndpoints = fields.List(fields.Dict(), required=True)
    byDay = fields.Dict(keys=fields.String(), values=fields.Integer(),
                        metadata={"description": "calls per UTC day (YYYY-MM-DD), oldest first; days without any "
                                                 "left out"})


class ActivityResponse(Schema):
    events = fields.List(fields.Dict(), required=True, metadata={"description": "newest first"})
    count = fields.Integer(required=True)


# --- auth, sessions, config, server
class LoginSchema(Strict):
    """``POST /api/auth/login`` and ``/api/auth/elevate``: the server's token, typed by a person."""

    token = fields.String(required=True, validate=validate.Length(min=1, max=4096))


class LoginResponse(Schema):
    status = fields.String(required=True, metadata={"description": "ok"})
    csrfToken = fields.String(metadata={"description": "send it as X-CSRF-Token on changes (or rely on Origin)"})
    elevationWindowSec = fields.Integer(metadata={"description": "how long an elevation lasts"})
    elevatedUntil = fields.String(metadata={"description": "elevate: when this login's elevation ends"})


class AgentsQuerySchema(Loose):
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))


class AgentSummary(Schema):
    agentId = fields.String(required=True)
    requests = fields.Integer(required=True)
    errors = fields.Integer(required=True)
    firstSeen = fields.String(allow_none=True)
    lastSeen = fields.String(allow_none=True)
    lastPath = fields.String(allow_none=True)
    lastTabId = fields.String(allow_none=True)
    instances = fields.List(fields.String(), required=True)
    profiles = fields.List(fields.String(), required=True)
    recent = fields.List(fields.Dict(), metadata={"description": "GET /api/agents/{id}: its latest calls"})


class ConfigPatchSchema(Schema):
    """``PUT /api/config``: a partial config, nested as in the config file (``{"scheduler": {...}}``)."""

    class Meta:
        unknown = INCLUDE


class ConfigResponse(Schema):
    config = fields.Dict(required=True, metadata={"description": "the running config, secrets masked"})
    restartRequired = fields.Boolean(required=True)
    restartReasons = fields.List(fields.String(), required=True)
    applied = fields.List(fields.String())


class MetricsResponse(Schema):
    server = fields.Dict(required=True)
    instances = fields.List(fields.Dict(), required=True)


class StrategyStatusResponse(Schema):
    strategy = fields.String(required=True)
    allocationPolicy = fields.String(required=True)
    defaultInstance = fields.Dict(allow_none=True)
    instances = fields.Integer(required=True)
    running = fields.Integer(required=True)
    autoRestart = fields.Boolean(required=True)
    autoLaunch = fields.Boolean(required=True)


class BackgroundHealthResponse(Schema):
    status = fields.String(required=True)
    manager = fields.Dict(required=True)
    instances = fields.List(fields.Dict(), required=True)


class InstanceMetrics(Schema):
    id = fields.String(required=True)
    status = fields.String(required=True)
    pid = fields.Integer(required=True, allow_none=True)
    processes = fields.Integer(required=True, metadata={"description": "the bridge and its browser's processes"})
    rssBytes = fields.Integer(required=True)
    uptimeSec = fields.Float(required=True)
    restarts = fields.Integer(required=True)
    attached = fields.Boolean(required=True)
    instanceId = fields.String(required=True, metadata={"description": "the same as id (the original's name)"})
    profileName = fields.String(required=True)
    jsHeapUsedMB = fields.Float(required=True, allow_none=True,
                                metadata={"description": "the JS heap of its pages; null when it did not answer"})
    jsHeapTotalMB = fields.Float(required=True, allow_none=True)
    browserMemoryMB = fields.Float(required=True, allow_none=True,
                                   metadata={"description": "the browser's processes; null when it did not answer"})
    tabs = fields.Integer(required=True, allow_none=True,
                          metadata={"description": "open tabs; null when it did not answer"})


_TASK_STATES = STATES


class TaskSpecSchema(Strict):
    """One task: the browser call itself (``path``, ``method``, ``body``), or the original's form, an
    ``action`` on a tab: ``snapshot``, ``text`` and ``screenshot`` read the tab by those routes (with
    ``params`` as their query), any other action is ``POST /tabs/{tabId}/action`` with ``kind`` the
    action, ``ref`` or ``selector``, and ``params`` merged in. No ``tabId``: the agent's current tab."""

    path = fields.String(validate=validate.Regexp(r"^/[A-Za-z0-9/_.\-]{0,200}$",
                                                  error="a browser route path, like /action"))
    method = fields.String(load_default="POST", validate=validate.OneOf(("GET", "POST", "DELETE")))
    body = fields.Dict(load_default=None, allow_none=True)
    action = fields.String(validate=validate.Regexp(r"^[A-Za-z][A-Za-z0-9_-]{0,31}$",
                                                    error="an action name, like click or snapshot"))
    tabId = fields.String(validate=validate.Regexp(r"^[A-Za-z0-9_-]{1,128}$", error="a tab id"))
    selector = fields.String(validate=validate.Length(min=1, max=4096))
    ref = fields.String(validate=validate.Length(min=1, max=64))
    params = fields.Dict(keys=fields.String(validate=validate.Length(min=1, max=64)), load_default=None,
                         allow_none=True)
    priority = fields.Integer(metadata={"description": "accepted for the original's clients: an agent's tasks "
                                                       "run in the order they came (fair-fifo)"})
    deadline = fields.AwareDateTime(metadata={"description": "RFC 3339: a task not started by then is not run"})

    @validates_schema
    def call_or_action(self, data: dict[str, Any], **_: Any) -> None:
        if ("path" in data) == ("action" in data):
            raise ValidationError("send either path (the call) or action (the original's form)", "action")
        if "path" in data and any(data.get(k) is not None for k in ("tabId", "selector", "ref", "params")):
            raise ValidationError("only with action", "tabId")
        if "action" in data and data.get("body") is not None:
            raise ValidationError("only with path: an action takes params", "body")


class TaskSubmitSchema(TaskSpecSchema):
    """``POST /tasks``: a browser call to queue (as it would be sent directly) and whose it is."""

    agentId = fields.String(load_default=None, allow_none=True, validate=validate.Length(min=1, max=128),
                            metadata={"description": "default: the session's agent, else X-Agent-Id "
                                                     "(required with action, as in the original)"})

    @validates_schema
    def agent_with_action(self, data: dict[str, Any], **_: Any) -> None:
        if "action" in data and not data.get("agentId"):
            raise ValidationError("missing required field 'agentId'", "agentId")


class TaskBatchSchema(Strict):
    """``POST /tasks/batch``: several tasks of one agent (at most ``scheduler.maxBatchSize``)."""

    agentId = fields.String(required=True, validate=validate.Length(min=1, max=128),
                            error_messages={"required": "missing required field 'agentId'"})
    tasks = fields.List(fields.Nested(TaskSpecSchema), required=True,
                        validate=validate.Length(min=1, max=1000, error="batch must contain at least one task"),
                        error_messages={"required": "batch must contain at least one task"})


class TaskQuerySchema(Loose):
    agentId = fields.String()
    state = fields.String(metadata={"description": "one state or several, comma-separated: "
                                                   + ", ".join(_TASK_STATES)})
    status = fields.String(metadata={"description": "the same as state"})
    limit = fields.Integer(load_default=100, validate=validate.Range(min=1, max=1000))

    @validates_schema
    def known_states(self, data: dict[str, Any], **_: Any) -> None:
        for key in ("state", "status"):
            wanted = [v.strip() for v in data.get(key, "").split(",") if v.strip()]
            unknown = [v for v in wanted if v not in _TASK_STATES]
            if unknown:
                raise ValidationError(f"unknown state {unknown[0]!r}; one of {', '.join(_TASK_STATES)}", key)


class TaskRecord(Schema):
    taskId = fields.String(required=True)
    agentId = fields.String(required=True)
    method = fields.String(required=True)
    path = fields.String(required=True)
    action = fields.String(required=True, metadata={"description": "the original's action, or METHOD /path"})
    tabId = fields.String()
    status = fields.String(required=True, metadata={"enum": list(_TASK_STATES)})
    state = fields.String(required=True, metadata={"description": "the same as status (the original's name)"})
    createdAt = fields.String(required=True)
    deadline = fields.String()
    startedAt = fields.String()
    finishedAt = fields.String()
    completedAt = fields.String(metadata={"description": "the same as finishedAt"})
    latencyMs = fields.Integer()
    result = fields.Dict(metadata={"description": "{status, body}: the call's answer"})
    error = fields.String(metadata={"description": "why a failed task failed"})
    position = fields.Integer(metadata={"description": "on submit: place in the agent's queue (1: next)"})


class TaskListResponse(Schema):
    tasks = fields.List(fields.Nested(TaskRecord), required=True)
    count = fields.Integer(required=True)


class BatchItem(Schema):
    taskId = fields.String()
    state = fields.String(required=True)
    position = fields.Integer()
    error = fields.String(metadata={"description": "why a rejected task was (state rejected)"})
    code = fields.String()


class BatchResponse(Schema):
    tasks = fields.List(fields.Nested(BatchItem), required=True)
    submitted = fields.Integer(required=True, metadata={"description": "tasks queued"})
    rejected = fields.Integer(required=True, metadata={"description": "tasks refused (a full queue)"})


class SchedulerStats(Schema):
    queued = fields.Integer(required=True)
    running = fields.Integer(required=True)
    done = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    cancelled = fields.Integer(required=True)
    perAgent = fields.Dict(required=True)
    workers = fields.Integer(required=True)
    maxQueueSize = fields.Integer(required=True)
    maxPerAgent = fields.Integer(required=True)
    queue = fields.Dict(required=True, metadata={"description": "the original's: {totalQueued, totalInflight, "
                                                                "agents: {id: {queued, inflight}}}"})
    metrics = fields.Dict(required=True, metadata={"description": "counts since the start: tasksSubmitted, "
                                                                  "tasksCompleted, tasksFailed, tasksCancelled, "
                                                                  "tasksRejected, tasksExpired, and per agent"})
    config = fields.Dict(required=True, metadata={"description": "strategy, maxQueueSize, maxPerAgent, "
                                                                "workerCount, maxBatchSize, resultTTL"})
