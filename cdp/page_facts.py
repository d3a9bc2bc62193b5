"""What a scraper keeps of a page (``scripts/page_facts.js``): from the rendered document, or from
a same-origin document fetched by the page and parsed without running it."""
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


def fetched(tab: Tab, url: str, timeout_s: float) -> dict[str, Any]:
    """``url`` fetched by the tab's page (its cookies; same origin as the page) and parsed unrendered.

    ``{status, contentType, url, facts}``; ``facts`` is None for a body that is not HTML.
    """
    expr = (
        "(async () => {"
        f" const r = await fetch({json.dumps(url)}, {{credentials: 'include', redirect: 'follow'}});"
        " const type = r.headers.get('content-type') || '';"
        " const html = /html/i.test(type) ? await r.text() : '';"
        f" const facts = html ? ({page_script('page_facts.js')})"
        "(new DOMParser().parseFromString(html, 'text/html'), r.url) : null;"
        " return {status: r.status, contentType: type, url: r.url, facts};"
        "})()"
    )
    result: dict[str, Any] = evaluate(tab, main_frame(tab), expr, await_promise=True, timeout_s=timeout_s)
    return result
