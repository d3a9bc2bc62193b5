"""The contract of GET /snapshot: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import MAX_COUNT, TIMEOUT_S, IdpiMarked, RawList, TabIdMixin

# --- what the routes take --------------------------------------------------------------------------------------------
SNAPSHOT_FORMATS = ("json", "compact", "text", "yaml")


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


# --- what they answer ------------------------------------------------------------------------------------------------
class SnapshotResponse(IdpiMarked):
    """``format=json``: the nodes (or, with ``diff=true``, what changed since the caller last looked)."""

    url = fields.String(required=True)
    title = fields.String(required=True)
    count = fields.Integer(required=True)
    nodes = RawList(fields.Dict(), metadata={"description": "ref, role, name, value, state, depth, ..."})
    total = fields.Integer(metadata={"description": "nodes in the whole snapshot, when cut or paged"})
    truncated = fields.Boolean()
    maxTokens = fields.Integer()
    next = fields.String(metadata={"description": "the cursor for the rest: after=<ref>"})
    diff = fields.Boolean()
    added = RawList(fields.Dict())
    changed = RawList(fields.Dict())
    removed = RawList(fields.Dict())
    counts = fields.Dict(keys=fields.String(), values=fields.Integer())
