"""How a page performs and how accessible it is: load timing and Web Vitals, the renderer's own
counters, the browser's memory, and a deterministic accessibility check.

The page-side parts are scripts in ``scripts/`` evaluated in our isolated world of the main frame;
they read the document's performance timeline and DOM, which that world shares with the page.
"""
from __future__ import annotations

import os
from typing import Any

from .browser import page_script
from .connection import Connection
from .errors import CDPError
from .page import evaluate, main_frame
from .tab import Tab

_MB = 1024 * 1024
# Performance.getMetrics names worth an agent's attention, under the names we answer with.
_COUNTERS = {
    "Documents": "documents", "Frames": "frames", "JSEventListeners": "jsEventListeners", "Nodes": "nodes",
    "LayoutCount": "layoutCount", "RecalcStyleCount": "recalcStyleCount", "LayoutDuration": "layoutDurationSec",
    "RecalcStyleDuration": "recalcStyleDurationSec", "ScriptDuration": "scriptDurationSec",
    "TaskDuration": "taskDurationSec", "JSHeapUsedSize": "jsHeapUsedBytes", "JSHeapTotalSize": "jsHeapTotalBytes",
}



def timing(tab: Tab) -> dict[str, Any]:
    """Navigation timing, FCP, LCP and CLS of the tab's document (see ``scripts/timing.js``)."""
    result: dict[str, Any] = evaluate(tab, main_frame(tab), page_script("timing.js"), await_promise=True,
                                      timeout_s=tab.remaining(5.0))
    return result


def a11y_audit(tab: Tab) -> dict[str, Any]:
    """``{score, findings: [{rule, severity, count, samples}]}``; a clean page scores 100."""
    result: dict[str, Any] = evaluate(tab, main_frame(tab), page_script("a11y_audit.js"),
                                      timeout_s=tab.remaining(10.0))
    return result


def counters(tab: Tab) -> dict[str, Any]:
    """The renderer's counters for this tab: DOM nodes, listeners, layouts, script time, JS heap."""
    tab.call("Performance.enable", {"timeDomain": "timeTicks"})
    raw = {m["name"]: m["value"] for m in tab.call("Performance.getMetrics")["metrics"]}
    out: dict[str, Any] = {}
    for name, key in _COUNTERS.items():
        if name in raw:
            value = raw[name]
            out[key] = round(value, 4) if key.endswith("Sec") else int(value)
    return out


def browser_memory(conn: Connection, timeout_s: float = 5.0) -> dict[str, Any]:
    """The browser's processes and the memory they hold.

    Chrome names its processes (browser, renderers, GPU, utilities) over CDP; their resident memory
    is read from /proc, so ``memoryMB`` is known only when the browser runs on this machine (it is
    None for a remote or extension-relayed browser, whose process ids mean nothing here).
    """
    try:
        procs = conn.call("SystemInfo.getProcessInfo", None, None, timeout_s).get("processInfo", [])
    except CDPError:
        procs = []   # not every browser exposes it (a relayed one): say what we know
    page_size = os.sysconf("SC_PAGE_SIZE")
    resident, seen = 0, 0
    for p in procs:
        try:
            with open(f"/proc/{int(p['id'])}/statm", "rb") as fh:
                resident += int(fh.read().split()[1]) * page_size
            seen += 1
        except (OSError, ValueError, IndexError, KeyError):
            continue
    return {
        "memoryMB": round(resident / _MB, 1) if seen else None,
        "processCount": len(procs),
        "renderers": sum(1 for p in procs if p.get("type") == "renderer"),
    }


def heap_mb(heaps: list[dict[str, Any]]) -> dict[str, float]:
    """Per-tab counters summed into the JS heap totals, in MB."""
    used = sum(h.get("jsHeapUsedBytes", 0) for h in heaps)
    total = sum(h.get("jsHeapTotalBytes", 0) for h in heaps)
    return {"jsHeapUsedMB": round(used / _MB, 2), "jsHeapTotalMB": round(total / _MB, 2)}
