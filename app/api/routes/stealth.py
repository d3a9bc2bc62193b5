"""GET /stealth/status: the stealth level and what it patches."""
from __future__ import annotations

from flask import Blueprint, jsonify

from human import stealth as st

from ..browser_state import bridge
from . import doc

bp = Blueprint("stealth", __name__)


@bp.get("/stealth/status")
@doc("The stealth level (instanceDefaults.stealthLevel), its launch flags and the patches it applies")
def status():  # type: ignore[no-untyped-def]
    br = bridge()
    browser = br.ensure()
    return jsonify(st.status(browser.stealth_level, browser.version))
