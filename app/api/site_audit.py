"""Site QA: audit one page or a list of pages (broken assets, console, accessibility, timing,
interactive elements, security findings, a screenshot) in tabs of their own, opened and closed for
the audit.

The report follows the original's audit schema (version 1.0): a page that cannot be loaded is an
entry with ``error``, never a failed request, and a collector that fails leaves its field empty
and says so in ``error`` while the others still report. A redirect is a navigation of its own: a
page that ended where the navigation policy would not have gone is such an entry too, and
nothing is collected from it. Which pages are visited (sampling, SeaPortal routing) is
``audit_plan``; what is concluded from them (security findings, the summary score) ``audit_rules``.
"""
from __future__ import annotations

import base64
import contextlib
import logging
import re
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from cdp import content, navigation, network, page_metrics, snapshot, waits
from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed
from cdp.page import evaluate, main_frame
from cdp.tab import Tab
from profiles.times import utc_iso

from ..policy.navigation import NavigationPolicy
from ..web.errors import APIError, BadRequest
from . import audit_plan, audit_rules
from .audit_plan import SeaportalPage
from .browser_state import BrowserState, Caller
from .progress import Progress

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
    # An element without an accessible name has no "name" at all, as in the original's schema.
    return [{"ref": n["ref"], "role": n["role"], **({"name": n["name"]} if n.get("name") else {}), "visible": True}
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
            page.update(_collect(tab, url, info["title"], options))
            status = next((e.get("status") for e in page.get("networkRequests", [])
                           if str(e.get("resourceType", "")).lower() == "document" and e.get("status")), None)
            if status:
                page["statusCode"] = status
    except (BrowserGone, TargetClosed) as exc:
        page["error"] = f"browser: {exc}"
    return page


def _collect(tab: Tab, url: str, title: str, options: dict[str, bool]) -> dict[str, Any]:
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
    if options["security"]:
        facts = run("security", lambda: evaluate(tab, main_frame(tab), audit_rules.FORM_FACTS_JS,
                                                 timeout_s=tab.remaining(10.0)))
        found = audit_rules.security_findings(url, title, out.get("networkRequests") or tab.network.entries(),
                                              facts if isinstance(facts, dict) else None)
        if found:
            out["securityFindings"] = found
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


@dataclass
class PlannedPage:
    """One page of a run: where to go, whether the browser audits it, and its SeaPortal summary."""

    url: str
    enrich: bool = True
    seaportal: SeaportalPage | None = None
    refused: str = ""   # why the navigation policy will not let the browser go there ("" when it may)


def report_entry(page: dict[str, Any]) -> dict[str, Any]:
    """A page of ``POST /audit``'s report: url, title, error, screenshot and security findings at the
    top, what the browser collected under ``browser`` (the original's PageResult)."""
    top = ("url", "title", "statusCode", "error", "screenshot", "securityFindings", "a11yFindings")
    entry: dict[str, Any] = {"url": page["url"]}
    for key in ("title", "error", "screenshot", "securityFindings"):
        if page.get(key):
            entry[key] = page[key]
    entry["browser"] = {k: v for k, v in page.items() if k not in top}
    return entry


def run_plan(state: BrowserState, plan: list[PlannedPage], options: dict[str, bool],
             concurrency: int, progress: Progress | None = None) -> list[dict[str, Any]]:
    """The report entries of ``plan``, in its order, ``concurrency`` pages at a time in the browser.
    ``progress``, when given, hears of each page started and finished; its ``check`` may stop the
    run before a page starts."""
    def entry(p: PlannedPage) -> dict[str, Any]:
        if not p.enrich and p.seaportal is not None:
            return audit_plan.seaportal_only_entry(p.seaportal)
        if p.refused:
            return audit_plan.merge_seaportal({"url": p.url, "error": p.refused, "browser": {}}, p.seaportal)
        return audit_plan.merge_seaportal(report_entry(audit_page(state, p.url, options)), p.seaportal)

    def one(p: PlannedPage) -> dict[str, Any]:
        if progress is None:
            return entry(p)
        progress.check()
        progress.started(p.url)
        out = entry(p)
        progress.finished(p.url, bool(out.get("error")))
        return out

    if progress is not None:
        progress.found(len(plan))
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="audit") as pool:
        return list(pool.map(one, plan))


def site_report(entries: list[dict[str, Any]], source: dict[str, Any], options: dict[str, Any]) -> dict[str, Any]:
    """The versioned report of ``POST /audit``: its input and options, the pages, the summary score
    (mean accessibility of the pages audited), and every page's security findings gathered."""
    report: dict[str, Any] = {
        "schemaVersion": SCHEMA_VERSION, "generatedAt": utc_iso(), "input": source, "options": options,
        "pages": entries, "summaryScore": audit_rules.summary_score(entries),
    }
    findings = [f for e in entries for f in e.get("securityFindings") or []]
    if findings:
        report["securityFindings"] = findings
    return report


def nothing_to_audit() -> BadRequest:
    """The answer for a run whose sources list no page (an empty sitemap, say)."""
    return BadRequest("no URLs to audit: the request's sources list no pages", code="no_urls")


_LOC = re.compile(r"<loc>\s*([^<\s]+)\s*</loc>", re.I)
_INDEX = re.compile(r"<sitemapindex[\s>]", re.I)
MAX_SITEMAP_URLS = 5000
MAX_CHILD_SITEMAPS = 20


def _sitemap_source(state: BrowserState, sitemap_url: str, field: str) -> str:
    """The XML of one sitemap, read through the browser (the navigation policy judges it and where
    its redirects end)."""
    state.navigation.check(sitemap_url, field)
    with scratch_tab(state) as tab:
        info = load(tab, sitemap_url, float(state.config.timeouts.navigate_sec))
        state.navigation.check(info["url"], field)  # where a redirect took it: refused like the URL itself
        source: str = tab.run(lambda: tab.call("Runtime.evaluate", {
            "expression": "new XMLSerializer().serializeToString(document)", "returnByValue": True,
        })["result"].get("value") or "", 10.0)
    return source


def _locs(source: str) -> list[str]:
    return audit_plan.dedupe([loc.replace("&amp;", "&") for loc in _LOC.findall(source)])


def sitemap_urls(state: BrowserState, sitemap_url: str) -> list[str]:
    """The page URLs a sitemap lists (its ``<loc>`` entries); for a sitemap index, those of the
    sitemaps it names (one level, at most ``MAX_CHILD_SITEMAPS``; each passes the navigation policy)."""
    source = _sitemap_source(state, sitemap_url, "sitemapUrl")
    if not _INDEX.search(source):
        return _locs(source)[:MAX_SITEMAP_URLS]
    pages: list[str] = []
    for child in _locs(source)[:MAX_CHILD_SITEMAPS]:
        try:
            pages += _locs(_sitemap_source(state, child, "sitemapUrl"))
        except APIError as exc:  # a child the policy refuses is skipped, as an unreadable one would be
            log.info("sitemap %s: child %s skipped: %s", sitemap_url, child, exc.message)
        if len(pages) >= MAX_SITEMAP_URLS:
            break
    return audit_plan.dedupe(pages)[:MAX_SITEMAP_URLS]
