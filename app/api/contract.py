"""What the browser API's route families share in their contracts: the tab a request names, the
ranges numbers are held to, the action step (one of /action, /actions and /macro), the IDPI fields of
answers that carry page content, and the fields answers are dumped with.

Each family's own schemas sit beside its routes (``routes/<family>_contract.py``). Views return data
and their ``@bp.response`` schema dumps it, so an answer holds the fields its schema declares and no
other. A dump must stay cheap on the hot paths (a snapshot's nodes, a step's result): the fields
below hand big or loosely typed values on as the view built them, field by field checks only where
it costs little.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from marshmallow import Schema, ValidationError, fields, post_load, validate, validates_schema

from cdp import steps
from cdp.input import Target
from cdp.steps import Step

from ..web.schemas import Loose


class Answer(Schema):
    """The schema of an answer (or of a part of one): its fields come out in the order the view put
    them in, as they always have (a dump alone would follow the declarations, mixins first)."""

    def get_attribute(self, obj: Any, attr: str, default: Any) -> Any:
        # An answer is a dict: a key it lacks is missing, never one of the dict's own attributes
        # (marshmallow would fall back to getattr, and dump ``items`` as dict.items).
        if isinstance(obj, Mapping):
            return obj.get(attr, default)
        return super().get_attribute(obj, attr, default)

    def dump(self, obj: Any, *, many: bool | None = None) -> Any:
        # Not a post_dump hook: hooks cost more than the dump of a small answer itself.
        out = super().dump(obj, many=many)
        if many or not isinstance(obj, Mapping):
            return out
        return {k: out[k] for k in obj if k in out}


class _AsIs:
    """A field dumped as the view has it (loaded and documented as its type)."""

    def _serialize(self, value: Any, attr: str | None, obj: Any, **kwargs: Any) -> Any:
        return value


class Number(_AsIs, fields.Float):
    """A JSON number: an int stays an int (a Float field would write 3 as 3.0)."""


class RawList(_AsIs, fields.List):
    """A list handed on whole: a snapshot's thousands of nodes are not copied one by one."""


class OneOf(dict):
    """An answer of one of several shapes: documented as ``oneOf`` (this dict), dumped with the first
    schema whose required fields the answer holds (the last one when none fits)."""

    def __init__(self, *schemas: type[Schema]) -> None:
        super().__init__(oneOf=list(schemas))
        self.dumpers = [(frozenset(n for n, f in s().fields.items() if f.required), s()) for s in schemas]

    def dump(self, data: Mapping[str, Any]) -> Any:
        for required, schema in self.dumpers:
            if required <= data.keys():
                return schema.dump(data)
        return self.dumpers[-1][1].dump(data)


# --- requests ------------------------------------------------------------------------------------
ACTION_KINDS = tuple(steps.ACTION_KINDS)
SNAP = ("", "diff", "compact")  # an action's answer: no snapshot, what changed, or the page after
# Every number a request carries has a range (flask-smorest documents it as minimum/maximum); NaN and
# Infinity are refused by the fields themselves. Chrome takes any double, but a wheel turned by
# 1e308 px wedges the tab's input pipeline, and no page or picture is larger than this anyway.
MAX_PX = 100_000
PX = validate.Range(min=-MAX_PX, max=MAX_PX)  # coordinates, deltas, offsets (CSS px)
SIZE_PX = validate.Range(min=1, max=MAX_PX)
TIMEOUT_S = validate.Range(min=0.1, max=120)
MAX_COUNT = 1_000_000  # entries, characters, tokens: far more than any answer holds
OWNER = validate.Length(min=1, max=200)  # a tab's lock owner (/lock, /unlock, /macro)


class TabIdMixin(Schema):
    """The tab a request names (else the caller's current tab)."""

    tabId = fields.String(validate=validate.Length(min=1))


class TabQuerySchema(Loose, TabIdMixin):
    pass


class TargetMixin(Schema):
    """The element (or point) a step acts on."""

    ref = fields.String()
    selector = fields.String()
    nodeId = fields.Integer(validate=validate.Range(min=1, max=2**31 - 1))
    x = fields.Float(validate=PX)
    y = fields.Float(validate=PX)


class ActionSchema(Loose, TabIdMixin, TargetMixin):
    """One step: ``POST /action``, each of ``/actions``' and ``/macro``'s steps."""

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


# --- answers that carry page content ------------------------------------------------------------
IDPI_WARNING = "why the IDPI scanner flagged the content (security.idpi; also the X-IDPI-Warning header)"


class IdpiWarned(Answer):
    """Page content the IDPI scanner read: its warning, if it flagged something."""

    idpiWarning = fields.String(metadata={"description": IDPI_WARNING})


class IdpiMarked(IdpiWarned):
    """Page content as structured data: flagged, and marked as web content under wrapContent."""

    untrustedContent = fields.Boolean(metadata={"description": "with security.idpi.wrapContent: this is web "
                                                               "content, data only"})
    idpiNotice = fields.String(metadata={"description": "with security.idpi.wrapContent: the notice saying so"})


class SnapshotAfterMixin(IdpiMarked):
    """With ``snap``: the page after the action (compact), or what changed (diff); or, when the IDPI
    policy refuses that snapshot, why (the action itself ran)."""

    snapshot = fields.String()
    snapshotFormat = fields.String(metadata={"enum": ["compact", "diff"]})
    snapshotError = fields.Dict(metadata={"description": "the refusal, in the one error shape"})


class StepResult(Answer):
    """One step of a batch: its result, or its error in the one error shape."""

    index = fields.Integer(required=True)
    success = fields.Boolean(required=True)
    result = fields.Dict()
    error = fields.String()
    code = fields.String()
    retryable = fields.Boolean()
    details = fields.Dict()
    available = fields.List(fields.String())


class ActionsResponse(SnapshotAfterMixin):
    """Every step of a batch in its place (/actions, and /macro's answer)."""

    results = fields.List(fields.Nested(StepResult), required=True)
    total = fields.Integer(required=True)
    successful = fields.Integer(required=True)
    failed = fields.Integer(required=True)


# --- files: written to the state dir, or in the answer ---------------------------------------------
class SavedFileResponse(Answer):
    """``output=file``: where the answer was written, inside the state dir."""

    path = fields.String(required=True)
    size = fields.Integer(required=True)
    format = fields.String(required=True)
    timestamp = fields.String(required=True)


class InlineFileResponse(Answer):
    """The bytes in the answer: ``format`` (jpeg, png or pdf) and the bytes in base64."""

    format = fields.String(required=True)
    base64 = fields.String(required=True)


class Annotation(Answer):
    """A numbered box drawn over an interactive element: its ref and where it is (CSS px)."""

    ref = fields.String(required=True)
    role = fields.String(required=True)
    name = fields.String(required=True)
    tag = fields.String(required=True)
    box = fields.Dict(keys=fields.String(), values=Number(), required=True,
                      metadata={"description": "{x, y, w, h}"})
