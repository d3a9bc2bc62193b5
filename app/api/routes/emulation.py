"""POST /emulation/viewport, /geolocation, /offline, /headers, /credentials and /media (and each
/tabs/{tabId}/... twin): what one tab pretends to be, until changed (``cdp.emulation``).

The password of /emulation/credentials goes to the browser only: it is never answered back or logged.
"""
from __future__ import annotations

from typing import Any

from cdp import emulation

from ...web.openapi import Blueprint, tab_route
from .common import on_tab, tab
from .emulation_contract import (
    CredentialsResponse,
    CredentialsSchema,
    GeolocationResponse,
    GeolocationSchema,
    HeadersResponse,
    HeadersSchema,
    MediaResponse,
    MediaSchema,
    OfflineResponse,
    OfflineSchema,
    ViewportResponse,
    ViewportSchema,
)

bp = Blueprint("emulation", __name__)


@tab_route(bp, "/emulation/viewport", methods=["POST"])
@bp.arguments(ViewportSchema)
@bp.response(200, ViewportResponse)
def viewport(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Set the tab's viewport size, device pixel ratio and mobile mode."""
    on_tab(tab(req.get("tabId")), lambda t: emulation.set_viewport(t, req["width"], req["height"],
                                                                    req["deviceScaleFactor"], req["mobile"]))
    return {"width": req["width"], "height": req["height"], "deviceScaleFactor": req["deviceScaleFactor"],
            "mobile": req["mobile"], "status": "applied"}


@tab_route(bp, "/emulation/geolocation", methods=["POST"])
@bp.arguments(GeolocationSchema)
@bp.response(200, GeolocationResponse)
def geolocation(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Set where the tab's navigator.geolocation says it is, and let the page's origin ask without a prompt
    (permissionGranted: false where Chrome grants nothing, an origin that is not secure; the position is set)."""
    granted = on_tab(tab(req.get("tabId")), lambda t: emulation.set_geolocation(t, req["latitude"], req["longitude"],
                                                                                 req["accuracy"]))
    return {"latitude": req["latitude"], "longitude": req["longitude"], "accuracy": req["accuracy"],
            "status": "applied", "permissionGranted": granted}


@tab_route(bp, "/emulation/offline", methods=["POST"])
@bp.arguments(OfflineSchema)
@bp.response(200, OfflineResponse)
def offline(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Take the tab offline, or back online (optionally with latency and throughput limits)."""
    on_tab(tab(req.get("tabId")), lambda t: emulation.set_network_conditions(
        t, req["offline"], req["latency"], req["downloadThroughput"], req["uploadThroughput"]))
    return {"offline": req["offline"], "status": "offline" if req["offline"] else "online"}


@tab_route(bp, "/emulation/headers", methods=["POST"])
@bp.arguments(HeadersSchema)
@bp.response(200, HeadersResponse)
def headers(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Send these headers with every request of the tab (an empty object clears them)."""
    on_tab(tab(req.get("tabId")), lambda t: emulation.set_extra_headers(t, req["headers"]))
    return {"headers": req["headers"], "status": "applied"}


@tab_route(bp, "/emulation/credentials", methods=["POST"])
@bp.arguments(CredentialsSchema)
@bp.response(200, CredentialsResponse)
def credentials(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Answer the tab's HTTP auth challenges with these credentials (an empty username clears them)."""
    target = tab(req.get("tabId"))
    if not req["username"]:
        on_tab(target, emulation.clear_credentials)
        return {"status": "cleared"}
    on_tab(target, lambda t: emulation.set_credentials(t, req["username"], req["password"]))
    return {"username": req["username"], "status": "applied"}


@tab_route(bp, "/emulation/media", methods=["POST"])
@bp.arguments(MediaSchema)
@bp.response(200, MediaResponse)
def media(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Emulate a CSS media feature (prefers-color-scheme, ...) or the media type (media: print)."""
    on_tab(tab(req.get("tabId")), lambda t: emulation.set_media_feature(t, req["feature"], req["value"]))
    return {"feature": req["feature"], "value": req["value"], "status": "applied"}
