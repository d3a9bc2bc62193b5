"""The contract of POST /record/start, /record/stop and GET /record/status: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Answer, Number, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class RecordStartSchema(Loose, TabIdMixin):
    file = fields.String(load_default="", metadata={
        "description": "the file's name under the state dir's recordings folder (default: a timestamp)"})
    format = fields.String(load_default="webm", validate=validate.OneOf(("webm", "gif")))
    fps = fields.Integer(load_default=5, validate=validate.Range(min=1, max=30))
    quality = fields.Integer(load_default=80, validate=validate.Range(min=1, max=100))
    scale = fields.Float(load_default=1.0, validate=validate.Range(min=0.1, max=1))


class RecordStopSchema(Loose):
    discard = fields.Boolean(load_default=False, metadata={"description": "drop the recording, write no file"})


# --- what they answer ------------------------------------------------------------------------------------------------
class RecordStartResponse(Answer):
    status = fields.String(required=True)
    tabId = fields.String(required=True)
    format = fields.String(required=True)
    fps = fields.Integer(required=True)
    quality = fields.Integer(required=True)
    scale = Number(required=True)


class RecordStopResponse(Answer):
    """The recording stopped: its file is being made at ``path`` (``status: encoding``), or it was
    dropped (``status: discarded``)."""

    status = fields.String(required=True, metadata={"enum": ["encoding", "discarded"]})
    path = fields.String(metadata={"description": "where the file will be once GET /record/status says finished"})
    frames = fields.Integer(required=True)
    durationMs = fields.Integer(required=True)
    format = fields.String(required=True)
    hint = fields.String()


class RecordStatusResponse(Answer):
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
