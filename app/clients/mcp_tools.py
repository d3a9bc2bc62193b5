"""The tools ``pinchtab mcp`` offers: the original PinchTab's 43, with its names and arguments,
and a few of ours (switch_tab, back, console, errors), in the order the tool list shows them.

Each tool is one or two REST calls. A tool that works on a tab takes ``tabId`` and then goes
through that tab's ``/tabs/{id}/...`` route (which also makes it the MCP agent's current tab);
without it, the agent's current tab. The schemas are written by hand, because the model reads
them on every turn and generated ones are longer and vaguer. They live by family:
:mod:`~app.clients.mcp_page_tools` (open, read and act on the page) and
:mod:`~app.clients.mcp_browser_tools` (tabs, waiting, network, recording, logs, scraping), with what
they share in :mod:`~app.clients.mcp_params`.

The model reads the tool list on every turn, so by default it lists only ``CORE``, the tools agents
use most, in fewer tokens than a peer's default list; ``pinchtab mcp --tools all`` lists every tool.
Every tool answers when called by name either way: clients written for the original call its
tools by name without reading the list.
"""
from __future__ import annotations

from .mcp_browser_tools import TOOLS as BROWSER_TOOLS
from .mcp_page_tools import TOOLS as PAGE_TOOLS
from .mcp_toolkit import ToolSpec

__all__ = ["CORE", "INSTRUCTIONS", "TOOLS", "TOOL_SETS", "instructions", "listed"]

INSTRUCTIONS = ("Drives a real browser. Loop: pinchtab_navigate, pinchtab_snapshot (lines like `e5 button Save`), "
                "then act by ref; pass snap=\"diff\" on an action to see what changed in the same call. "
                "Every tab tool takes tabId (default: your current tab).")
# Said when the list is the core one, so that a user can ask for the rest.
MORE = " More tools (network, recording, cookies, frames, PDF, scraping...): `pinchtab mcp --tools all`."

TOOLS: list[ToolSpec] = [*PAGE_TOOLS, *BROWSER_TOOLS]

# The default list: open, read, act, tabs, waits, dialogs, health (bench.bench_mcp measures its tokens).
# Hosts call what they list; an SDK client calling an unlisted tool lists the tools again first.
CORE = ("pinchtab_navigate", "pinchtab_snapshot", "pinchtab_screenshot", "pinchtab_get_text", "pinchtab_find",
        "pinchtab_click", "pinchtab_type", "pinchtab_fill", "pinchtab_press", "pinchtab_hover", "pinchtab_select",
        "pinchtab_scroll", "pinchtab_eval", "pinchtab_list_tabs", "pinchtab_switch_tab", "pinchtab_close_tab",
        "pinchtab_back", "pinchtab_wait_for_selector", "pinchtab_wait_for_text", "pinchtab_dialog", "pinchtab_health")
TOOL_SETS = ("core", "all")


def listed(which: str) -> list[str]:
    """The names the tool list shows for ``which`` (one of TOOL_SETS), in the list's order."""
    if which not in TOOL_SETS:
        raise ValueError(f"unknown tool set {which!r}; one of {', '.join(TOOL_SETS)}")
    return [s.name for s in TOOLS if which == "all" or s.name in CORE]


def instructions(which: str) -> str:
    """The server's instructions for a session whose list shows ``which``."""
    return INSTRUCTIONS + (MORE if which == "core" else "")
