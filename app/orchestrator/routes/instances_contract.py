"""What the instance routes take and answer (``routes/instances.py``, with ``/profiles/{id}/start|stop|instance``;
and ``GET /instances/{id}/logs/stream``'s query, ``routes/events.py``)."""
from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, pre_load, validate, validates_schema

from ...config.declare import Int
from ...web.schemas import Loose, Strict


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
    provider = fields.String(load_default="", validate=validate.Length(max=64),
                             metadata={"description": "the browsers.providers entry to place it on (none: "
                                                      "instanceDefaults.provider, else the one with most room)"})
    waitSec = fields.Float(load_default=0.0, validate=validate.Range(min=0, max=30),
                           metadata={"description": "when every provider is full: how long to wait for room "
                                                    "before 503 no_capacity"})
    state = fields.String(load_default="", validate=validate.Length(max=64),
                          metadata={"description": "a saved state (POST /state/save) to load once the instance "
                                                   "runs: the start then answers when it is loaded (400 "
                                                   "bad_state_name, 404 state_not_found before any launch; a "
                                                   "load that fails stops the instance and answers its error)"})


class ProviderRecord(Schema):
    """A provider of browsers as the API shows it: never a secret."""

    name = fields.String(required=True)
    kind = fields.String(required=True, metadata={"enum": ["local", "cdp", "webdriver"]})
    capacity = fields.Integer(required=True)
    inUse = fields.Integer(required=True, metadata={"description": "its instances that hold a browser"})
    healthy = fields.Boolean(required=True, metadata={"description": "whether its status route answers"})
    endpoint = fields.String(metadata={"description": "a remote provider's URL, secrets masked"})
    detail = fields.String(metadata={"description": "what its status route said last"})
    engineFree = fields.Integer(metadata={"description": "free browsers, as the engine itself counts them"})


class ProfileStartSchema(LaunchOptions):
    """``POST /profiles/{id}/start``: headless (or mode) and port for the profile's instance."""

    headless = fields.Boolean(load_default=None, allow_none=True)


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


class OpenTabSchema(Schema):
    """``POST /instances/{id}/tabs/open``: the URL for the new tab."""

    url = fields.String(load_default="about:blank", validate=validate.Length(min=1, max=8192))


class InstanceLogsQuerySchema(Schema):
    """``GET /instances/{id}/logs``: how many of the last lines."""

    lines = fields.Integer(load_default=None, allow_none=True, validate=validate.Range(min=1, max=100000))


class LogStreamQuerySchema(Schema):
    """``GET /instances/{id}/logs/stream``: how many recent lines to send first."""

    lines = fields.Integer(load_default=50, validate=validate.Range(min=0, max=2000))


class InstanceRecord(Schema):
    """An instance as the API shows it; never its token."""

    id = fields.String(required=True)
    profileId = fields.String(required=True, allow_none=True)
    profileName = fields.String(required=True, allow_none=True)
    port = fields.Integer(required=True, allow_none=True)
    url = fields.String(required=True)
    mode = fields.String(required=True)
    headless = fields.Boolean(required=True)
    status = fields.String(required=True, metadata={"enum": ["starting", "running", "stopping", "stopped", "error",
                                                             "lost"]})
    startTime = fields.String(required=True)
    error = fields.String()
    attached = fields.Boolean(required=True)
    attachType = fields.String(metadata={"enum": ["cdp", "extension", "bridge"]})
    securityPolicy = fields.Dict(metadata={"description": "the instance's own additions: {allowedDomains}"})
    ownerAgent = fields.String(metadata={"description": "the agent whose session started it: that session may "
                                                        "stop or restart it (the token may stop any instance)"})
    cdpUrl = fields.String(metadata={"description": "the attached browser's CDP URL, secrets masked"})
    provider = fields.String(metadata={"description": "the browsers.providers entry its browser comes from"})
    endpoint = fields.String(metadata={"description": "a remote instance's engine, secrets masked"})
    extensionPort = fields.Integer(metadata={"description": "extension instances: the port the extension "
                                                            "connects to (127.0.0.1)"})
    extensionUrl = fields.String(metadata={"description": "extension instances: the extension's Pinchtab URL "
                                                          "(its pinchtab_url setting)"})
    extensionConnected = fields.Boolean(metadata={"description": "extension instances: whether the extension "
                                                                 "is connected now"})


class StateOnStart(Schema):
    """What the saved state named at the start restored (the instance's own ``POST /state/load``)."""

    name = fields.String(required=True, allow_none=True, metadata={"description": "the state loaded (a name "
                                                                                  "prefix finds the newest)"})
    cookiesRestored = fields.Integer(required=True)
    storageItemsRestored = fields.Integer(required=True, metadata={"description": "storage items written, every "
                                                                                  "origin's (session storage is "
                                                                                  "the load's tab's: it stays there)"})
    origins = fields.List(fields.String(), required=True)
    skippedOrigins = fields.List(fields.String(), required=True,
                                 metadata={"description": "origins no tab could reach: their storage is not in"})


class InstanceStartedResponse(InstanceRecord):
    """The instance launched; with ``state`` in the request, running and what its load restored."""

    state = fields.Nested(StateOnStart, metadata={"description": "start with state only"})


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


class ProfileStoppedResponse(InstanceRecord):
    name = fields.String(required=True)


class ProfileInstanceResponse(Schema):
    name = fields.String(required=True)
    running = fields.Boolean(required=True)
    status = fields.String(required=True)
    port = fields.Integer(required=True, allow_none=True)
    id = fields.String()
