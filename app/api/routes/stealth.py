"""GET /stealth/status: the stealth level and what it patches."""
from __future__ import annotations

from flask import Response, jsonify

from human import stealth as st

from ...openapi import Blueprint
from ..responses import StealthStatusResponse
from .common import caller, state

bp = Blueprint("stealth", __name__)


@bp.route("/stealth/status", methods=["GET"])
@bp.response(200, StealthStatusResponse)
def status() -> Response:
    """The stealth level (instanceDefaults.stealthLevel), its launch flags and the patches it applies."""
    browser = state().ensure(caller())
    return jsonify(st.status(browser.stealth_level, browser.version))
