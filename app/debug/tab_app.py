"""The CDP side of the debug bridge: the bridge itself is the debug app of a tab, with no SDK in the page.

``TabApp`` listens to the tab's CDP events on the tab's worker and turns them into the protocol's
telemetry: console (argument previews from the event itself, no round trip), errors and unhandled
rejections, network (fetch and XHR, as the SDK reports), navigation, and DOM mutations from an
observer (``static/tab_observer.js``) in an isolated world of its own, installed before page
scripts and reporting through a binding only that world can see. Commands run on the tab's worker
through our action engine (``tab_commands.py``); the caller never waits for them.

Everything is emitted from the tab's worker, so messages keep the order the page produced them.
``stop`` removes the script, the binding, the handlers and the observer: the tab is as it was.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from importlib import resources
from typing import Any

from cdp.errors import CDPError, CDPTimeout, DialogBlocking
from cdp.page import evaluate
from cdp.tab import Tab

from ..web import untrusted_json
from . import protocol
from .previews import console_args
from .tab_commands import Commands

log = logging.getLogger(__name__)

WORLD = "__pinchtab_debug"            # the observer's isolated world (not cdp's, so stop can leave it idle)
BINDING = "__pinchtabDebugReport"     # exposed in WORLD only: the page never sees it
HANDLE = "__pinchtabDebugObserver"    # the observer's handle in WORLD, for stop()
SETUP_TIMEOUT_S = 10.0
COMMAND_TIMEOUT_S = 60.0
BATCH_S = 0.1                         # dom_mutations batches, as the SDK's domMutationBatchMs
MAX_BATCH = 500                       # records a batch carries; the rest are counted in "dropped"
GREETING_WAIT_S = 1.0                 # a new document's hello waits this long for its title (DOMContentLoaded)
NETWORK_TYPES = {"Fetch": "fetch", "XHR": "xhr"}   # what the SDK reports: the app's own requests
NETWORK_TRACKED = 1000                # requests awaiting their response, at most (the oldest forgotten)
BODY_CHARS = 10_000                   # the SDK's maxNetworkBodySize default
CONSOLE_LEVELS = {"log": "log", "info": "info", "warning": "warn", "warn": "warn", "error": "error",
                  "debug": "debug"}
CAPABILITIES = ("console", "errors", "network", "navigation", "dom_mutations", "ui_tree", "dom_snapshot",
                "custom_state")

Emit = Callable[[dict[str, Any]], None]


def observer_script() -> str:
    """The observer, with our binding's and handle's names filled in."""
    text = resources.files("app.debug.static").joinpath("tab_observer.js").read_text(encoding="utf-8")
    return text.replace("__BINDING__", BINDING).replace("__HANDLE__", HANDLE)


class TabApp:
    """The debug app of one tab, over CDP. ``start`` greets, ``command`` queues, ``stop`` cleans up."""

    def __init__(self, tab: Tab, session_id: str, app_id: str, emit: Emit, *, check_url: Callable[[str], str],
                 allow_eval: bool = False) -> None:
        self.tab = tab
        self.session_id = session_id
        self.app_id = app_id
        self.allow_eval = allow_eval
        self.check_url = check_url  # the navigation policy, for navigate (see tab_commands.DebugApp)
        self._emit_fn = emit
        self._stopped = threading.Event()
        self._script_id: str | None = None
        self._handlers: list[tuple[str, Callable[[str, dict[str, Any]], None]]] = []
        self._url = ""
        self._user_agent = ""
        self._batch = 0
        # Mutation records since the last batch (touched on the tab's worker only); a timer thread
        # queues the flush on the worker, so batches keep their place among the other messages.
        self._mutations: list[dict[str, Any]] = []
        self._mutations_dropped = 0
        self._flush_timer: threading.Timer | None = None
        self._world_ctx: dict[str, int] = {}   # session id -> our world's context in its top document
        self._requests: OrderedDict[str, tuple[float, str]] = OrderedDict()   # CDP requestId -> (start, url)
        self._greeted_loader = ""
        self.commands = Commands(self)

    # --- lifecycle -----------------------------------------------------------------------------------
    def start(self) -> None:
        """Install the listeners, the binding and the observer; emit hello, capabilities, navigation.

        Raises what the tab raised (closed, a dialog blocking it, a timeout), having removed
        whatever it had installed by then.
        """
        try:
            self.tab.run(self._install, SETUP_TIMEOUT_S)
        except Exception:
            self._stopped.set()
            if self.tab.closed is None:
                try:
                    self.tab.run(self._uninstall, SETUP_TIMEOUT_S)
                except Exception:  # the first error is the one to report
                    log.debug("debug: tab %s: cleaning up a failed start failed", self.tab.id[:8])
            raise

    def stop(self) -> None:
        """Remove everything ``start`` added (no message is emitted after this returns)."""
        self._stopped.set()
        if self._flush_timer is not None:
            self._flush_timer.cancel()
        if self.tab.closed is None:
            self.tab.run(self._uninstall, SETUP_TIMEOUT_S)

    def command(self, msg: dict[str, Any]) -> None:
        """Queue one parsed protocol command on the tab's worker; its result is emitted when done."""
        if self._stopped.is_set() or msg.get("type") not in protocol.COMMAND_TYPES:
            return  # connection events and other frames the hub hands every app
        try:
            self.tab.submit(lambda: self.commands.run(msg), COMMAND_TIMEOUT_S)
        except Exception as exc:  # the tab is gone (TargetClosed): say so rather than never answer
            self.emit(protocol.command_result(self.session_id, msg["requestId"], msg["type"], success=False,
                                              duration_ms=0, error_code="UNKNOWN_ERROR", message=str(exc)))

    # --- on the worker -------------------------------------------------------------------------------
    def _install(self) -> None:
        t = self.tab
        for method, handler in (
            ("Runtime.consoleAPICalled", self.handle_console),
            ("Runtime.exceptionThrown", self.handle_exception),
            ("Runtime.bindingCalled", self.handle_binding),
            ("Runtime.executionContextCreated", self.handle_context),
            ("Page.frameNavigated", self.handle_frame_navigated),
            ("Network.requestWillBeSent", self.handle_request),
            ("Network.responseReceived", self.handle_response),
            ("Network.loadingFailed", self.handle_failed),
        ):
            t.on(method, handler)
            self._handlers.append((method, handler))
        # Network events need no enabling (nor disabling after): every tab captures them from its creation.
        t.call("Runtime.addBinding", {"name": BINDING, "executionContextName": WORLD})
        self._script_id = t.call("Page.addScriptToEvaluateOnNewDocument", {
            "source": observer_script(), "worldName": WORLD, "runImmediately": True})["identifier"]
        main = t.frames.get(t.main_frame_id or "")
        self._greeted_loader = main.loader_id if main else ""
        self._greet(initial=True)

    def _uninstall(self) -> None:
        t = self.tab
        for method, handler in self._handlers:
            t.off(method, handler)
        self._handlers.clear()
        steps: list[tuple[str, dict[str, Any], str | None]] = [
            ("Runtime.removeBinding", {"name": BINDING}, None),
        ]
        if self._script_id:
            steps.append(("Page.removeScriptToEvaluateOnNewDocument", {"identifier": self._script_id}, None))
            self._script_id = None
        for session_id, ctx in self._world_ctx.items():
            steps.append(("Runtime.evaluate", {"expression": f"globalThis.{HANDLE} && globalThis.{HANDLE}.stop()",
                                               "contextId": ctx}, session_id))
        for method, params, session_id in steps:
            try:
                t.call(method, params, session_id=session_id, timeout_s=5.0)
            except (CDPError, CDPTimeout, DialogBlocking):
                pass  # a context gone with its document leaves nothing behind
        self._world_ctx.clear()

    def emit(self, msg: dict[str, Any]) -> None:
        if self._stopped.is_set():
            return
        try:
            self._emit_fn(msg)
        except Exception:  # a broken consumer must not break the tab's worker
            log.exception("debug: tab %s: emitting %s failed", self.tab.id[:8], msg.get("type"))

    def send(self, type: str, **fields: Any) -> None:
        """Emit one app -> agent message of ``type``."""
        self.emit(protocol.envelope(self.session_id, type, **fields))

    def _greet(self, *, initial: bool) -> None:
        """hello, capabilities, then navigation ``initial`` for the tab's current document."""
        main = self.tab.frames.get(self.tab.main_frame_id or "")
        try:
            if main is None:
                raise ValueError("no main frame yet")
            # Read in our isolated world: the page's own getters cannot lie to it.
            url, title, agent, width, height = evaluate(
                self.tab, main, "[location.href, document.title, navigator.userAgent, innerWidth, innerHeight]")
        except (CDPError, CDPTimeout, DialogBlocking, TypeError, ValueError):
            url, title, agent, width, height = self.tab.url, self.tab.title, self._user_agent, 0, 0
        self._user_agent = agent or self._user_agent
        hello: dict[str, Any] = {"url": url, "userAgent": self._user_agent,
                                 "viewport": {"width": width, "height": height}}
        if title:
            hello["appName"] = title
        self.send("hello", **hello)
        caps = list(CAPABILITIES) + (["eval"] if self.allow_eval else [])
        self.send("capabilities", capabilities=caps)
        previous = self._url
        self._url = url
        nav: dict[str, Any] = {"url": url, "trigger": "initial"}
        if previous and not initial:
            nav["previousUrl"] = previous
        self.send("navigation", **nav)

    def _greet_new_document(self, loader_id: str) -> None:
        """A job: once the new document has its title (or a second passed), say hello again."""
        if self._stopped.is_set():
            return
        t = self.tab

        def parsed() -> bool:
            main = t.frames.get(t.main_frame_id or "")
            return main is None or main.loader_id != loader_id or "DOMContentLoaded" in main.lifecycle

        t.wait_for(parsed, GREETING_WAIT_S)
        main = t.frames.get(t.main_frame_id or "")
        if main is not None and main.loader_id != loader_id:
            return  # replaced already: that document greets for itself
        self._greet(initial=False)

    # --- event handlers (on the worker) --------------------------------------------------------------
    def handle_console(self, session_id: str, p: dict[str, Any]) -> None:
        level = CONSOLE_LEVELS.get(p.get("type", "log"), "log")
        self.send("console", level=level, args=console_args(p.get("args") or []))

    def handle_exception(self, session_id: str, p: dict[str, Any]) -> None:
        d = p.get("exceptionDetails") or {}
        exc = d.get("exception") or {}
        rejection = d.get("text", "").startswith("Uncaught (in promise)")
        description = exc.get("description")
        if description is None and "value" in exc:
            description = str(exc["value"])
        text = description or d.get("text") or "Uncaught error"
        frames = (d.get("stackTrace") or {}).get("callFrames") or []
        msg: dict[str, Any] = {"errorType": "unhandledrejection" if rejection else "runtime",
                               "message": text.split("\n")[0]}
        if description and "\n" in description:
            msg["stack"] = description
        elif frames:
            msg["stack"] = "\n".join(f"    at {f.get('functionName') or '<anonymous>'} "
                                     f"({f.get('url')}:{f.get('lineNumber', 0) + 1}:{f.get('columnNumber', 0) + 1})"
                                     for f in frames)
        filename = d.get("url") or (frames[0].get("url") if frames else "")
        if filename:
            msg["filename"] = filename
        if d.get("lineNumber") is not None:
            msg["lineno"] = int(d["lineNumber"]) + 1   # CDP counts from 0, ErrorEvent from 1
            msg["colno"] = int(d.get("columnNumber") or 0) + 1
        self.send("error", **msg)

    def handle_binding(self, session_id: str, p: dict[str, Any]) -> None:
        if p.get("name") != BINDING:
            return
        try:
            report = untrusted_json.loads(p.get("payload") or "")
        except ValueError:
            return
        kind = report.get("kind") if isinstance(report, dict) else None
        if kind == "mutations":
            records = report.get("mutations") or []
            room = max(0, MAX_BATCH - len(self._mutations))
            self._mutations += records[:room]
            self._mutations_dropped += len(records) - len(records[:room]) + int(report.get("dropped") or 0)
            if self._flush_timer is None:
                self._flush_timer = threading.Timer(BATCH_S, self._queue_flush)
                self._flush_timer.daemon = True
                self._flush_timer.start()
        elif kind == "navigation" and session_id == self.tab.session_id:
            self._url = str(report.get("url", ""))
            self.send("navigation", url=self._url, previousUrl=report.get("previousUrl"),
                      trigger=report.get("trigger", "pushstate"))

    def _queue_flush(self) -> None:
        """On the timer's thread: the batch is due; the worker sends it."""
        if self._stopped.is_set():
            return
        try:
            self.tab.submit(self._flush_mutations, SETUP_TIMEOUT_S)
        except Exception as exc:  # the tab has closed: nobody is left to tell (the kind of error only)
            log.debug("debug: tab %s: mutation batch not sent (%s)", self.tab.id[:8], type(exc).__name__)

    def _flush_mutations(self) -> None:
        self._flush_timer = None
        if not self._mutations and not self._mutations_dropped:
            return
        self._batch += 1
        fields: dict[str, Any] = {"batchId": self._batch, "mutations": self._mutations}
        if self._mutations_dropped:
            fields["dropped"] = self._mutations_dropped   # ours: records past the batch's cap
        self._mutations, self._mutations_dropped = [], 0
        self.send("dom_mutations", **fields)

    def handle_context(self, session_id: str, p: dict[str, Any]) -> None:
        ctx = p.get("context") or {}
        aux = ctx.get("auxData") or {}
        if (ctx.get("name") == WORLD and session_id == self.tab.session_id
                and aux.get("frameId") == self.tab.main_frame_id):
            self._world_ctx[session_id] = ctx["id"]

    def handle_frame_navigated(self, session_id: str, p: dict[str, Any]) -> None:
        info = p.get("frame") or {}
        if session_id != self.tab.session_id or info.get("parentId") or info.get("id") != self.tab.main_frame_id:
            return
        loader = info.get("loaderId", "")
        if loader and loader != self._greeted_loader:
            self._greeted_loader = loader
            self._world_ctx.pop(session_id, None)
            self.tab.submit(lambda: self._greet_new_document(loader), SETUP_TIMEOUT_S)

    def handle_request(self, session_id: str, p: dict[str, Any]) -> None:
        initiator = NETWORK_TYPES.get(p.get("type", ""))
        if initiator is None:
            return
        request = p.get("request") or {}
        rid = p["requestId"]
        self._requests[rid] = (float(p.get("timestamp") or time.monotonic()), request.get("url", ""))
        while len(self._requests) > NETWORK_TRACKED:
            self._requests.popitem(last=False)
        if p.get("redirectResponse"):
            return  # the same request, followed to its new URL: one request for the app
        msg: dict[str, Any] = {"requestId": rid, "method": request.get("method", "GET"),
                               "url": request.get("url", ""), "initiator": initiator}
        body = request.get("postData")
        if body:
            msg["body"] = body[:BODY_CHARS]
        self.send("network_request", **msg)

    def handle_response(self, session_id: str, p: dict[str, Any]) -> None:
        known = self._requests.pop(p.get("requestId", ""), None)
        if known is None:
            return
        r = p.get("response") or {}
        status = int(r.get("status") or 0)
        self.send("network_response", requestId=p["requestId"], status=status, statusText=r.get("statusText", ""),
                  duration=_duration_ms(known[0], p.get("timestamp")), ok=200 <= status < 300)

    def handle_failed(self, session_id: str, p: dict[str, Any]) -> None:
        known = self._requests.pop(p.get("requestId", ""), None)
        if known is None:
            return  # not ours, or answered already (a body cut short after its headers)
        self.send("network_response", requestId=p["requestId"], status=0,
                  statusText=p.get("errorText") or ("canceled" if p.get("canceled") else "failed"),
                  duration=_duration_ms(known[0], p.get("timestamp")), ok=False)


def _duration_ms(start_s: float, end_s: float | None) -> float:
    """CDP's network timestamps are monotonic seconds."""
    if end_s is None:
        return 0.0
    return round(max(0.0, float(end_s) - start_s) * 1000, 3)
