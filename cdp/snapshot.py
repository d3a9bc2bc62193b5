"""Taking a snapshot: our in-page walker per frame, frames merged under their owners, refs kept.

Chrome's ``Accessibility.getFullAXTree`` costs ~2 s on a page of 5,000 controls (an 8.8 MB
reply); the walker in ``scripts/snapshot_*.js`` computes the same roles and names inside the page,
in our isolated world, in tens of milliseconds. One call per frame, never one per node.

Refs are kept by the walker: a WeakMap from DOM node to ref in each frame's world, so the same
node keeps its ref across snapshots and filters for as long as it lives, and a ref can never be
re-bound to another node. This module keeps the tab-wide side: the counter (numbering restarts
with each new main-frame document), which frame each ref lives in, and what each ref last was
(for ``stale_ref`` candidates).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import CDPError, NotAnElement, StaleRef, UnknownRef
from .page import Element, call_on, evaluate, world
from .tab import Frame, Tab

REF_RE = re.compile(r"^e(\d+)$")
# JS: the element a node stands for: itself, or for text its parent element (or shadow host).
ELEMENT_OF = "(n => n && n.nodeType === 3 ? (n.parentElement || (n.parentNode && n.parentNode.host) || n) : n)"


@dataclass
class RefTable:
    """The tab-wide half of the refs of one main-frame document."""

    epoch: int
    next: int = 0
    retired_below: int = 0  # refs under this number belonged to an earlier document
    frame_of: dict[str, str] = field(default_factory=dict)  # ref -> frame id
    seen: dict[str, tuple[str, str]] = field(default_factory=dict)  # ref -> (role, name)
    owners: dict[str, str] = field(default_factory=dict)  # child frame id -> ref of its <iframe>


MAX_WALKS = 3   # a page that commits a new document on every walk gets the last walk's refs


def refs_of(tab: Tab) -> RefTable:
    """The tab's ref table for its current main-frame document (a new document starts afresh)."""
    table: RefTable | None = tab.state.get("refs")
    if table is None or table.epoch != tab.document_epoch:
        retired = max(table.next, table.retired_below) if table else 0
        table = RefTable(epoch=tab.document_epoch, retired_below=retired)
        tab.state["refs"] = table
    return table


# --- snapshot --------------------------------------------------------------------------------
def take(tab: Tab, *, filter: str = "all", details: bool = False, max_depth: int = -1,
         root: Element | None = None, page: dict[str, str] | None = None) -> list[dict[str, Any]]:
    """The tab's nodes in document order, frames inlined under their owners; refs recorded.

    ``page``, for a whole-page snapshot: filled with the page's ``url`` and ``title`` as the walk
    read them (what ``page_info`` reads, without a round trip of its own).

    A walk that a new document's commit overtook (a popup that was still on about:blank when it
    began) read the new document under the old one's refs, which the commit then retires: it is
    walked again, so the refs handed out are the new document's.
    """
    for _ in range(MAX_WALKS):
        epoch = tab.document_epoch
        table = refs_of(tab)
        if tab.main_frame_id is None:
            return []
        if root is not None:
            frame = tab.frames[root.frame_id]
        else:
            frame = tab.frames[tab.main_frame_id]
        nodes = _walk_frame(tab, table, frame, filter, details, max_depth, root, depth_offset=0, page=page)
        if tab.document_epoch == epoch or root is not None:
            break   # (an element's subtree belongs to the document it was found in: no second walk)
    for node in nodes:
        table.seen[node["ref"]] = (node["role"], node.get("name", ""))
    return nodes


HOST_LIMIT = 50  # closed shadow root candidates asked about per call


def adopt_closed_shadow_roots(tab: Tab, frame: Frame, limit: int = HOST_LIMIT, *, found_by_walk: bool = False) -> int:
    """Hand the walker the closed shadow roots of this frame it has not seen (script cannot reach them).

    Each candidate host is asked about once per document, so a page without new hosts costs one
    call; returns how many roots were adopted. ``found_by_walk``: a snapshot call found the first
    candidates already (they wait in the page for ``takeHosts``).
    """
    adopted = 0
    for attempt in range(3):  # a closed root can hold hosts of its own
        ask = "takeHosts()" if found_by_walk and attempt == 0 else f"unknownHosts({limit})"
        arr = evaluate(tab, frame, f"globalThis.__pinchtab.{ask}", by_value=False)
        if arr.get("description") == "Array(0)":
            break  # nothing new to ask about: the common case, one call
        props = tab.call("Runtime.getProperties", {"objectId": arr["objectId"], "ownProperties": True},
                         session_id=frame.session_id).get("result", [])
        hosts = [p["value"]["objectId"] for p in props if p["name"].isdigit() and p.get("value", {}).get("objectId")]
        found = 0
        for host in hosts:
            node = tab.call("DOM.describeNode", {"objectId": host, "pierce": True, "depth": 0},
                            session_id=frame.session_id)["node"]
            for sr in node.get("shadowRoots", []):
                if sr.get("shadowRootType") != "closed":
                    continue
                root = tab.call("DOM.resolveNode", {"backendNodeId": sr["backendNodeId"],
                                                    "executionContextId": world(tab, frame)},
                                session_id=frame.session_id)["object"]
                tab.call("Runtime.callFunctionOn", {
                    "functionDeclaration": "function(host){ globalThis.__pinchtab.adoptClosedRoot(host, this); }",
                    "objectId": root["objectId"], "arguments": [{"objectId": host}]}, session_id=frame.session_id)
                found += 1
        adopted += found
        if not found:
            break
    return adopted


def _walk_frame(tab: Tab, table: RefTable, frame: Frame, filter: str, details: bool, max_depth: int,
                root: Element | None, depth_offset: int, page: dict[str, str] | None = None) -> list[dict[str, Any]]:
    opts: dict[str, Any] = {"filter": filter, "nextRef": table.next, "details": details, "maxDepth": max_depth}
    if root is not None:
        adopt_closed_shadow_roots(tab, frame)
        walk = "function(o){return JSON.stringify(globalThis.__pinchtab.snapshot(o, this))}"
        res = json.loads(call_on(tab, root, walk, opts))
    else:
        # One call for the common page: the walk looks for closed shadow root candidates first, and
        # answers with them instead of nodes when there are some, to be walked again once adopted.
        # One string instead of thousands of objects: CDP's by-value serialisation of 6,000 nodes
        # costs more than the walk itself.
        res = json.loads(evaluate(tab, frame, _snapshot_call({**opts, "hosts": HOST_LIMIT, "page": page is not None})))
        if "hosts" in res:
            adopt_closed_shadow_roots(tab, frame, found_by_walk=True)
            res = json.loads(evaluate(tab, frame, _snapshot_call({**opts, "page": page is not None})))
        if page is not None:
            page.update(url=res["url"], title=res["title"])
            tab.url, tab.title = res["url"], res["title"]
    table.next = max(table.next, res["nextRef"])
    nodes: list[dict[str, Any]] = res["nodes"]
    out: list[dict[str, Any]] = []
    children = [f for f in tab.frames.values() if f.parent_id == frame.frame_id]
    owner_to_frame = _frame_owners(tab, table, frame, children) if children else {}
    for node in nodes:
        if depth_offset:
            node["depth"] += depth_offset
        table.frame_of[node["ref"]] = frame.frame_id
        if frame.frame_id != tab.main_frame_id:
            node["frameId"] = frame.frame_id
        out.append(node)
        if node.pop("frame", False):
            child = owner_to_frame.get(node["ref"])
            if child is None:
                continue
            node["childFrameId"] = child.frame_id
            if child.url:
                node["childFrameUrl"] = child.url
            sub_depth = node["depth"] + 1
            if max_depth >= 0 and sub_depth > max_depth:
                continue
            sub_max = max_depth - sub_depth if max_depth >= 0 else -1
            try:
                out += _walk_frame(tab, table, child, filter, details, sub_max, None, sub_depth)
            except CDPError:
                continue  # a frame that navigated away mid-snapshot: its owner stays, contents skipped
    return out


def _snapshot_call(opts: dict[str, Any]) -> str:
    return f"JSON.stringify(globalThis.__pinchtab.snapshot({json.dumps(opts)}))"


def _frame_owners(tab: Tab, table: RefTable, parent: Frame, children: list[Frame]) -> dict[str, Frame]:
    """Map each child frame's ``<iframe>`` ref to the frame (three calls per frame, cached per document)."""
    result: dict[str, Frame] = {}
    for child in children:
        ref = table.owners.get(child.frame_id)
        if ref is None or table.frame_of.get(ref) != parent.frame_id:
            try:
                owner = tab.call("DOM.getFrameOwner", {"frameId": child.frame_id}, session_id=parent.session_id)
                obj = tab.call("DOM.resolveNode", {"backendNodeId": owner["backendNodeId"],
                                                   "executionContextId": world(tab, parent)},
                               session_id=parent.session_id)["object"]
                el = Element(obj["objectId"], parent.frame_id, parent.session_id, world(tab, parent))
                ref = call_on(tab, el, "function(){return globalThis.__pinchtab.refOf(this)}")
            except CDPError:
                continue
            if not ref:
                continue
            table.owners[child.frame_id] = ref
        result[ref] = child
    return result


# --- refs back to elements -------------------------------------------------------------------
def resolve_ref(tab: Tab, ref: str) -> Element:
    """The live element behind ``ref``; StaleRef when its node is gone, UnknownRef when never issued."""
    m = REF_RE.match(ref)
    table = refs_of(tab)
    if not m:
        raise UnknownRef(ref)
    frame_id = table.frame_of.get(ref)
    if frame_id is None:
        if int(m.group(1)) < table.retired_below:
            raise StaleRef(ref)  # issued for a document this tab has since left
        raise UnknownRef(ref)
    frame = tab.frames.get(frame_id)
    obj = None
    if frame is not None and frame.world_ctx is not None:
        try:
            # A ref on text (StaticText) names its element: actions and reads need one.
            obj = evaluate(tab, frame, f"{ELEMENT_OF}(globalThis.__pinchtab.resolve({json.dumps(ref)}))",
                           by_value=False)
        except CDPError:
            obj = None
    if not obj or obj.get("subtype") == "null" or "objectId" not in obj:
        role, name = table.seen.get(ref, ("", ""))
        raise StaleRef(ref, role, name, candidates(tab, ref, role, name))
    if obj.get("description") == "#document":
        raise NotAnElement(f"ref {ref} is the page itself (RootWebArea), not an element in it; "
                           "use the ref of an element")
    return Element(obj["objectId"], frame.frame_id, frame.session_id, frame.world_ctx, ref)  # type: ignore[union-attr]


def candidates(tab: Tab, ref: str, role: str, name: str) -> list[dict[str, str]]:
    """Current refs with the same role and name as a stale one (from the latest snapshot)."""
    if not role:
        return []
    fresh = take(tab, filter="interactive")
    return [{"ref": n["ref"], "role": n["role"], "name": n.get("name", "")}
            for n in fresh if n["ref"] != ref and n["role"] == role and n.get("name", "") == name][:5]
