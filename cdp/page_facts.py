"""What a scraper keeps of a page (``scripts/page_facts.js``): from the rendered document, or from
an HTML text fetched over HTTP and parsed without running it."""
from __future__ import annotations

import json
from typing import Any

from .browser import page_script
from .page import evaluate, main_frame
from .tab import Tab


def rendered(tab: Tab) -> dict[str, Any]:
    """Title, meta, JSON-LD, links and Markdown of the tab's document as it stands."""
    expr = f"({page_script('page_facts.js')})(document, location.href)"
    result: dict[str, Any] = evaluate(tab, main_frame(tab), expr, timeout_s=tab.remaining(15.0))
    return result


def parsed(tab: Tab, html: str, url: str, timeout_s: float = 20.0) -> dict[str, Any]:
    """The same facts of an HTML text fetched from ``url``, parsed by the tab's page and never run
    (a DOMParser document runs no script and loads nothing)."""
    expr = (f"({page_script('page_facts.js')})"
            f"(new DOMParser().parseFromString({json.dumps(html)}, 'text/html'), {json.dumps(url)})")
    result: dict[str, Any] = evaluate(tab, main_frame(tab), expr, timeout_s=tab.remaining(timeout_s))
    return result
