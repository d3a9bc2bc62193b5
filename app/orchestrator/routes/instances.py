"""Server mode's own API: GET /health and /instances (list, start, stop, restart, logs, tabs, attach).

An agent session that starts an instance is its owner (``ownerAgent``, kept by the manager): the
session may stop or restart that one; stopping any other takes the operator's token.
"""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

from flask import Response, current_app, request

from ...access import auth
from ...config import Config
from ...web.errors import APIError, BadRequest, Forbidden
from ...web.openapi import Blueprint, package_version
from ...web.schemas import PageInfoResponse
from ..errors import ManagerUnavailable
from ..state import server_state
from . import start_state
from .instances_contract import (
    AttachBridgeSchema,
    AttachResponse,
    AttachSchema,
    InstanceLogsQuerySchema,
    InstanceMetrics,
    InstanceRecord,
    InstanceStartedResponse,
    InstanceStartSchema,
    InstanceTab,
    OpenTabSchema,
    ProfileInstanceResponse,
    ProfileStartSchema,
    ProfileStoppedResponse,
    ProviderRecord,
    ServerHealthResponse,
)
from .profiles import is_temporary, store
from .proxy import let_go, ready
from .server import agent_count, cached, restart_reasons

bp = Blueprint("instances", __name__)
METRICS_TIMEOUT_S = 5.0  # an instance's own /metrics, for its JS heap
METRICS_FANOUT = 8       # instances asked at once


@bp.get("/health")
@bp.response(200, ServerHealthResponse)
@bp.alt_response(503, schema=ServerHealthResponse, description="the instance manager is not running")
def health() -> dict[str, Any] | tuple[dict[str, Any], int]:
    """The server and its default instance (no token needed).

    Anyone may ask, so the public answer is the status and counts only: no instance id, no config
    key, no version. A caller with good credentials (the token, its login cookie) also gets the
    default instance's id, the version and uptime, the keys saved for a restart and the security
    summary.
    """
    st = server_state()
    known = _authenticated()
    body: dict[str, Any] = {"status": "ok", "mode": "dashboard", "authRequired": bool(st.config.server.token)}
    if known:
        body.update(version=package_version(), uptime=int((time.monotonic() - st.started) * 1000))
    try:
        st.mirror.refresh()  # live: a dead manager must show here, not in the next request
    except ManagerUnavailable as exc:
        body.update(status="error", reason=exc.message, instances=0, defaultInstance=None)
        return body, 503
    records = st.mirror.records()
    default = st.mirror.get(st.mirror.default_id or "")
    body["instances"] = len(records)
    body["running"] = sum(r["status"] == "running" for r in records)
    # Its status tells a poller when the server can take browser calls; its id is for callers we know.
    body["defaultInstance"] = None if not default else (
        {"id": default[0]["id"], "status": default[0]["status"]} if known else {"status": default[0]["status"]})
    body["profiles"] = cached("profiles", lambda: sum(not is_temporary(p["name"]) for p in store().list()))
    agents = agent_count()
    if agents is not None:
        body["agents"] = agents
    reasons = restart_reasons(current_app)
    body["restartRequired"] = bool(reasons)
    if known:
        if reasons:
            body["restartReasons"] = list(reasons)
        body["security"] = security_summary(st.config)
    return body


def _authenticated() -> bool:
    """Whether the caller of a public route sent good credentials (the header or the login cookie)."""
    if not server_state().config.server.token:
        return True  # no token: every caller is trusted (loopback only)
    try:
        return auth.authenticate(current_app, request) is not None
    except APIError:
        return False


def security_summary(config: Config) -> dict[str, Any]:
    """What the policy lets agents do: the capability switches that are on, and the allowlists."""
    sec = config.security
    gates = {"evaluate": sec.allow_evaluate, "cookies": sec.allow_cookies, "download": sec.allow_download,
             "upload": sec.allow_upload, "stateExport": sec.allow_state_export, "fileScheme": sec.allow_file_scheme,
             "macro": sec.allow_macro, "screencast": sec.allow_screencast, "clipboard": sec.allow_clipboard,
             "networkIntercept": sec.allow_network_intercept, "attach": sec.attach.enabled}
    enabled = sorted(k for k, on in gates.items() if on)
    level = "strict" if not enabled and sec.idpi.strict_mode else "custom" if enabled else "default"
    return {"level": level, "bind": config.server.bind, "allowedDomains": list(sec.allowed_domains),
            "idpiEnabled": sec.idpi.enabled, "enabledSensitiveEndpoints": enabled,
            "guardsDown": len(enabled) == len(gates)}


@bp.get("/instances")
@bp.response(200, InstanceRecord(many=True))
def list_instances() -> list[dict[str, Any]]:
    """Every instance (a bare array of instance records)."""
    st = server_state()
    st.mirror.refresh()
    return st.mirror.records()


@bp.get("/instances/<instance_id>")
@bp.response(200, InstanceRecord)
def get_instance(instance_id: str) -> dict[str, Any]:
    """One instance."""
    return server_state().client.get(instance_id)


@bp.post("/instances/start")
@bp.post("/instances/launch")
@bp.arguments(InstanceStartSchema)
@bp.response(201, InstanceStartedResponse)
def start_instance(req: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Launch an instance (201 with its record, status starting). With ``state``: 201 once it runs
    and the saved state is loaded into it (``start_state``)."""
    st = server_state()
    if req["state"]:
        start_state.check(req["state"])   # a bad or missing name launches nothing
    policy = req.get("securityPolicy") or {}
    record = st.client.start(profile_id=req["profileId"], mode=req["mode"], port=req["port"],
                             allowed_domains=policy.get("allowedDomains") or [], owner_agent=auth.session_agent(),
                             provider=req["provider"], wait_s=req["waitSec"])
    st.mirror.refresh()
    if req["state"]:
        loaded = start_state.load_onto(record["id"], req["state"])
        record = {**st.client.get(record["id"]), "state": loaded}
    return record, 201


@bp.get("/providers")
@bp.response(200, ProviderRecord(many=True))
def list_providers() -> list[dict[str, Any]]:
    """Where instances' browsers come from (browsers.providers): capacity, use and health."""
    return server_state().client.providers()


@bp.post("/instances/<instance_id>/start")
@bp.response(200, InstanceRecord)
def start_existing(instance_id: str) -> dict[str, Any]:
    """Start an instance that failed or was given up on (one that runs is left as it is)."""
    st = server_state()
    record = st.client.start_instance(instance_id)
    st.mirror.refresh()
    return record


@bp.get("/instances/metrics")
@bp.response(200, InstanceMetrics(many=True))
def instances_metrics() -> list[dict[str, Any]]:
    """Per instance: processes, resident memory, uptime, restarts; and, under the original's names
    (``instanceId``, ``profileName``, ``jsHeapUsedMB``, ``jsHeapTotalMB``), the JS heap of a running
    instance's pages (null when it does not answer in time)."""
    st = server_state()
    st.mirror.refresh()
    records = {r["id"]: r for r in st.mirror.records()}
    out = cast(list[dict[str, Any]], st.client.metrics())
    running = [m["id"] for m in out if m["status"] == "running" and st.mirror.get(m["id"]) is not None]
    heaps: dict[str, dict[str, Any]] = {}
    if running:
        # One slow instance must not hold the others' answers: asked at once, each with its deadline.
        with ThreadPoolExecutor(max_workers=min(len(running), METRICS_FANOUT)) as pool:
            for instance_id, heap in zip(running, pool.map(lambda i: _heap_of(st, i), running), strict=True):
                heaps[instance_id] = heap
    for m in out:
        heap = heaps.get(m["id"], {})
        m.update({"instanceId": m["id"], "profileName": records.get(m["id"], {}).get("profileName", ""),
                  "jsHeapUsedMB": heap.get("jsHeapUsedMB"), "jsHeapTotalMB": heap.get("jsHeapTotalMB"),
                  "browserMemoryMB": heap.get("memoryMB"), "tabs": heap.get("tabs")})
    return out


def _heap_of(st: Any, instance_id: str) -> dict[str, Any]:
    """The memory of the instance's browser (``memoryMB``, the JS heap of its pages) and its open tabs
    (``tabs``), from its own ``GET /metrics``; {} when it does not answer."""
    found = st.mirror.get(instance_id)
    if found is None:
        return {}
    record, token = found
    try:
        status, data = st.upstream.call(record, token, "GET", "/metrics", timeout_s=METRICS_TIMEOUT_S)
    except APIError:
        return {}
    if status != 200 or not isinstance(data, dict):
        return {}
    memory = data.get("memory")
    out = dict(memory) if isinstance(memory, dict) else {}
    # The tabs an agent sees (GET /tabs), not the browser's every page (its own blank one included).
    out["tabs"] = len(st.upstream.tabs(record, token))
    return out


@bp.post("/instances/<instance_id>/stop")
@bp.response(200, InstanceRecord)
def stop_instance(instance_id: str) -> dict[str, Any]:
    """Stop an instance: shutdown, then SIGTERM, then SIGKILL, each bounded. An agent session stops
    only the instances it started."""
    _require_owner(instance_id, "stop")
    let_go(instance_id)
    return server_state().client.stop(instance_id)


@bp.post("/instances/<instance_id>/restart")
@bp.response(200, InstanceRecord)
def restart_instance(instance_id: str) -> dict[str, Any]:
    """Restart an instance's bridge (same id, profile and port). An agent session restarts only the
    instances it started."""
    _require_owner(instance_id, "restart")
    let_go(instance_id)
    return server_state().client.restart(instance_id)


def _require_owner(instance: str | dict[str, Any], what: str) -> None:
    """Refuse an agent session ``what`` on an instance its agent did not start (403
    ``session_forbidden``); the operator passes. ``instance``: its id or its record."""
    agent = auth.session_agent()
    if agent is None:
        return
    record = server_state().client.get(instance) if isinstance(instance, str) else instance  # 404 when unknown
    if record.get("ownerAgent") != agent:
        raise Forbidden(f"an agent session may {what} only the instances it started; this one is not its own "
                        "(the token may)", code="session_forbidden", details={"instanceId": record["id"]})


@bp.get("/instances/<instance_id>/logs")
@bp.arguments(InstanceLogsQuerySchema, location="query")
@bp.response(200, content_type="text/plain", description="the last lines the instance printed")
def instance_logs(req: dict[str, Any], instance_id: str) -> Response:
    """The instance's recent output (text)."""
    text = server_state().client.logs(instance_id, req["lines"])
    return Response(text + ("\n" if text else ""), mimetype="text/plain")


@bp.get("/instances/tabs")
@bp.response(200, InstanceTab(many=True))
def all_tabs() -> list[dict[str, Any]]:
    """Every tab of every running instance."""
    st = server_state()
    st.mirror.refresh()
    out: list[dict[str, Any]] = []
    for record in st.mirror.records():
        if record["status"] == "running":
            out += _tabs_of(record["id"])
    return out


@bp.get("/instances/<instance_id>/tabs")
@bp.response(200, InstanceTab(many=True))
def instance_tabs(instance_id: str) -> list[dict[str, Any]]:
    """The instance's tabs."""
    return _tabs_of(instance_id, strict=True)


@bp.post("/instances/<instance_id>/tabs/open")
@bp.arguments(OpenTabSchema)
@bp.response(200, PageInfoResponse)
def open_tab(req: dict[str, Any], instance_id: str) -> dict[str, Any]:
    """Open a tab in the instance."""
    st = server_state()
    record, token = _running(instance_id)
    status, data = st.upstream.call(record, token, "POST", "/tab", {"action": "new", "url": req["url"]},
                                    timeout_s=float(st.config.timeouts.navigate_sec + 5))
    if status != 200:
        raise APIError(str(data.get("error", "could not open the tab")), status=status,
                       code=str(data.get("code", "error")), details=data.get("details"))
    st.locator.remember(data["tabId"], instance_id)
    return {"tabId": data["tabId"], "url": data.get("url", req["url"]), "title": data.get("title", "")}


@bp.post("/instances/attach")
@bp.arguments(AttachSchema)
@bp.response(201, AttachResponse)
@bp.alt_response(200, schema=AttachResponse, description="the browser was attached already: its instance")
def attach(req: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Run an instance on a browser that is already running (security.attach).

    ``attachType: "extension"``: a person's own Chrome, through our extension; the answer says where
    the extension connects (``extensionUrl``) and the pairing token it must show (``pairing``), and
    the instance runs (``extensionConnected: false``) until the person points the extension there.
    """
    st = server_state()
    res = st.client.attach(req["name"], req["cdpUrl"] or "", attach_type=req["attachType"],
                           extension_port=req["extensionPort"])
    st.mirror.refresh()
    answer = dict(res["instance"])
    if res.get("pairing"):
        answer["pairing"] = res["pairing"]
    return answer, 201 if res["created"] else 200


@bp.post("/instances/attach-bridge")
@bp.arguments(AttachBridgeSchema)
@bp.response(201, InstanceRecord)
@bp.alt_response(200, schema=InstanceRecord, description="the bridge was attached already: its instance")
def attach_bridge(req: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """Route to a `pinchtab bridge` that runs elsewhere, by its URL and token (security.attach)."""
    st = server_state()
    res = st.client.attach_bridge(req["name"], req["baseUrl"], req["token"])
    st.mirror.refresh()
    return res["instance"], 201 if res["created"] else 200


def _running(instance_id: str) -> tuple[dict[str, Any], str]:
    """(record, token) of a running instance, waiting a little for one that is starting (as the
    shorthand routes do: a client may open a tab right after ``POST /instances/start``)."""
    st = server_state()
    st.mirror.refresh()
    if st.mirror.get(instance_id) is None:
        st.client.get(instance_id)  # raises the manager's 404
        raise BadRequest(f"instance {instance_id} vanished", code="instance_not_found", status=404)
    return ready(instance_id)


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


@bp.post("/profiles/<ident>/start")
@bp.arguments(ProfileStartSchema)
@bp.response(201, InstanceRecord)
def start_profile(req: dict[str, Any], ident: str) -> tuple[dict[str, Any], int]:
    """Launch an instance on this profile (201 with its record)."""
    mode = req["mode"] or (None if req["headless"] is None else ("headless" if req["headless"] else "headed"))
    st = server_state()
    policy = req.get("securityPolicy") or {}
    record = st.client.start(profile_id=ident, mode=mode, port=req["port"],
                             allowed_domains=policy.get("allowedDomains") or [], owner_agent=auth.session_agent())
    st.mirror.refresh()
    return record, 201


@bp.post("/profiles/<ident>/stop")
@bp.response(200, ProfileStoppedResponse)
def stop_profile(ident: str) -> dict[str, Any]:
    """Stop the instance running this profile."""
    record = _profile_instance(ident)
    if record is None:
        raise APIError(f"no instance runs profile {ident!r}", status=404, code="instance_not_found")
    _require_owner(record, "stop")
    let_go(record["id"])
    return {**server_state().client.stop(record["id"]), "name": record["profileName"]}


@bp.get("/profiles/<ident>/instance")
@bp.response(200, ProfileInstanceResponse)
def profile_instance(ident: str) -> dict[str, Any]:
    """Whether an instance runs this profile, and which."""
    record = _profile_instance(ident)
    if record is None:
        return {"name": store().get(ident)["name"], "running": False, "status": "stopped", "port": None}
    return {"name": record["profileName"], "running": record["status"] == "running",
            "status": record["status"], "port": record["port"], "id": record["id"]}


def _profile_instance(ident: str) -> dict[str, Any] | None:
    st = server_state()
    st.mirror.refresh()
    for record in st.mirror.records():
        if not record["attached"] and ident in (record["profileId"], record["profileName"]):
            return record
    return None
