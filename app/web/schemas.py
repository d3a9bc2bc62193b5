"""The schemas both apps build on: the two kinds of request schema, Loose (the original's clients send
options we do not have yet) and Strict (our own routes, where a typo should not silently do nothing),
and the answers both the bridge and the server give."""
from __future__ import annotations

from marshmallow import EXCLUDE, Schema, fields


class Loose(Schema):
    """Unknown fields are ignored: PinchTab clients send options we do not have yet."""

    class Meta:
        unknown = EXCLUDE


class Strict(Schema):
    """Unknown fields are an error: a typo should not silently do nothing."""


class StatusResponse(Schema):
    status = fields.String(required=True)


class PageInfoResponse(Schema):
    tabId = fields.String(required=True)
    url = fields.String(required=True)
    title = fields.String(required=True)
