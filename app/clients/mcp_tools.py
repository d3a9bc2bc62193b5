"""The tools ``pinchtab mcp`` offers: the original PinchTab's 43, with its names and arguments,
and a few of ours (switch_tab, back, console, errors), in the order the tool list shows them.

Each tool is one or two REST calls. A tool that works on a tab takes ``tabId`` and then goes
through that tab's ``/tabs/{id}/...`` route (which also makes it the MCP agent's current tab);
without it, the agent's current tab. The schemas are written by hand, because the model reads
them on every turn and generated ones are longer and vaguer. They live by family:
:mod:`~app.clients.mcp_page_tools` (open, read and act on the page) and
:mod:`~app.clients.mcp_browser_tools` (tabs, waiting, network, recording, logs, scraping), with what
they share in :mod:`~app.clients.mcp_params`.
"""
from __future__ import annotations

from .mcp_browser_tools import TOOLS as BROWSER_TOOLS
from .mcp_page_tools import TOOLS as PAGE_TOOLS
from .mcp_toolkit import ToolSpec

__all__ = ["INSTRUCTIONS", "TOOLS"]

INSTRUCTIONS = ("Drives a real browser. Loop: pinchtab_navigate, pinchtab_snapshot (lines like `e5 button Save`), "
                "then act by ref; pass snap=\"diff\" on an action to see what changed in the same call. "
                "Every tab tool takes tabId (default: your current tab).")

TOOLS: list[ToolSpec] = [*PAGE_TOOLS, *BROWSER_TOOLS]
