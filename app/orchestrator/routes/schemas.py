"""What server mode's own routes take and answer: marshmallow schemas for requests and answers."""
from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from ...api.schemas import Loose, Strict


# --- requests: instances
class LaunchOptions(Loose):
    """How an instance's browser runs: headless or headed, and on which port (None: the next free one)."""

    mode = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(("headless", "headed")))
    port = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(min=1024, max=65535))


class InstanceStartSchema(LaunchOptions):
    """``POST /instances/start``: which profile (none: a temporary one), headless or headed, which port."""

    profileId = fields.String(load_default=None, allow_none=True)


class AttachSchema(Schema):
    """``POST /instances/attach``: a name for the instance and how to reach the browser: its CDP URL
    (``attachType: "cdp"``, the default), or our extension in a person's own Chrome
    (``attachType: "extension"``, on ``extensionPort`` if given)."""

    name = fields.String(required=True, validate=validate.Length(min=1, max=64))
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
    attachType = fields.String(metadata={"enum": ["cdp", "extension"]})
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
    id = fields.String(required=True)
    status = fields.String(required=True)


class ServerHealthResponse(Schema):
    status = fields.String(required=True)
    mode = fields.String(required=True)
    version = fields.String(required=True)
    uptime = fields.Integer(required=True, metadata={"description": "milliseconds"})
    authRequired = fields.Boolean(required=True)
    instances = fields.Integer(required=True)
    defaultInstance = fields.Nested(DefaultInstance, required=True, allow_none=True)
    reason = fields.String()


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


class ActivityResponse(Schema):
    events = fields.List(fields.Dict(), required=True, metadata={"description": "newest first"})
    count = fields.Integer(required=True)
