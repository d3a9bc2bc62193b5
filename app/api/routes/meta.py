"""The API about itself: GET /openapi.json (and /help), POST /shutdown."""
from __future__ import annotations

import threading

from flask import Blueprint, current_app, jsonify

from ... import openapi
from . import doc

bp = Blueprint("meta", __name__)
SHUTDOWN_DELAY_S = 0.1  # long enough for the answer to leave before the process goes


@bp.get("/openapi.json")
@bp.get("/help")
@doc("This document: every route, from the schemas that validate them")
def openapi_json():  # type: ignore[no-untyped-def]
    cache = current_app.extensions.setdefault("pinchtab.openapi", {})
    if "doc" not in cache:
        cache["doc"] = openapi.build(current_app)
    return jsonify(cache["doc"])


@bp.post("/shutdown")
@doc("Stop the browser and the server")
def shutdown():  # type: ignore[no-untyped-def]
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    stop = app.extensions.get("pinchtab.shutdown") or app.extensions["pinchtab"].stop
    threading.Timer(SHUTDOWN_DELAY_S, stop).start()
    return jsonify({"status": "shutting down"})
