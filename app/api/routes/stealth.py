"""GET /stealth/status: the stealth level and what it patches; POST /fingerprint/rotate: another device."""
from __future__ import annotations

import secrets
from typing import Any

from flask import Response, jsonify

from human import stealth as st

from ...openapi import Blueprint
from ..responses import FingerprintRotateResponse, StealthStatusResponse
from ..schemas import FingerprintRotateSchema
from .common import caller, state

bp = Blueprint("stealth", __name__)


@bp.route("/stealth/status", methods=["GET"])
@bp.response(200, StealthStatusResponse)
def status() -> Response:
    """The stealth level (instanceDefaults.stealthLevel), the hash of the script tabs get, its launch
    flags, the patches it applies and what they give a page (capabilities)."""
    browser = state().ensure(caller())
    return jsonify(st.status(browser.stealth_level, browser.version, headless=browser.headless,
                             attached=browser.attached))


@bp.route("/fingerprint/rotate", methods=["POST"])
@bp.arguments(FingerprintRotateSchema)
@bp.response(200, FingerprintRotateResponse)
def rotate(req: dict[str, Any]) -> Response:
    """Pages look like another device from their next document on (open tabs after a reload or
    navigate, new tabs at once): hardware figures from the medium level, WebGL at full."""
    browser = state().ensure(caller())
    seed = req.get("seed") or secrets.randbelow(2**31 - 2) + 1
    tabs = browser.rotate_persona(seed)
    return jsonify({"rotated": True, "persona": browser.persona, "tabs": tabs})
