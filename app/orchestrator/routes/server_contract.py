"""What the server's routes about itself take and answer (``routes/server.py``): config, metrics,
background health, the strategy's status and the agents seen."""
from __future__ import annotations

from marshmallow import INCLUDE, Schema, fields, validate

from ...web.schemas import Loose


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
