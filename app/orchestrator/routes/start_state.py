"""The saved state an instance starts with: ``POST /instances/start {"state": NAME}``.

A remote browser starts empty (a profile is a folder on this machine and cannot travel), so what
follows an agent there is a saved state: cookies and storage saved earlier with ``POST /state/save``.
Every instance's saved-state folder is the server's ``<stateDir>/sessions`` (``launch/local.py``
links it), so a state saved on one instance loads on any other.

The name is checked, and the state looked for, before anything launches: a bad or missing name
costs no browser. Once the instance runs, its bridge loads the state through its own
``POST /state/load``: cookies for the whole browser, storage for the origin of the tab it runs on.
Storage is written in a page of its origin, so each origin that load skipped gets a tab of its own
there, a load on that tab, and the tab closed again.
"""
from __future__ import annotations

import re
from typing import Any

from ...web.errors import APIError, BadRequest, NotFound, disabled
from ...web.files import SAVED_STATES, STATE_NAME, entries
from ..state import server_state
from .proxy import let_go, ready

# How long the load waits for the instance to run: a launch's own health deadline (45 s) and a margin.
RUNNING_WAIT_S = 50.0


def check(name: str) -> None:
    """Before launching: 403 ``state_export_disabled`` when saved state is off, 400 ``bad_state_name``,
    404 ``state_not_found`` when no state has that name or starts with it (as the bridge's load finds one)."""
    config = server_state().config
    if not config.security.allow_state_export:
        raise disabled("state_export", "security.allowStateExport")
    if not re.fullmatch(STATE_NAME, name):
        raise BadRequest(f"state {name!r} is not a saved state's name: 1-64 letters, digits, '-', '_' or '.', "
                         "not starting with a dot", code="bad_state_name", details={"field": "state"})
    folder = (config.server.state_dir / SAVED_STATES).resolve()
    if not folder.is_dir() or not any(p.stem.startswith(name) for p in entries(folder, "*.json")):
        raise NotFound(f"no saved state named {name!r} (or starting with it); GET /state/list shows them",
                       code="state_not_found", details={"name": name})


def load_onto(instance_id: str, name: str) -> dict[str, Any]:
    """Once the instance runs, load the state ``name`` into it: what was restored (the bridge's answer,
    with the storage of the origins reached on tabs of their own)."""
    st = server_state()
    try:
        st.mirror.wait_settled(instance_id, RUNNING_WAIT_S)
        record, token = ready(instance_id)
        return _load(record, token, name)
    except APIError as exc:
        # The caller asked for an instance with this state and gets an error instead: an instance left
        # running without it would hold a browser (a provider's capacity) that nobody knows to stop,
        # and a caller that retried would start a second. So it is stopped, and the error says which.
        try:
            let_go(instance_id)
            st.client.stop(instance_id)
            stopped = True
        except APIError:   # the manager is gone too: the details say the instance may still run
            stopped = False
        exc.details = {**exc.details, "instanceId": instance_id, "stopped": stopped}
        raise


def _load(record: dict[str, Any], token: str, name: str) -> dict[str, Any]:
    answer = _post(record, token, "/state/load", {"name": name})
    skipped = []
    for origin in answer.get("skippedOrigins") or []:
        items = _load_on_origin(record, token, name, origin)
        if items is None:
            skipped.append(origin)
        else:
            answer["storageItemsRestored"] = int(answer.get("storageItemsRestored") or 0) + items
    answer["skippedOrigins"] = skipped
    return answer


def _load_on_origin(record: dict[str, Any], token: str, name: str, origin: str) -> int | None:
    """The storage items restored for ``origin`` on a tab opened there; None when the tab could not
    reach it (not http(s), refused by the navigation policy, not answering): the origin stays skipped,
    as a plain ``POST /state/load`` would leave it, and the cookies are restored all the same."""
    if not origin.startswith(("http://", "https://")):
        return None
    nav_s = float(server_state().config.timeouts.navigate_sec + 5)
    try:
        tab = _post(record, token, "/tab", {"action": "new", "url": origin + "/"}, nav_s)["tabId"]
    except APIError:
        return None
    try:
        return int(_post(record, token, "/state/load", {"name": name, "tabId": tab}).get("storageItemsRestored") or 0)
    except APIError:
        return None
    finally:
        try:
            _post(record, token, "/close", {"tabId": tab})
        except APIError:
            pass   # a tab left open is no harm; the load's answer is what matters


def _post(record: dict[str, Any], token: str, path: str, body: dict[str, Any],
          timeout_s: float | None = None) -> dict[str, Any]:
    """The instance's answer to ``POST path``; its error as ours when it is not a 200."""
    st = server_state()
    status, data = st.upstream.call(record, token, "POST", path, body,
                                    timeout_s=timeout_s or float(st.config.timeouts.action_sec + 5))
    if status != 200 or not isinstance(data, dict):
        data = data if isinstance(data, dict) else {}
        raise APIError(str(data.get("error", f"POST {path} failed")), status=status if status >= 400 else 502,
                       code=str(data.get("code", "bad_upstream_answer")), details=data.get("details"))
    return data
