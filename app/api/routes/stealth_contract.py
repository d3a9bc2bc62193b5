"""The contract of GET /stealth/status and POST /fingerprint/rotate: what they take and what they answer."""
from __future__ import annotations

from marshmallow import fields, validate

from ...web.schemas import Loose
from ..contract import Answer


# --- what the routes take --------------------------------------------------------------------------------------------
class FingerprintRotateSchema(Loose):
    """``POST /fingerprint/rotate``: ours, ``seed`` (the hardware persona every tab's next document
    gets), or the original's device for one tab (``tabId``, else the current tab): ``os``,
    ``browser``, ``screen``, ``language``, ``timezone``, applied at once and kept across navigations."""

    seed = fields.Integer(validate=validate.Range(min=1, max=2**31 - 1),
                          metadata={"description": "the persona to take (the same seed, the same device); "
                                                   "random when absent"})
    tabId = fields.String(validate=validate.Length(min=1), metadata={"description": "the tab to give the device"})
    os = fields.String(validate=validate.OneOf(("windows", "mac", "linux", "random")),
                       metadata={"description": "the system the tab's user agent and navigator.platform name"})
    browser = fields.String(validate=validate.OneOf(("chrome", "edge")),
                            metadata={"description": "chrome (default), or edge on windows"})
    screen = fields.String(validate=validate.Regexp(r"^(?:random|(?:[3-9]\d{2}|[1-7]\d{3})x(?:2[4-9]\d|[3-9]\d{2}|"
                                                    r"[1-4]\d{3}))$", error="WIDTHxHEIGHT (300-7999 by 240-4999) "
                                                                             "or random"),
                           metadata={"description": "the viewport and screen, e.g. 1366x768 (default 1920x1080)"})
    language = fields.String(validate=validate.Regexp(r"^[A-Za-z]{2,3}(?:[-_][A-Za-z0-9]{2,8}){0,3}$",
                                                      error="a language tag, like en-US"))
    timezone = fields.Integer(metadata={"description": "minutes east of UTC: one of "
                                                       "-480, -420, -360, -300, -240, 0, 60, 120, 330, 480, 540"})
    webgl = fields.Boolean(metadata={"description": "accepted for the original's clients (WebGL, canvas, fonts "
                                                    "and audio follow the stealth level)"})
    canvas = fields.Boolean()
    fonts = fields.Boolean()
    audio = fields.Boolean()


# --- what they answer ------------------------------------------------------------------------------------------------
class Fingerprint(Answer):
    """A tab's device (the original's fingerprint)."""

    os = fields.String(required=True)
    browser = fields.String(required=True)
    userAgent = fields.String(required=True)
    platform = fields.String(required=True, metadata={"description": "navigator.platform"})
    vendor = fields.String(required=True)
    screenWidth = fields.Integer(required=True)
    screenHeight = fields.Integer(required=True)
    language = fields.String(required=True)
    uaPlatform = fields.String(required=True, metadata={"description": "navigator.userAgentData.platform"})
    uaPlatformVersion = fields.String(required=True)
    timezoneOffset = fields.Integer()
    timezone = fields.String()


class StealthStatusResponse(Answer):
    level = fields.String(required=True)
    levels = fields.List(fields.String(), required=True)
    headless = fields.Boolean(required=True)
    launchMode = fields.String(required=True, metadata={"enum": ["allocator", "attached"]})
    scriptHash = fields.String(required=True, metadata={"description": "sha256:<hex> of the injected script"})
    webdriverMode = fields.String(required=True)
    patchIds = fields.List(fields.String(), required=True)
    flags = fields.Dict(keys=fields.String(), values=fields.Boolean(), required=True,
                        metadata={"description": "which launch-time measures are on"})
    capabilities = fields.Dict(keys=fields.String(), values=fields.Boolean(), required=True)
    tradeoffs = fields.List(fields.String(), required=True)
    tabOverrides = fields.Dict(keys=fields.String(), values=fields.Boolean(), required=True)
    launchFlags = fields.List(fields.String(), required=True, metadata={"description": "the launch flags it adds"})
    patches = fields.List(fields.String(), required=True)
    commands = fields.List(fields.String(), required=True, metadata={"description": "CDP methods it runs per tab"})
    userAgent = fields.String(required=True)
    window = fields.String(required=True, metadata={"description": "WIDTHxHEIGHT, empty when off"})
    fingerprint = fields.Nested(Fingerprint, metadata={"description": "with tabId: the device that tab was given"})


class Persona(Answer):
    seed = fields.Integer(required=True)
    hardwareConcurrency = fields.Integer(required=True)
    deviceMemory = fields.Integer(required=True)
    webglVendor = fields.String(required=True)
    webglRenderer = fields.String(required=True)


class FingerprintRotateResponse(Answer):
    rotated = fields.Boolean(required=True)
    status = fields.String(required=True, metadata={"enum": ["rotated"]})
    persona = fields.Nested(Persona, metadata={"description": "with seed (or no device field): every tab's"})
    tabs = fields.Integer(metadata={"description": "open tabs whose next documents get the persona"})
    tabId = fields.String(metadata={"description": "with a device field: the tab given the device"})
    fingerprint = fields.Nested(Fingerprint, metadata={"description": "the tab's device, applied at once"})
