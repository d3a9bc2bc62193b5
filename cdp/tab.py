"""A tab: its CDP session, worked by a thread of its own (``cdp.tab_worker``), and what the events
of its sessions say of the page: its frames and their documents, dialogs, console and errors.
"""
from __future__ import annotations

import collections
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .errors import TargetClosed, TargetCrashed
from .intercept import Interceptor
from .network import NetworkLog, NetworkOptions
from .tab_worker import TabWorker

if TYPE_CHECKING:
    from .connection import Connection

CONSOLE_RING = 1000


@dataclass
class Frame:
    """A frame of this tab: which session reaches it and our isolated world's context there."""

    frame_id: str
    session_id: str
    parent_id: str | None = None
    url: str = ""
    name: str = ""
    loader_id: str = ""
    world_ctx: int | None = None  # our isolated world in the frame's current document
    lifecycle: set[str] = field(default_factory=set)  # lifecycle events seen for loader_id
    # Documents replaced by the next one (a page's location.replace while it loads): old loader ->
    # new, so a wait for a document follows it to the one that took its place. The last few only.
    replaced_by: dict[str, str] = field(default_factory=dict)

    def new_document(self, loader_id: str) -> None:
        if self.loader_id:
            self.replaced_by[self.loader_id] = loader_id
            while len(self.replaced_by) > 8:
                del self.replaced_by[next(iter(self.replaced_by))]
        self.loader_id = loader_id
        self.lifecycle = set()

    def successor(self, loader_id: str) -> str:
        """The document that now stands where ``loader_id`` was (itself if not replaced)."""
        for _ in range(len(self.replaced_by)):
            if loader_id not in self.replaced_by:
                break
            loader_id = self.replaced_by[loader_id]
        return loader_id


@dataclass
class Dialog:
    type: str
    message: str
    default_prompt: str = ""
    url: str = ""
    handled: str = ""  # "accepted" / "dismissed" once answered

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type, "message": self.message}
        if self.default_prompt:
            out["defaultPrompt"] = self.default_prompt
        return out

class Tab(TabWorker):
    """One page target, attached over a flat session: its worker (``TabWorker``) and what the
    events of its sessions say of the page (frames, documents, dialogs, console)."""

    def __init__(self, conn: Connection, target_id: str, session_id: str, *, world: str,
                 world_script: str = "",
                 extra_setup: Callable[[bool], list[tuple[str, dict[str, Any]]]] | None = None,
                 network: NetworkOptions | None = None) -> None:
        super().__init__(conn, target_id, session_id)
        self.world_script = world_script
        self.extra_setup = extra_setup  # more per-session commands (stealth); its flag: an iframe's session
        self.world = world
        self.url = "about:blank"
        self.title = ""
        self.navigated = False  # the first navigation of a fresh tab drops about:blank from history
        self.frames: dict[str, Frame] = {}
        self.main_frame_id: str | None = None
        self.dialog = None
        self.last_dialog: Dialog | None = None  # the latest dialog, answered or not
        self.dialog_plan: tuple[bool, str] | None = None  # how to answer the next dialog (an action's dialogAction)
        self.auto_accept_dialogs = False
        self.console: collections.deque[dict[str, Any]] = collections.deque(maxlen=CONSOLE_RING)
        self.errors: collections.deque[dict[str, Any]] = collections.deque(maxlen=CONSOLE_RING)
        self.document_epoch = 0  # bumped when the main frame commits a new document
        self.nav_seq = 0  # bumped by every main-frame navigation, same-document ones included
        self.loads_started = 0  # bumped when the main frame starts a navigation to a new document
        self.started_loader = ""  # the loader of that navigation (its document, once it commits)
        self.state: dict[str, Any] = {}  # per-tab bookkeeping of higher layers (refs, last snapshot)
        self._install_handlers()
        self.network = NetworkLog(self, network or NetworkOptions())  # capture from the tab's first request
        self.intercept = Interceptor(self)  # the tab's one Fetch path: route rules and resource blocking
        self._thread.start()

    # --- sessions: the tab's own and its out-of-process iframes' -----------------------------------
    def session_setup(self, frame: bool = False) -> list[tuple[str, dict[str, Any]]]:
        """What every session of this tab enables, the tab's own and each out-of-process iframe's.

        Auto-attach pauses new iframe targets until they are set up (waitForDebuggerOnStart), so
        our world and the console capture are in place before their first script runs.
        """
        return [
            ("Page.enable", {}),
            ("Page.setLifecycleEventsEnabled", {"enabled": True}),
            ("Runtime.enable", {}),
            ("Page.addScriptToEvaluateOnNewDocument",
             {"source": self.world_script, "worldName": self.world, "runImmediately": True}),
            ("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True, "flatten": True}),
            *NetworkLog.setup_commands(),
            *(self.intercept.setup_commands() if frame else ()),
            *(self.extra_setup(frame) if self.extra_setup else ()),
        ]

    def _on_attached(self, session_id: str, p: dict[str, Any]) -> None:
        child = p.get("sessionId")
        info = p.get("targetInfo") or {}
        if not child:
            return
        if info.get("type") == "iframe":
            for method, params in self.session_setup(frame=True):
                self.send(method, params, child)  # not waited: we are mid-pump on the worker
            self.frame(info["targetId"], child).session_id = child
        # Anything else that auto-attached (workers) just runs; every target must be resumed.
        self.send("Runtime.runIfWaitingForDebugger", {}, child)

    # --- state kept from events ------------------------------------------------------------------
    def _install_handlers(self) -> None:
        self.on("Target.attachedToTarget", self._on_attached)
        self.on("Page.frameAttached", self._on_frame_attached)
        self.on("Page.frameNavigated", self._on_frame_navigated)
        self.on("Page.navigatedWithinDocument", self._on_within_document)
        self.on("Page.frameDetached", self._on_frame_detached)
        self.on("Page.lifecycleEvent", self._on_lifecycle)
        self.on("Page.frameStartedNavigating", self._on_started_navigating)
        self.on("Runtime.executionContextCreated", self._on_context_created)
        self.on("Runtime.executionContextDestroyed", self._on_context_destroyed)
        self.on("Runtime.executionContextsCleared", self._on_contexts_cleared)
        self.on("Page.javascriptDialogOpening", self._on_dialog_opening)
        self.on("Page.javascriptDialogClosed", self._on_dialog_closed)
        self.on("Runtime.consoleAPICalled", self._on_console)
        self.on("Runtime.exceptionThrown", self._on_exception)
        self.on("Target.detachedFromTarget", self._on_detached)
        self.on("Inspector.targetCrashed", self._on_crashed)

    def frame(self, frame_id: str, session_id: str | None = None) -> Frame:
        fr = self.frames.get(frame_id)
        if fr is None:
            fr = self.frames[frame_id] = Frame(frame_id, session_id or self.session_id)
        return fr

    def _on_frame_attached(self, session_id: str, p: dict[str, Any]) -> None:
        self.frame(p["frameId"], session_id).parent_id = p.get("parentFrameId")

    def _on_frame_navigated(self, session_id: str, p: dict[str, Any]) -> None:
        info = p["frame"]
        fr = self.frame(info["id"], session_id)
        fr.session_id = session_id  # a frame that moved to its own process is reached on its session now
        if info.get("parentId") or session_id == self.session_id:
            fr.parent_id = info.get("parentId")  # (an iframe's own session may not name its parent)
        fr.url = info.get("url", "") + info.get("urlFragment", "")
        fr.name = info.get("name", "")
        if info.get("loaderId") != fr.loader_id:
            fr.new_document(info.get("loaderId", ""))
        if fr.parent_id is None and session_id == self.session_id:
            self.main_frame_id = fr.frame_id
            self.url = fr.url
            self.document_epoch += 1
            self.nav_seq += 1

    def _on_within_document(self, session_id: str, p: dict[str, Any]) -> None:
        fr = self.frames.get(p["frameId"])
        if fr is not None:
            fr.url = p.get("url", fr.url)
            if fr.frame_id == self.main_frame_id:
                self.url = fr.url
                self.nav_seq += 1

    def _on_frame_detached(self, session_id: str, p: dict[str, Any]) -> None:
        # "swap" means the frame moved to another process (it becomes an out-of-process iframe).
        if p.get("reason") != "swap":
            self.frames.pop(p["frameId"], None)

    def _on_lifecycle(self, session_id: str, p: dict[str, Any]) -> None:
        fr = self.frame(p["frameId"], session_id)
        if p.get("loaderId") and p["loaderId"] != fr.loader_id:  # a new document is loading
            fr.new_document(p["loaderId"])
        fr.lifecycle.add(p.get("name", ""))

    def _on_started_navigating(self, session_id: str, p: dict[str, Any]) -> None:
        # Only navigations that will replace the document: a same-document one keeps every ref.
        if (p.get("frameId") == self.main_frame_id and session_id == self.session_id
                and p.get("navigationType") not in ("sameDocument", "historySameDocument")):
            self.loads_started += 1
            self.started_loader = p.get("loaderId", "")

    def _on_context_created(self, session_id: str, p: dict[str, Any]) -> None:
        ctx = p["context"]
        aux = ctx.get("auxData") or {}
        if ctx.get("name") == self.world and aux.get("frameId"):
            self.frame(aux["frameId"], session_id).world_ctx = ctx["id"]

    def _on_context_destroyed(self, session_id: str, p: dict[str, Any]) -> None:
        for fr in self.frames.values():
            if fr.world_ctx == p.get("executionContextId") and fr.session_id == session_id:
                fr.world_ctx = None

    def _on_contexts_cleared(self, session_id: str, p: dict[str, Any]) -> None:
        for fr in self.frames.values():
            if fr.session_id == session_id:
                fr.world_ctx = None

    def _on_dialog_opening(self, session_id: str, p: dict[str, Any]) -> None:
        dialog = Dialog(p.get("type", "unknown"), p.get("message", ""), p.get("defaultPrompt", ""), p.get("url", ""))
        self.last_dialog = dialog
        plan = self.dialog_plan or ((True, "") if self.auto_accept_dialogs else None)
        if plan is None:
            self.dialog = dialog  # left for POST /dialog; calls fail fast meanwhile
            return
        self.dialog_plan = None
        params: dict[str, Any] = {"accept": plan[0]}
        if plan[1]:
            params["promptText"] = plan[1]
        self.send("Page.handleJavaScriptDialog", params, session_id)  # not waited: we are mid-pump
        dialog.handled = "accepted" if plan[0] else "dismissed"

    def _on_dialog_closed(self, session_id: str, p: dict[str, Any]) -> None:
        if self.dialog is not None and not self.dialog.handled:
            self.dialog.handled = "accepted" if p.get("result") else "dismissed"
        self.dialog = None

    def _on_console(self, session_id: str, p: dict[str, Any]) -> None:
        parts = []
        for arg in p.get("args", []):
            if "value" in arg:
                parts.append(str(arg["value"]))
            else:
                parts.append(arg.get("description") or arg.get("type", ""))
        entry: dict[str, Any] = {"timestamp": _ms_iso(p.get("timestamp")), "level": p.get("type", "log"),
                                 "message": " ".join(parts)}
        frames = (p.get("stackTrace") or {}).get("callFrames") or []
        if frames and frames[0].get("url"):
            entry["source"] = frames[0]["url"]
        self.console.append(entry)

    def _on_exception(self, session_id: str, p: dict[str, Any]) -> None:
        d = p.get("exceptionDetails") or {}
        exc = d.get("exception") or {}
        entry: dict[str, Any] = {"timestamp": _ms_iso(p.get("timestamp")),
                                 "message": exc.get("description") or d.get("text", "")}
        for src, key in (("url", "url"), ("lineNumber", "line"), ("columnNumber", "column")):
            if d.get(src) not in (None, ""):
                entry[key] = d[src]
        self.errors.append(entry)

    def _on_detached(self, session_id: str, p: dict[str, Any]) -> None:
        if p.get("sessionId") == self.session_id:
            self.fail(TargetClosed(f"tab {self.id} was closed"))
        else:  # an out-of-process iframe or worker went away
            for fid in [f.frame_id for f in self.frames.values() if f.session_id == p.get("sessionId")]:
                self.frames.pop(fid, None)

    def _on_crashed(self, session_id: str, p: dict[str, Any]) -> None:
        if session_id == self.session_id:
            self.fail(TargetCrashed(f"tab {self.id} crashed; close it and open a new one"))


def _ms_iso(ts: float | None) -> str:
    """CDP timestamps (ms since epoch) as ISO 8601 UTC."""
    t = (ts / 1000.0) if ts else time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(t)) + f".{int((t % 1) * 1000):03d}Z"

