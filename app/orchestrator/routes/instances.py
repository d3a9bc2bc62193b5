"""Server mode's own API: GET /health and /instances (list, start, stop, restart, logs, tabs, attach)."""
from __future__ import annotations

import time
from typing import Any

from flask import Blueprint, Response, jsonify
from marshmallow import EXCLUDE, Schema, fields, validate

from ...errors import APIError, BadRequest
from ...openapi import VERSION
from ..errors import ManagerUnavailable
from ...api.parser import from_body, query_args, schema_of
from ..state import server_state
from ...api.routes import doc

bp = Blueprint("instances", __name__)


class InstanceStartSchema(Schema):
    """``POST /instances/start``: which profile (none: a temporary one), headless or headed, which port."""

    class Meta:
        unknown = EXCLUDE

    profileId = fields.String(load_default=None, allow_none=True)
    mode = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(("headless", "headed")))
    port = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(min=1024, max=65535))


class AttachSchema(Schema):
    """``POST /instances/attach``: a name for the instance and the browser's CDP URL."""

    name = fields.String(required=True, validate=validate.Length(min=1, max=64))
    cdpUrl = fields.String(required=True, validate=validate.Length(min=1, max=2048))


class OpenTabSchema(Schema):
    """``POST /instances/{id}/tabs/open``: the URL for the new tab."""

    url = fields.String(load_default="about:blank", validate=validate.Length(min=1, max=8192))


class LogsQuerySchema(Schema):
    """``GET /instances/{id}/logs``: how many of the last lines."""

    lines = fields.Integer(load_default=None, allow_none=True, validate=validate.Range(min=1, max=100000))


@bp.get("/health")
@doc("The server and its default instance (no token needed)")
def health():  # type: ignore[no-untyped-def]
    st = server_state()
    body: dict[str, Any] = {"status": "ok", "mode": "dashboard", "version": VERSION,
                            "uptime": int((time.monotonic() - st.started) * 1000),
                            "authRequired": bool(st.config.server.token)}
    try:
        st.mirror.refresh()  # live: a dead manager must show here, not in the next request
    except ManagerUnavailable as exc:
        body.update(status="error", reason=exc.message, instances=0, defaultInstance=None)
        return jsonify(body), 503
    records = st.mirror.records()
    default = st.mirror.get(st.mirror.default_id or "")
    body["instances"] = len(records)
    body["defaultInstance"] = {"id": default[0]["id"], "status": default[0]["status"]} if default else None
    return jsonify(body)


@bp.get("/instances")
@doc("Every instance (a bare array of instance records)")
def list_instances():  # type: ignore[no-untyped-def]
    st = server_state()
    st.mirror.refresh()
    return jsonify(st.mirror.records())


@bp.get("/instances/<instance_id>")
@doc("One instance")
def get_instance(instance_id: str):  # type: ignore[no-untyped-def]
    return jsonify(server_state().client.get(instance_id))


@bp.post("/instances/start")
@bp.post("/instances/launch")
@doc("Launch an instance (201 with its record, status starting)", body=InstanceStartSchema)
def start_instance():  # type: ignore[no-untyped-def]
    req = from_body(InstanceStartSchema)
    st = server_state()
    record = st.client.start(profile_id=req["profileId"], mode=req["mode"], port=req["port"])
    st.mirror.refresh()
    return jsonify(record), 201


@bp.post("/instances/<instance_id>/stop")
@doc("Stop an instance: shutdown, then SIGTERM, then SIGKILL, each bounded")
def stop_instance(instance_id: str):  # type: ignore[no-untyped-def]
    return jsonify(server_state().client.stop(instance_id))


@bp.post("/instances/<instance_id>/restart")
@doc("Restart an instance's bridge (same id, profile and port)")
def restart_instance(instance_id: str):  # type: ignore[no-untyped-def]
    return jsonify(server_state().client.restart(instance_id))


@bp.get("/instances/<instance_id>/logs")
@doc("The instance's recent output (text)", query=LogsQuerySchema, produces="text/plain")
def instance_logs(instance_id: str):  # type: ignore[no-untyped-def]
    req = schema_of(LogsQuerySchema).load(query_args())
    text = server_state().client.logs(instance_id, req["lines"])
    return Response(text + ("\n" if text else ""), mimetype="text/plain")


@bp.get("/instances/tabs")
@doc("Every tab of every running instance")
def all_tabs():  # type: ignore[no-untyped-def]
    st = server_state()
    st.mirror.refresh()
    out: list[dict[str, Any]] = []
    for record in st.mirror.records():
        if record["status"] == "running":
            out += _tabs_of(record["id"])
    return jsonify(out)


@bp.get("/instances/<instance_id>/tabs")
@doc("The instance's tabs")
def instance_tabs(instance_id: str):  # type: ignore[no-untyped-def]
    return jsonify(_tabs_of(instance_id, strict=True))


@bp.post("/instances/<instance_id>/tabs/open")
@doc("Open a tab in the instance", body=OpenTabSchema)
def open_tab(instance_id: str):  # type: ignore[no-untyped-def]
    req = from_body(OpenTabSchema)
    st = server_state()
    record, token = _running(instance_id)
    status, data = st.upstream.call(record, token, "POST", "/tab", {"action": "new", "url": req["url"]},
                                    timeout_s=float(st.config.timeouts.navigate_sec + 5))
    if status != 200:
        raise APIError(str(data.get("error", "could not open the tab")), status=status,
                       code=str(data.get("code", "error")), details=data.get("details"))
    st.locator.remember(data["tabId"], instance_id)
    return jsonify({"tabId": data["tabId"], "url": data.get("url", req["url"]), "title": data.get("title", "")})


@bp.post("/instances/attach")
@doc("Run an instance on a browser that is already running (security.attach)", body=AttachSchema)
def attach():  # type: ignore[no-untyped-def]
    req = from_body(AttachSchema)
    st = server_state()
    res = st.client.attach(req["name"], req["cdpUrl"])
    st.mirror.refresh()
    return jsonify(res["instance"]), 201 if res["created"] else 200


def _running(instance_id: str) -> tuple[dict[str, Any], str]:
    st = server_state()
    st.mirror.refresh()
    found = st.mirror.get(instance_id)
    if found is None:
        st.client.get(instance_id)  # raises the manager's 404
        raise BadRequest(f"instance {instance_id} vanished", code="instance_not_found", status=404)
    if found[0]["status"] != "running":
        raise APIError(f"instance {instance_id} is {found[0]['status']}", status=409, code="instance_not_running",
                       details={"instanceId": instance_id, "status": found[0]["status"]})
    return found


def _tabs_of(instance_id: str, strict: bool = False) -> list[dict[str, Any]]:
    st = server_state()
    if strict:
        record, token = _running(instance_id)
    else:
        found = st.mirror.get(instance_id)
        if found is None:
            return []
        record, token = found
    tabs = st.upstream.tabs(record, token)
    for tab in tabs:
        st.locator.remember(tab["id"], instance_id)
    return [{"id": t["id"], "instanceId": instance_id, "url": t.get("url", ""), "title": t.get("title", "")}
            for t in tabs]


class ProfileStartSchema(Schema):
    """``POST /profiles/{id}/start``: headless (or mode) and port for the profile's instance."""

    class Meta:
        unknown = EXCLUDE

    headless = fields.Boolean(load_default=None, allow_none=True)
    mode = fields.String(load_default=None, allow_none=True, validate=validate.OneOf(("headless", "headed")))
    port = fields.Integer(load_default=None, allow_none=True, strict=True, validate=validate.Range(min=1024, max=65535))


@bp.post("/profiles/<ident>/start")
@doc("Launch an instance on this profile (201 with its record)", body=ProfileStartSchema)
def start_profile(ident: str):  # type: ignore[no-untyped-def]
    req = from_body(ProfileStartSchema)
    mode = req["mode"] or (None if req["headless"] is None else ("headless" if req["headless"] else "headed"))
    st = server_state()
    record = st.client.start(profile_id=ident, mode=mode, port=req["port"])
    st.mirror.refresh()
    return jsonify(record), 201


@bp.post("/profiles/<ident>/stop")
@doc("Stop the instance running this profile")
def stop_profile(ident: str):  # type: ignore[no-untyped-def]
    record = _profile_instance(ident)
    if record is None:
        raise APIError(f"no instance runs profile {ident!r}", status=404, code="instance_not_found")
    return jsonify({**server_state().client.stop(record["id"]), "name": record["profileName"]})


@bp.get("/profiles/<ident>/instance")
@doc("Whether an instance runs this profile, and which")
def profile_instance(ident: str):  # type: ignore[no-untyped-def]
    record = _profile_instance(ident)
    if record is None:
        from .profiles import store

        return jsonify({"name": store().get(ident)["name"], "running": False, "status": "stopped", "port": None})
    return jsonify({"name": record["profileName"], "running": record["status"] == "running",
                    "status": record["status"], "port": record["port"], "id": record["id"]})


def _profile_instance(ident: str) -> dict[str, Any] | None:
    st = server_state()
    st.mirror.refresh()
    for record in st.mirror.records():
        if not record["attached"] and ident in (record["profileId"], record["profileName"]):
            return record
    return None
