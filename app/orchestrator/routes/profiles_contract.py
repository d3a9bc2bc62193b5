"""What the profile and activity routes take and answer (``routes/profiles.py``)."""
from __future__ import annotations

from marshmallow import Schema, fields, validate

from ...web.schemas import Loose, Strict


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
    commonHosts = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True,
                              metadata={"description": "calls per host, the most called first"})
    topEndpoints = fields.Dict(keys=fields.String(), values=fields.Integer(), required=True,
                               metadata={"description": "calls per route, the most called first"})
    byDay = fields.Dict(keys=fields.String(), values=fields.Integer(),
                        metadata={"description": "calls per UTC day (YYYY-MM-DD), oldest first; days without any "
                                                 "left out"})


class ActivityResponse(Schema):
    events = fields.List(fields.Dict(), required=True, metadata={"description": "newest first"})
    count = fields.Integer(required=True)
