"""A tab's load state, open dialog and whether actions can run, read from tracked state only.

No CDP call: ``page_state`` reads what the tab's event handlers already recorded, so it answers
from any thread while a dialog blocks the page or the worker is busy.
"""
from __future__ import annotations

from typing import Any

from .tab import Tab


def page_state(tab: Tab) -> dict[str, Any]:
    """The tab's load state, dialog and actionability, from tracked state only (no CDP call).

    Safe to call from any thread: it reads what the worker's event handlers recorded.
    """
    main = tab.frames.get(tab.main_frame_id or "")
    life = main.lifecycle if main is not None else set()
    if "load" in life:
        ready = "complete"
    elif "DOMContentLoaded" in life:
        ready = "interactive"
    else:
        ready = "loading"
    # The latest milestone the main document reached, in the words waitFor uses.
    state = ("networkidle" if "networkIdle" in life and ready == "complete" else
             {"complete": "load", "interactive": "domcontentloaded", "loading": "loading"}[ready])
    navigating = ready == "loading"
    dialog = tab.dialog
    out: dict[str, Any] = {"tabId": tab.id, "url": tab.url, "title": tab.title, "dialogPresent": dialog is not None}
    if dialog is not None:
        out["dialog"] = dialog.to_dict()
    out["load"] = {"readyState": ready, "navigationInProgress": navigating, "state": state}
    out["actionability"] = "blocked" if dialog is not None else ("ready" if ready == "complete" else "caution")
    return out
