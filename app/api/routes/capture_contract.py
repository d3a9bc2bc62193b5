"""The contract of GET /capture and /annotate: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Annotation, Answer, IdpiMarked, Number, RawList, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
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


# --- what they answer ------------------------------------------------------------------------------------------------
class CaptureImage(Answer):
    format = fields.String(required=True)
    bytes = fields.Integer(required=True)
    path = fields.String(metadata={"description": "output=file: where the image was written"})
    base64 = fields.String(metadata={"description": "output=inline: the image"})
    coordinateSpace = fields.String(required=True, metadata={"enum": ["viewport", "document", "clip"]})
    clip = fields.Dict(keys=fields.String(), values=Number())
    devicePixelRatio = Number(required=True)
    viewport = fields.Dict(keys=fields.String(), values=Number(), required=True,
                           metadata={"description": "{w, h, scrollX, scrollY}"})


class CaptureSnapshot(Answer):
    filter = fields.String(required=True)
    nodeCount = fields.Integer(required=True)
    nodes = RawList(fields.Dict(), required=True,
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


class AnnotateResponse(Answer):
    """The overlay drawn (``annotated`` boxes), or ``cleared`` with clear=true."""

    annotated = fields.Integer()
    annotations = fields.List(fields.Nested(Annotation))
    cleared = fields.Boolean()
