"""POST /action and /actions: act on elements by ref, selector, nodeId or point; one round trip a step.

With ``"snap": "compact"`` the answer carries the page's interactive snapshot after the action,
with ``"snap": "diff"`` what changed since this caller last looked, once the page has settled.
A step on a leased tab needs its owner (routes/locks.py); none runs while a person has the tab
(routes/handoff.py). A click that opens a tab says so, and moves the caller there (``autoSwitch``;
with ``"autoSwitch": false`` the tab it opened is closed, as in the original).
"""
from __future__ import annotations

import dataclasses
from typing import Any

from cdp import snapshot_doc
from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed
from cdp.navigation import wait_opened_page
from cdp.steps import WINDOW_OPENED, perform
from cdp.tab import Tab

from ...config import Config
from ...web.errors import body as error_body
from ...web.errors import from_exception
from ...web.openapi import Blueprint, ErrorSchema, tab_route
from ...web.parser import load
from .. import idpi_hooks
from ..contract import ActionRequest, ActionSchema, ActionsResponse
from ..engines import check_engine
from .actions_contract import ActionResponse, ActionsSchema
from .common import caller, on_tab, state, tab
from .locks import check_access, request_owner

bp = Blueprint("actions", __name__)

OPENED_TAB_WAIT_S = 3.0  # a page said it opens a window: how long Chrome gets to report the tab
OPENED_PAGE_WAIT_S = 5.0  # then how long its page gets to be parsed before the step answers


def run_step(t: Tab, req: ActionRequest, cfg: Config) -> dict[str, Any]:
    """On the tab's worker: one step with its guards (``cfg`` read in the request's thread)."""
    humanize = cfg.instance_defaults.humanize if req.humanize is None else req.humanize
    return perform(t, dataclasses.replace(req.step, humanize=humanize), guard=cfg.security.enable_action_guards,
                       wait_nav_s=cfg.timeouts.wait_nav_ms / 1000, navigate_timeout_s=cfg.timeouts.navigate_sec)


def step_timeout(req: ActionRequest, cfg: Config) -> float:
    """The request's timeout, else the action timeout, longer for humanized typing (~0.1 s a character)."""
    if req.timeout_s:
        return req.timeout_s
    base = float(cfg.timeouts.action_sec)
    humanize = cfg.instance_defaults.humanize if req.humanize is None else req.humanize
    if humanize and req.step.text:
        return base + 0.2 * len(req.step.text)
    return base


def _action(req: ActionRequest) -> dict[str, Any]:
    target, view, cfg = tab(req.tab_id), caller().view, state().config
    check_step(target, req)
    known = page_ids()

    def job(t: Tab) -> dict[str, Any]:
        if req.snap == "diff":
            snapshot_doc.ensure_view(t, view)  # the page before the action, if the caller has no view of it
        out: dict[str, Any] = {"success": True, "result": run_step(t, req, cfg)}
        if req.snap:
            out.update(snapshot_doc.after_action(t, req.snap, view))
        return out

    out = on_tab(target, job, step_timeout(req, cfg))
    adopt_opened_tab(target, out["result"], req.auto_switch, known)
    return idpi_hooks.screen_attached(out, target.url)


def check_step(t: Tab, req: ActionRequest, owner: str | None = None) -> None:
    """What must hold before a step runs on ``t``: its engine exists here, no other owner leases the
    tab (423), no person has it (409)."""
    check_engine(state().config, req.browser)
    check_access(t, request_owner(req.owner or owner))


def page_ids() -> set[str]:
    """The page targets open now (so that a tab a step opens can be told apart)."""
    return {p["targetId"] for p in state().ensure(caller()).pages()}


def opened_page_ready(t: Tab) -> None:
    """Bring a tab a step opened to the front (in a window, the person watching sees it too) and
    let it parse the page it was opened to: the caller's next call (a snapshot) means that page."""
    t.call("Page.bringToFront")
    wait_opened_page(t, OPENED_PAGE_WAIT_S)


def adopt_opened_tab(t: Tab, result: dict[str, Any], auto_switch: bool, known: set[str]) -> None:
    """A step whose page opened a tab reports it (``openedTab``); with ``auto_switch`` the new tab
    becomes the caller's current one (``switchedToTab``), so the agent's next call lands there.
    Without, the tab is closed (``closedTab``), as the original's popup guard does."""
    if not result.pop(WINDOW_OPENED, False):
        return
    st, who = state(), caller()
    browser = st.ensure(who)
    opened = browser.opened_by(t.id, known, OPENED_TAB_WAIT_S)
    if opened is None:
        return  # a popup the browser blocked, a download, or a page the navigation policy closed: no tab
    if not auto_switch:
        # The caller stays on its tab and wants no other: a page it did not ask for is not left
        # running unseen (and counting against maxTabs).
        try:
            browser.tab(opened)  # a popup being set up first, so that closing it leaves nothing behind
            browser.close_tab(opened)
        except (KeyError, TargetClosed, CDPError, CDPTimeout, BrowserGone):
            pass  # closed already (the page itself, or the navigation policy)
        st.guards.forget(opened)
        result["closedTab"] = opened
        return
    result["openedTab"] = opened
    try:
        new = st.mark(browser.tab(opened), who)
        new.run(lambda: opened_page_ready(new), OPENED_PAGE_WAIT_S + 10)
    except (KeyError, TargetClosed):  # closed at once (the navigation policy refused it)
        del result["openedTab"]
        return
    who.tab_id = t.id  # the answer still names the tab the step ran on
    result["switchedToTab"] = opened


def run_batch(steps: list[dict[str, Any]], tab_id: str | None, owner: str | None, stop_on_error: bool,
              timeout_s: float | None = None) -> tuple[dict[str, Any], Tab | None]:
    """Run ``steps`` in order, each reported in its place; the answer of /actions and /macro, and the
    tab of the last step that ran."""
    cfg = state().config
    results: list[dict[str, Any]] = []
    last_tab: Tab | None = None
    for i, raw in enumerate(steps):
        try:
            tab_of_step = raw.get("tabId") or tab_id
            req: ActionRequest = load(ActionSchema, {**raw, "tabId": tab_of_step} if tab_of_step else raw)
            target = tab(req.tab_id)
            last_tab = target
            check_step(target, req, owner)
            known = page_ids()
            result = on_tab(target, lambda t, req=req: run_step(t, req, cfg), timeout_s or step_timeout(req, cfg))
            adopt_opened_tab(target, result, req.auto_switch, known)
            results.append({"index": i, "success": True, "result": result})
        except Exception as exc:  # a failed step is reported in its place, not as the request's error
            err = from_exception(exc)
            if err is None:
                raise
            results.append({"index": i, "success": False, **error_body(err)})
            if stop_on_error:
                break
    ok = sum(1 for r in results if r["success"])
    total = len(steps)
    return {"results": results, "total": total, "successful": ok, "failed": total - ok}, last_tab


@tab_route(bp, "/action", methods=["POST"])
@bp.arguments(ActionSchema)
@bp.response(200, ActionResponse)
@bp.alt_response(423, schema=ErrorSchema, description="another owner leases the tab (tab_locked)")
@bp.alt_response(409, schema=ErrorSchema, description="a person has the tab (tab_paused_handoff), the element is "
                                                      "covered (element_occluded), a stale ref, a navigation, ...")
def action(req: ActionRequest, tab_id: str | None) -> dict[str, Any]:
    """One action on an element, by ref, selector, nodeId or point."""
    return _action(req)


@tab_route(bp, "/action", methods=["GET"])
@bp.arguments(ActionSchema, location="query")
@bp.response(200, ActionResponse)
@bp.alt_response(423, schema=ErrorSchema, description="another owner leases the tab (tab_locked)")
def action_by_query(req: ActionRequest, tab_id: str | None) -> dict[str, Any]:
    """``POST /action`` with its fields in the query."""
    return _action(req)


@tab_route(bp, "/actions", methods=["POST"])
@bp.arguments(ActionsSchema)
@bp.response(200, ActionsResponse)
def actions(batch: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """A batch of actions, each reported in its place (``stopOnError`` ends it at the first failure)."""
    view = caller().view
    if batch["snap"] == "diff":
        first = tab(batch.get("tabId") or (batch["actions"][0].get("tabId") if batch["actions"] else None))
        on_tab(first, lambda t: snapshot_doc.ensure_view(t, view))
    out, last_tab = run_batch(batch["actions"], batch.get("tabId"), batch.get("owner"), batch["stopOnError"])
    if batch["snap"]:
        last = last_tab or tab(batch.get("tabId"))
        out.update(on_tab(last, lambda t: snapshot_doc.after_action(t, batch["snap"], view)))
        idpi_hooks.screen_attached(out, last.url)
    return out
