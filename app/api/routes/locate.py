"""Finding and waiting: POST /find (which element a description means) and POST /wait."""
from __future__ import annotations

import time
from typing import Any

from cdp import content, frame_scope, node_boxes, selectors, waits
from cdp import snapshot as snap
from cdp.errors import BadSelector
from cdp.find import match, position_hint
from cdp.navigation import page_info
from cdp.tab import Tab

from ...policy.idpi import corpus
from ...web.errors import BadRequest, disabled
from ...web.openapi import Blueprint, tab_route
from .. import idpi_hooks
from .common import on_tab, state, tab
from .locate_contract import FindResponse, FindSchema, WaitResponse, WaitSchema

bp = Blueprint("locate", __name__)
MODES = ("selector", "text", "notText", "url", "load", "fn")


@tab_route(bp, "/find", methods=["POST"])
@bp.arguments(FindSchema)
@bp.response(200, FindResponse)
def find(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Which element a description means."""
    target = tab(req.get("tabId"))
    policy = idpi_hooks.policy()  # read here: the job runs on the tab's worker, outside the request

    def run(t: Tab) -> tuple[dict[str, Any], str, str]:
        found = locate(t, req)
        # The matches' names and the page's text: what an agent reading the answer acts on.
        page = content.text(t, raw=True, timeout_s=policy.scan_timeout_s) if policy.scans else ""
        return found, corpus([m.get("name", "") for m in found["matches"]] + [page]), page_info(t)["url"]

    found, said, url = on_tab(target, run)
    return {**found, **idpi_hooks.screen(said, url)}


def locate(tab: Tab, req: dict[str, Any]) -> dict[str, Any]:
    """On the tab's worker: score the interactive nodes, or take a structured query as it is."""
    query = req["query"].strip()
    started = time.perf_counter()
    try:
        sel = selectors.parse(query)
    except BadSelector:
        sel = None  # not a selector: a description to score
    if sel is not None and (sel.kind in selectors.STRUCTURED or sel.which is not None) and ":" in query:
        in_scope = frame_scope.search_frames(tab)
        refs = selectors.structured_matches(tab, sel, in_scope) if sel.kind in selectors.STRUCTURED else []
        if sel.which is not None and refs:
            refs = [refs[sel.which]] if -len(refs) <= sel.which < len(refs) else []
        seen = tab.state.get("refs").seen if tab.state.get("refs") else {}
        matches = [{"ref": r, "score": 1.0, "role": seen.get(r, ("", ""))[0], "name": seen.get(r, ("", ""))[1]}
                   for r in refs[: req["topK"]]]
        return {"best_ref": matches[0]["ref"] if matches else "", "confidence": "high" if matches else "low",
                "score": 1.0 if matches else 0.0, "matches": matches, "strategy": "structured",
                "threshold": req["threshold"], "latency_ms": round((time.perf_counter() - started) * 1000, 3),
                "element_count": len(seen)}
    nodes = snap.take(tab, filter="interactive", details=True, root=selectors.snapshot_root(tab))
    positions = None
    if position_hint(query, nodes):
        # "top button": where the elements are on screen (one script call per frame), visible ones only.
        positions = {ref: (b["box"]["x"] + b["box"]["width"] / 2, b["box"]["y"] + b["box"]["height"] / 2)
                     for ref, b in node_boxes.boxes(tab, nodes).items() if b["visible"]}
    return match(nodes, query, top_k=req["topK"], threshold=req["threshold"], explain=req["explain"],
                 positions=positions)


@tab_route(bp, "/wait", methods=["POST"])
@bp.arguments(WaitSchema)
@bp.response(200, WaitResponse)
def wait(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Wait for a selector, text, URL, load state or function (bounded)."""
    timeout_ms = min(max(req["timeout"], 100), 30000)
    started = time.monotonic()
    if "ms" in req:
        # A fixed wait the caller asked for (bounded at 30 s); no tab needed.
        time.sleep(req["ms"] / 1000)
        return {"waited": True, "elapsed": req["ms"], "match": f"{req['ms']}ms"}
    mode = next((m for m in MODES if m in req), None)
    if mode is None:
        raise BadRequest("one of selector, text, notText, url, load, fn, or ms is required")
    if mode == "fn" and not state().config.security.allow_evaluate:
        raise disabled("evaluate", "security.allowEvaluate")
    element_state = {"attached": "visible", "detached": "hidden"}.get(req["state"], req["state"])
    target = tab(req.get("tabId"))
    # A bad selector is a 400 before waiting.
    check = waits.condition(target, mode, req[mode], state=element_state, idle_ms=req["idleFor"])
    ok = on_tab(target, lambda t: waits.poll(t, check, timeout_ms / 1000), timeout_ms / 1000 + 5)
    elapsed = int((time.monotonic() - started) * 1000)
    if ok:
        return {"waited": True, "elapsed": elapsed, "match": req[mode]}
    return {"waited": False, "elapsed": elapsed,
            "error": f"timeout after {timeout_ms}ms waiting for {mode} {req[mode]!r}"}
