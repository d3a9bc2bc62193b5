"""The screencast WebSocket in server mode: ``GET /screencast?tabId=`` relayed to the instance that
has the tab (the default instance without a tabId), and the original's
``GET /instances/{id}/proxy/screencast?tabId=``, relayed to the instance it names. The dashboard's
login cookie opens both from our own page (``app.access.auth``: a same-origin ``Origin``).

As for the debug WebSocket (``routes/debug.py``, whose relay and cap this uses): before the upgrade
the server finds the instance and opens the same WebSocket there with the instance's own token, so
the instance's refusals (screencast off, an unknown tab, a bad query, its own cap) become the
caller's HTTP answers; then frames are pumped both ways and close codes pass through. The JSON
routes (``/screencast/tabs``, ``/record/*``) are forwarded like every other browser route.
"""
from __future__ import annotations

import logging
from typing import Any

import websocket
from flask import Blueprint, Flask, g, request
from flask_sock import Sock

from ...web.errors import APIError, NotFound
from ..state import server_state
from . import debug, proxy

log = logging.getLogger(__name__)

bp = Blueprint("screencast_relay", __name__)
sock = Sock()


@bp.before_request
def admit() -> None:
    """The instance's answer before the upgrade; its connection opens here."""
    tab_id = request.args.get("tabId", "")
    named = (request.view_args or {}).get("instance_id")
    if named is not None:
        server_state().mirror.ensure_loaded()
        if server_state().mirror.get(named) is None:
            raise NotFound(f"no instance {named}", code="instance_not_found")
        instance = named
    elif tab_id:
        instance = server_state().locator.locate(tab_id)
        if instance is None:
            raise NotFound(f"tab {tab_id} not found in any instance", code="tab_not_found")
    else:
        instance = proxy.default_instance()
    record, token = proxy.ready(instance)
    g.screencast_hold = debug.debug_state().relays.acquire()
    url = "ws" + record["url"].removeprefix("http") + "/screencast?" + request.query_string.decode("latin-1")
    try:
        g.screencast_upstream = websocket.create_connection(
            url, timeout=debug.CONNECT_TIMEOUT_S, header=[f"Authorization: Bearer {token}"],
            skip_utf8_validation=True, enable_multithread=True)
    except websocket.WebSocketBadStatusException as exc:
        raise debug.refusal(exc, record["id"]) from None
    except (websocket.WebSocketException, OSError) as exc:
        log.warning("instance %s: screencast WebSocket failed: %s", record["id"], type(exc).__name__)
        raise APIError(f"instance {record['id']} is unreachable", status=502, code="instance_unreachable",
                       retryable=True, details={"instanceId": record["id"]}) from None


@bp.teardown_request
def release(_exc: BaseException | None) -> None:
    upstream: websocket.WebSocket | None = g.pop("screencast_upstream", None)
    if upstream is not None and upstream.connected:   # the upgrade failed, or the relay left it open
        upstream.shutdown()
    hold = g.pop("screencast_hold", None)
    if hold is not None:
        debug.debug_state().relays.release(hold)


@sock.route("/screencast", bp=bp)
def screencast_socket(ws: Any) -> None:
    relay = debug.SocketRelay(ws, g.pop("screencast_upstream"), f"cast:{request.args.get('tabId', '')[:6]}")
    g.screencast_hold.close = relay.shutdown
    relay.run()


@sock.route("/instances/<instance_id>/proxy/screencast", bp=bp)
def instance_screencast_socket(ws: Any, instance_id: str) -> None:
    """The original's path: the named instance's screencast (the tab in ``tabId``)."""
    relay = debug.SocketRelay(ws, g.pop("screencast_upstream"), f"cast:{instance_id[-6:]}")
    g.screencast_hold.close = relay.shutdown
    relay.run()


def init_app(app: Flask) -> None:
    """After ``debug.init_app``: the relays' cap and shutdown hook are the debug ones."""
    app.register_blueprint(bp)
