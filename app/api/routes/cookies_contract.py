"""The contract of GET, POST and DELETE /cookies: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Answer, Number, TabIdMixin


# --- what the routes take --------------------------------------------------------------------------------------------
class CookiesQuerySchema(Loose, TabIdMixin):
    url = fields.String(load_default="")
    name = fields.String(load_default="")


class CookieSchema(Loose):
    name = fields.String(load_default="")
    value = fields.String(load_default="")
    domain = fields.String(load_default="")
    path = fields.String(load_default="")
    secure = fields.Boolean(load_default=False)
    httpOnly = fields.Boolean(load_default=False)
    sameSite = fields.String(load_default="")
    # seconds since the epoch (0: a session cookie); Chrome refuses dates past year 9999
    expires = fields.Float(load_default=0, validate=validate.Range(min=-1, max=253_402_300_799))


class CookiesSetSchema(Loose, TabIdMixin):
    url = fields.String(required=True, validate=validate.Length(min=1, error="url is required"),
                        error_messages={"required": "url is required"})
    cookies = fields.List(fields.Nested(CookieSchema), required=True,
                          validate=validate.Length(min=1, error="cookies array is empty"),
                          error_messages={"required": "cookies array is empty"})


# --- what they answer ------------------------------------------------------------------------------------------------
class CookieInfo(Answer):
    name = fields.String(required=True)
    value = fields.String(required=True)
    domain = fields.String(required=True)
    path = fields.String(required=True)
    secure = fields.Boolean(required=True)
    httpOnly = fields.Boolean(required=True)
    sameSite = fields.String(required=True)
    expires = Number(metadata={"description": "seconds since the epoch; absent for session cookies"})


class CookiesResponse(Answer):
    url = fields.String(required=True, metadata={"description": "the URL the cookies are for"})
    cookies = fields.List(fields.Nested(CookieInfo), required=True)
    count = fields.Integer(required=True)


class CookiesSetResponse(Answer):
    set = fields.Integer(required=True)
    failed = fields.Integer(required=True)
    total = fields.Integer(required=True)
