"""Site QA: audit one page or a list of pages (broken assets, console, accessibility, timing,
interactive elements, a screenshot) in tabs of their own, opened and closed for the audit.

The report follows the original's audit schema (version 1.0): a page that cannot be loaded is an
entry with ``error``, never a failed request, and a collector that fails leaves its field empty
and says so in ``error`` while the others still report. A redirect is a navigation of its own: a
page that ended where the navigation policy would not have gone is such an entry too, and
nothing is collected from it.
"""
from __future__ import annotations

import base64
import contextlib
import logging
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from cdp import content, navigation, network, page_metrics, snapshot, waits
from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed
from cdp.tab import Tab
from profiles.times import utc_iso

from ..errors import APIError
from ..navigation_policy import NavigationPolicy
from .browser_state import BrowserState, Caller

log = logging.getLogger(__name__)

SCHEMA_VERSION = "1.0"
SCRATCH_AGENT = "pinchtab:site-tools"   # the tabs audits and scrapes open are nobody's current tab
COLLECT_TIMEOUT_S = 60.0
QUIET_CAP_S = 5.0   # late subresources (async fetches, lazy images) get this long to land
QUIET_S = 0.3       # ... and count as landed once the network has been quiet this long
INTERACTIVE = frozenset({"button", "link", "textbox", "searchbox", "combobox", "checkbox", "radio", "switch",
                         "slider", "spinbutton", "menuitem", "menuitemcheckbox", "menuitemradio", "tab", "option",
                         "listbox", "treeitem"})


@contextlib.contextmanager
def scratch_tab(state: BrowserState) -> Iterator[Tab]:
    """A tab for the tools' own use, closed afterwards; it never becomes anyone's current tab."""
    tab = state.new_tab(Caller(agent=SCRATCH_AGENT))
    state.agent_tabs.pop(SCRATCH_AGENT, None)
    try:
        yield tab
    finally:
        browser = state.browser
        if browser is not None:
            with contextlib.suppress(CDPError, CDPTimeout, BrowserGone, TargetClosed):
                browser.close_tab(tab.id)


def load(tab: Tab, url: str, timeout_s: float, quiet_s: float = QUIET_S) -> dict[str, Any]:
    """Navigate, then give late subresources a bounded moment; ``{url, title}``.

    Collectors see the whole page once nothing has been in flight for ``quiet_s``; a page that
    polls forever never gets there, so that is waited for ``QUIET_CAP_S`` at most, not required.
    """
    def go() -> dict[str, Any]:
        info = navigation.navigate(tab, url, timeout_s=timeout_s, wait_for="load")
        waits.poll(tab, lambda: tab.network.idle_for() >= quiet_s, QUIET_CAP_S, interval_s=0.05)
        return info

    return tab.run(go, timeout_s + QUIET_CAP_S + 2)


def refused_landing(policy: NavigationPolicy, url: str) -> str:
    """Why a page that ended on ``url`` (after its redirects) must not be used, or "" when it may."""
    try:
        policy.check(url)
    except APIError as refused:
        return f"the page ended on {url}, which the navigation policy refuses: {refused.message}"
    return ""


def _interactive(tab: Tab) -> list[dict[str, Any]]:
    nodes = snapshot.take(tab, filter="interactive")
    return [{"ref": n["ref"], "role": n["role"], "name": n.get("name", ""), "visible": True}
            for n in nodes if n.get("role") in INTERACTIVE]


def audit_page(state: BrowserState, url: str, options: dict[str, bool]) -> dict[str, Any]:
    """The audit of one page (``url``, ``title``, ``error``, and what ``options`` turn on)."""
    page: dict[str, Any] = {"url": url}
    timeout_s = float(state.config.timeouts.navigate_sec)
    try:
        with scratch_tab(state) as tab:
            try:
                info = load(tab, url, timeout_s)
            except Exception as exc:  # a page that cannot load is a finding, not a failure
                page["error"] = f"navigation failed: {exc}"
                return page
            if info["url"].startswith("chrome-error://"):
                page["error"] = f"navigation failed: {url} could not be loaded"
                return page
            refused = refused_landing(state.navigation, info["url"])
            if refused:
                page["error"] = refused
                return page
            page["title"] = info["title"]
            page.update(_collect(tab, options))
            status = next((e.get("status") for e in page.get("networkRequests", [])
                           if str(e.get("resourceType", "")).lower() == "document" and e.get("status")), None)
            if status:
                page["statusCode"] = status
    except (BrowserGone, TargetClosed) as exc:
        page["error"] = f"browser: {exc}"
    return page


def _collect(tab: Tab, options: dict[str, bool]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    errors: list[str] = []

    def run(stage: str, fn: Callable[[], Any]) -> Any:
        try:
            return tab.run(fn, COLLECT_TIMEOUT_S)
        except Exception as exc:  # one collector failing leaves the others' findings standing
            errors.append(f"{stage}: {exc}")
            return None

    if options["console"]:
        out["consoleLogs"] = list(tab.console)
    if options["network"]:
        entries = tab.network.entries()
        out["networkRequests"] = entries
        out["brokenAssets"] = broken_assets(entries)
    if options["elements"]:
        elements = run("snapshot", lambda: _interactive(tab))
        if elements is not None:
            out["interactiveElements"] = elements
    if options["a11y"]:
        report = run("a11y", lambda: page_metrics.a11y_audit(tab))
        if report is not None:
            out["accessibilityScore"] = report["score"]
            out["a11yFindings"] = report["findings"]
    if options["timing"]:
        timing = run("timing", lambda: page_metrics.timing(tab))
        out["timingMetrics"] = {k: timing[k] for k in ("ttfbMs", "domContentLoadedMs", "loadMs", "fcpMs", "lcpMs",
                                                       "cls")} if timing else {}
    if options["screenshot"]:
        png = run("screenshot", lambda: content.screenshot(tab, fmt="png"))
        if png is not None:
            out["screenshot"] = base64.b64encode(png).decode()
    if errors:
        out["error"] = "; ".join(errors)
    return out


def broken_assets(entries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The failed requests and those answered 400 and above, in the audit schema's shape."""
    out = []
    for b in network.broken(entries):
        item = {"url": b["url"], "resourceType": b["resourceType"]}
        if b["statusCode"]:
            item["status"] = b["statusCode"]
        if b.get("error"):
            item["error"] = b["error"]
        out.append(item)
    return out


def page_score(page: dict[str, Any]) -> int:
    """One page's 0-100 health: its accessibility score, less 5 per broken asset and 2 per console
    error; 0 for a page that did not load."""
    if "title" not in page and page.get("error"):
        return 0
    score = page.get("accessibilityScore", 100)
    score -= 5 * len(page.get("brokenAssets", []))
    score -= 2 * sum(1 for c in page.get("consoleLogs", []) if c.get("level") == "error")
    return max(0, min(100, int(score)))


def recommendations(pages: list[dict[str, Any]]) -> list[str]:
    """What to fix first, in plain words, from the pages' findings."""
    out = []
    failed = [p["url"] for p in pages if "title" not in p and p.get("error")]
    if failed:
        out.append(f"{len(failed)} page(s) did not load: {', '.join(failed[:3])}")
    broken = sum(len(p.get("brokenAssets", [])) for p in pages)
    if broken:
        out.append(f"Fix {broken} broken asset(s) (failed requests or HTTP status >= 400)")
    rules: dict[str, int] = {}
    for p in pages:
        for f in p.get("a11yFindings", []):
            rules[f["rule"]] = rules.get(f["rule"], 0) + f["count"]
    for rule, count in sorted(rules.items(), key=lambda kv: -kv[1]):
        out.append(f"Accessibility: {count} × {rule}")
    errors = sum(1 for p in pages for c in p.get("consoleLogs", []) if c.get("level") == "error")
    if errors:
        out.append(f"{errors} console error(s) while loading")
    return out


def site_report(pages: list[dict[str, Any]], source: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """The versioned report of ``POST /audit``: pages, a summary score, recommendations."""
    results = []
    for p in pages:
        browser = {k: v for k, v in p.items() if k not in ("url", "title", "statusCode", "error", "a11yFindings")}
        entry: dict[str, Any] = {"url": p["url"], "browser": browser}
        for key in ("title", "statusCode", "error"):
            if key in p:
                entry[key] = p[key]
        results.append(entry)
    scores = [page_score(p) for p in pages]
    return {
        "schemaVersion": SCHEMA_VERSION, "generatedAt": utc_iso(), "input": source, "options": options,
        "pages": results, "summaryScore": round(sum(scores) / len(scores)) if scores else 0,
        "recommendations": recommendations(pages),
    }


def audit_site(state: BrowserState, urls: list[str], options: dict[str, bool],
               concurrency: int) -> list[dict[str, Any]]:
    """Audit ``urls``, ``concurrency`` pages at a time, in the order given."""
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="audit") as pool:
        return list(pool.map(lambda u: audit_page(state, u, options), urls))


_LOC = re.compile(r"<loc>\s*([^<\s]+)\s*</loc>", re.I)


def sitemap_urls(state: BrowserState, sitemap_url: str, limit: int) -> list[str]:
    """The page URLs a sitemap lists (its ``<loc>`` entries), read through the browser."""
    with scratch_tab(state) as tab:
        info = load(tab, sitemap_url, float(state.config.timeouts.navigate_sec))
        state.navigation.check(info["url"], "sitemapUrl")  # where a redirect took it: refused like the URL itself
        source = tab.run(lambda: tab.call("Runtime.evaluate", {
            "expression": "new XMLSerializer().serializeToString(document)", "returnByValue": True,
        })["result"].get("value") or "", 10.0)
    seen: list[str] = []
    for loc in _LOC.findall(source):
        loc = loc.replace("&amp;", "&")
        if loc not in seen:
            seen.append(loc)
    return seen[:limit]
