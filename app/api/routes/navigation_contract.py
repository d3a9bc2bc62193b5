"""The contract of /navigate, /back, /forward, /reload: what they take and what they answer."""
from __future__ import annotations

from marshmallow import ValidationError, fields, validate, validates_schema

from ...web.errors import BadRequest
from ...web.schemas import Loose
from ..contract import MAX_COUNT, TabIdMixin, TabQuerySchema

# --- what the routes take --------------------------------------------------------------------------------------------
WAIT_FOR = ("none", "dom", "load", "networkidle", "selector")


def _wait_for(value: str) -> None:
    # Its own code, as the original's: not a ValidationError (which would answer bad_request).
    if value not in WAIT_FOR:
        raise BadRequest(f"invalid waitFor {value!r}: one of {', '.join(WAIT_FOR)}", code="bad_wait_for",
                         details={"field": "waitFor"})


class NavigateSchema(Loose, TabIdMixin):
    url = fields.String(required=True, validate=validate.Length(min=1),
                        error_messages={"required": "url required"})
    newTab = fields.Boolean(load_default=False)
    # Taken as 120 when above it (the original clamps rather than refuses); 0: the config's default.
    timeout = fields.Float(validate=validate.Range(min=0, max=MAX_COUNT),
                           metadata={"description": "seconds (default timeouts.navigateSec); above 120 means 120"})
    waitFor = fields.String(load_default="dom", validate=_wait_for, metadata={"enum": list(WAIT_FOR)})
    waitSelector = fields.String(load_default="")
    waitTitle = fields.Float(load_default=0, validate=validate.Range(min=0, max=MAX_COUNT),
                             metadata={"description": "seconds (at most 30) to wait for a real title after load"})
    blockImages = fields.Boolean(metadata={"description": "refuse images in this tab (default: instanceDefaults)"})
    blockMedia = fields.Boolean(metadata={"description": "refuse audio and video (default: instanceDefaults)"})
    blockAds = fields.Boolean(metadata={"description": "refuse known ad and tracker hosts (default: instanceDefaults)"})
    dismissBanners = fields.Boolean(load_default=False,
                                    metadata={"description": "best effort: accept a cookie/consent banner after load"})
    browser = fields.String(metadata={"description": "engine: chrome, cloak or ghost-chrome (browsers.available)"})

    @validates_schema
    def _selector_needs_wait_for(self, data, **kwargs):  # type: ignore[no-untyped-def]
        if data.get("waitFor") == "selector" and not data.get("waitSelector"):
            raise ValidationError("waitFor 'selector' needs waitSelector", "waitSelector")


class HistoryQuerySchema(TabQuerySchema):
    """``POST /back|/forward|/reload``: the tab, and whether to dismiss a consent banner after."""

    dismissBanners = fields.Boolean(load_default=False, metadata={
        "description": "best effort: click a cookie/consent banner's accept button once the page is there"})
