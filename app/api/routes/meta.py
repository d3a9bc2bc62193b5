"""The API about itself: POST /shutdown (``GET /openapi.json`` and ``/help`` are ``app.web.openapi``'s)."""
from __future__ import annotations

import threading
from typing import Any

from flask import current_app

from ...web.openapi import Blueprint
from ...web.schemas import StatusResponse

bp = Blueprint("meta", __name__)
SHUTDOWN_DELAY_S = 0.1  # long enough for the answer to leave before the process goes


@bp.route("/shutdown", methods=["POST"])
@bp.response(200, StatusResponse)
def shutdown() -> dict[str, Any]:
    """Stop the browser and the server."""
    ext = current_app.extensions
    stop = ext.get("pinchtab.shutdown") or ext["pinchtab"].stop
    threading.Timer(SHUTDOWN_DELAY_S, stop).start()
    return {"status": "shutting down"}
