"""The contract of POST /emulation/*: what they take and what they answer."""
from __future__ import annotations

import re

from marshmallow import ValidationError, fields, validate

from ...web.schemas import Loose
from ..contract import Answer, Number, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class ViewportSchema(Loose, TabIdMixin):
    width = fields.Integer(required=True, validate=validate.Range(min=1, max=10_000))
    height = fields.Integer(required=True, validate=validate.Range(min=1, max=10_000))
    deviceScaleFactor = fields.Float(load_default=1.0, validate=validate.Range(min=0, max=10),
                                     metadata={"description": "0: the screen's own"})
    mobile = fields.Boolean(load_default=False)


class GeolocationSchema(Loose, TabIdMixin):
    latitude = fields.Float(required=True, validate=validate.Range(min=-90, max=90))
    longitude = fields.Float(required=True, validate=validate.Range(min=-180, max=180))
    accuracy = fields.Float(load_default=1.0, validate=validate.Range(min=0, max=1_000_000),
                            metadata={"description": "metres"})


class OfflineSchema(Loose, TabIdMixin):
    offline = fields.Boolean(required=True, error_messages={"required": "offline required (true or false)"})
    latency = fields.Float(load_default=0, validate=validate.Range(min=0, max=60_000), metadata={"description": "ms"})
    downloadThroughput = fields.Float(load_default=-1, validate=validate.Range(min=-1, max=1e10),
                                      metadata={"description": "bytes/s; 0 or -1: not throttled"})
    uploadThroughput = fields.Float(load_default=-1, validate=validate.Range(min=-1, max=1e10),
                                    metadata={"description": "bytes/s; 0 or -1: not throttled"})


HEADER_NAME = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")  # an HTTP token (RFC 9110)


def _header_value(value: str) -> None:
    if any(c in value for c in "\r\n\0"):
        raise ValidationError("header values must not contain line breaks or NUL")


class HeadersSchema(Loose, TabIdMixin):
    headers = fields.Dict(keys=fields.String(validate=validate.Regexp(HEADER_NAME, error="not a valid header name")),
                          values=fields.String(validate=_header_value), required=True,
                          error_messages={"required": "headers required (an empty object clears them)"})


class CredentialsSchema(Loose, TabIdMixin):
    username = fields.String(required=True, error_messages={"required": "missing required field: username"},
                             metadata={"description": "empty: stop answering auth challenges"})
    password = fields.String(load_default="")


MEDIA_FEATURES = ("media", "prefers-color-scheme", "prefers-reduced-motion", "prefers-reduced-transparency",
                  "prefers-reduced-data", "prefers-contrast", "forced-colors", "color-gamut", "inverted-colors")


class MediaSchema(Loose, TabIdMixin):
    feature = fields.String(required=True, validate=validate.OneOf(MEDIA_FEATURES),
                            error_messages={"required": "feature required"},
                            metadata={"description": "a CSS media feature, or media for the media type "
                                                     "(screen, print)"})
    value = fields.String(load_default="", metadata={"description": "empty: stop emulating the feature"})


# --- what they answer ------------------------------------------------------------------------------------------------
class ViewportResponse(Answer):
    width = fields.Integer(required=True)
    height = fields.Integer(required=True)
    deviceScaleFactor = Number(required=True)
    mobile = fields.Boolean(required=True)
    status = fields.String(required=True)


class GeolocationResponse(Answer):
    latitude = Number(required=True)
    longitude = Number(required=True)
    accuracy = Number(required=True)
    status = fields.String(required=True, metadata={"enum": ["applied"]})
    permissionGranted = fields.Boolean(required=True, metadata={
        "description": "whether the page's origin may read the position without a prompt (Chrome grants it "
                       "only to secure origins: https, localhost)"})


class OfflineResponse(Answer):
    offline = fields.Boolean(required=True)
    status = fields.String(required=True, metadata={"enum": ["offline", "online"]})


class HeadersResponse(Answer):
    headers = fields.Dict(keys=fields.String(), values=fields.String(), required=True)
    status = fields.String(required=True)


class CredentialsResponse(Answer):
    username = fields.String(metadata={"description": "absent once cleared"})
    status = fields.String(required=True, metadata={"enum": ["applied", "cleared"]})


class MediaResponse(Answer):
    feature = fields.String(required=True)
    value = fields.String(required=True)
    status = fields.String(required=True)
