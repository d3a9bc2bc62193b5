"""GET /stealth/status: the stealth level and what it patches (and, with tabId, the device that tab
was given); POST /fingerprint/rotate: another device, for every tab's next document (ours, ``seed``)
or at once for one tab (the original's ``os``, ``browser``, ``screen``, ``language``, ``timezone``)."""
from __future__ import annotations

import secrets
from typing import Any

from cdp import emulation
from human import stealth as st

from ...web.errors import BadRequest
from ...web.openapi import Blueprint
from ..contract import TabQuerySchema
from .common import caller, on_tab, state, tab
from .stealth_contract import FingerprintRotateResponse, FingerprintRotateSchema, StealthStatusResponse

bp = Blueprint("stealth", __name__)
# The fields that ask for one tab's device rather than every tab's persona.
DEVICE_FIELDS = ("tabId", "os", "browser", "screen", "language", "timezone")


@bp.route("/stealth/status", methods=["GET"])
@bp.arguments(TabQuerySchema, location="query")
@bp.response(200, StealthStatusResponse)
def status(req: dict[str, Any]) -> dict[str, Any]:
    """The stealth level (instanceDefaults.stealthLevel), the hash of the script tabs get, its launch
    flags, the patches it applies and what they give a page (capabilities); with tabId, whether that
    tab was given a device (``tabOverrides.fingerprintRotateActive``, ``fingerprint``)."""
    browser = state().ensure(caller())
    out = st.status(browser.stealth_level, browser.version, headless=browser.headless, attached=browser.attached,
                    user_agent=browser.user_agent)
    if req.get("tabId"):
        device = tab(req["tabId"]).state.get(emulation.DEVICE)
        out["tabOverrides"] = {"fingerprintRotateActive": device is not None}
        if device is not None:
            out["fingerprint"] = device
    return out


@bp.route("/fingerprint/rotate", methods=["POST"])
@bp.arguments(FingerprintRotateSchema)
@bp.response(200, FingerprintRotateResponse)
def rotate(req: dict[str, Any]) -> dict[str, Any]:
    """Another device. With ``os``, ``browser``, ``screen``, ``language`` or ``timezone`` (and
    ``tabId``, else the current tab): that tab at once, kept across its navigations: user agent,
    navigator.platform and Client Hints, language and locale, viewport and screen, time zone.
    Otherwise (``seed``): every page from its next document on (open tabs after a reload or navigate,
    new tabs at once): hardware figures from the medium level, WebGL at full."""
    browser = state().ensure(caller())
    if any(key in req for key in DEVICE_FIELDS):
        os_name, family = req.get("os", ""), req.get("browser", "chrome")
        system = os_name if os_name in st.DEVICE_OSES else "windows" if os_name == "random" else "linux"
        if family not in st.DEVICE_BROWSERS[system]:
            raise BadRequest(f"browser {family!r} goes with os windows only (this browser is Chromium)",
                             details={"field": "browser"})
        if req.get("timezone") is not None and req["timezone"] not in st.TIMEZONES:
            raise BadRequest(f"timezone: {req['timezone']} is not an offset this server knows; one of "
                             f"{', '.join(str(k) for k in sorted(st.TIMEZONES))} (minutes east of UTC)",
                             details={"field": "timezone"})
        target = tab(req.get("tabId"))
        version = browser.version
        fp = st.device(version, os=os_name, browser=family, screen=req.get("screen", ""),
                       language=req.get("language", ""), timezone=req.get("timezone"))
        on_tab(target, lambda t: emulation.set_device(t, fp, st.device_metadata(fp, version)))
        return {"rotated": True, "status": "rotated", "tabId": target.id, "fingerprint": fp}
    seed = req.get("seed") or secrets.randbelow(2**31 - 2) + 1
    tabs = browser.rotate_persona(seed)
    return {"rotated": True, "status": "rotated", "persona": browser.persona, "tabs": tabs}
