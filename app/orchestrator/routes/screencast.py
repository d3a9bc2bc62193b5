"""The screencast WebSocket in server mode: ``GET /screencast?tabId=`` relayed to the instance that
has the tab (the default instance without a tabId), and the original's
``GET /instances/{id}/proxy/screencast?tabId=``, relayed to the instance it names. The dashboard's
login cookie opens both from our own page (``app.access.auth``: a same-origin ``Origin``).

As for the debug WebSocket (``routes/debug.py``), the relay is ``app.sockets.upstream`` under the
server's one cap (``app.sockets.limiter``): before the upgrade the server finds the instance and
opens the same WebSocket there with the instance's own token, so the instance's refusals
(screencast off, an unknown tab, a bad query, its own cap) become the caller's HTTP answers; then
frames are pumped both ways and close codes pass through. The JSON routes (``/screencast/tabs``,
``/record/*``) are forwarded like every other browser route.
"""
from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, Flask, request
from flask_sock import Sock
from marshmallow import fields

from ...sockets import limiter
from ...sockets import upstream as ws_relay
from ...web.errors import NotFound
from ...web.schemas import Loose
from ..state import server_state
from . import proxy

log = logging.getLogger(__name__)

bp = Blueprint("screencast_relay", __name__)
sock = Sock()


class SocketQuery(Loose):
    """What the server reads of the query (the instance checks the rest: the whole query goes on)."""

    tabId = fields.String(load_default="")


@bp.before_request
def admit() -> None:
    """The instance's answer before the upgrade; its connection opens here."""
    tab_id = SocketQuery().load(request.args.to_dict())["tabId"]
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
    url = "ws" + record["url"].removeprefix("http") + "/screencast?" + request.query_string.decode("latin-1")
    ws_relay.admit(limiter.current(), url, token, instance=record["id"])


bp.teardown_request(ws_relay.teardown)


@sock.route("/screencast", bp=bp)
def screencast_socket(ws: Any) -> None:
    ws_relay.serve(ws, f"cast:{request.args.get('tabId', '')[:6]}")


@sock.route("/instances/<instance_id>/proxy/screencast", bp=bp)
def instance_screencast_socket(ws: Any, instance_id: str) -> None:
    """The original's path: the named instance's screencast (the tab in ``tabId``)."""
    ws_relay.serve(ws, f"cast:{instance_id[-6:]}")


def init_app(app: Flask) -> None:
    """After ``debug.init_app``: the cap (``app.sockets.limiter``) and its shutdown hook are set there."""
    app.register_blueprint(bp)
