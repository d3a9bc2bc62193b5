"""Site QA and runtime figures: GET /timing, GET /metrics, GET /a11y/audit, POST /audit/page,
POST /audit and POST /scrape (the last two also as a stream of progress events: ``app.api.progress``)."""
from __future__ import annotations

import logging
import threading
import time
from typing import Any

from flask import Flask, Response, current_app, g, request

from cdp import page_metrics
from cdp.navigation import page_info
from cdp.tab import Tab

from ...policy import netguard
from ...web.errors import APIError, BadRequest
from ...web.openapi import TEXT, Blueprint, tab_route
from .. import audit_plan, progress, site_audit
from .. import scrape as scraping
from ..engines import check_engine
from .common import check_url, on_tab, state, tab
from .site_contract import (
    A11yAuditResponse,
    AuditPageSchema,
    AuditReportResponse,
    AuditSchema,
    MetricsResponse,
    PageAuditResponse,
    ScrapeReportResponse,
    ScrapeSchema,
    SiteTabQuerySchema,
    TimingResponse,
)

bp = Blueprint("site", __name__)
log = logging.getLogger(__name__)

_STREAMED = ("with Accept: text/event-stream, Server-Sent Events instead: event: progress, data: {done, total, "
             "url, errors} as pages finish (total: the pages known so far); then event: result, data: the report "
             "(this route's JSON answer), or event: error, data: {error, code} when the run failed after the "
             "stream began")


# --- the request counters behind GET /metrics ------------------------------------------------------
class RequestCounters:
    """How many requests this process answered, how many failed (5xx) and how long they took."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.started = time.time()
        self.total = self.failed = 0
        self.latency_ms = 0.0

    def count(self, status: int, elapsed_ms: float) -> None:
        with self._lock:
            self.total += 1
            self.failed += status >= 500
            self.latency_ms += elapsed_ms

    def view(self) -> dict[str, Any]:
        with self._lock:
            return {"requestsTotal": self.total, "requestsFailed": self.failed,
                    "avgLatencyMs": round(self.latency_ms / self.total, 2) if self.total else 0.0,
                    "uptimeSec": round(time.time() - self.started)}


def register_counters(app: Flask) -> None:
    counters = app.extensions["pinchtab.requests"] = RequestCounters()

    @app.before_request
    def _start() -> None:
        g.site_started = time.perf_counter()

    @app.after_request
    def _count(resp: Response) -> Response:
        started = g.get("site_started")
        if started is not None:
            counters.count(resp.status_code, (time.perf_counter() - started) * 1000)
        return resp


# --- routes --------------------------------------------------------------------------------------
@tab_route(bp, "/timing", methods=["GET"])
@bp.arguments(SiteTabQuerySchema, location="query")
@bp.response(200, TimingResponse)
def timing(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Navigation timing and Core Web Vitals (TTFB, FCP, LCP, CLS) of the tab's page, in ms."""
    target = tab(req.get("tabId"))
    figures, info = on_tab(target, lambda t: (page_metrics.timing(t), page_info(t)))
    return {"tabId": target.id, "url": info["url"], **figures}


def _memory(tabs: list[Tab]) -> dict[str, Any]:
    browser = state().browser
    memory = page_metrics.browser_memory(browser.conn) if browser is not None and browser.conn is not None else {}
    heaps = []
    for t in tabs:
        try:
            heaps.append(on_tab(t, page_metrics.counters, 5.0))
        except Exception:  # a tab busy or closing: its heap is left out of the sum
            log.debug("tab %s: no heap figures", t.id[:8], exc_info=True)
            continue
    return {**memory, **page_metrics.heap_mb(heaps)}


@tab_route(bp, "/metrics", methods=["GET"])
@bp.arguments(SiteTabQuerySchema, location="query")
@bp.response(200, MetricsResponse)
def metrics(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Runtime figures: the server's request counters and the browser's memory; with a tab, that
    tab's renderer counters (DOM nodes, listeners, layouts, JS heap) and the same memory."""
    if req.get("tabId"):
        target = tab(req["tabId"])
        return {"tabId": target.id, "metrics": on_tab(target, page_metrics.counters),
                "memory": _memory([target])}
    st = state()
    browser = st.ensure()
    ours = browser.attached_tabs()
    counters = current_app.extensions["pinchtab.requests"].view()
    return {"metrics": {**counters, "tabs": len(browser.pages())}, "memory": _memory(ours)}


@tab_route(bp, "/a11y/audit", methods=["GET"])
@bp.arguments(SiteTabQuerySchema, location="query")
@bp.response(200, A11yAuditResponse)
def a11y_audit(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Accessibility findings of the tab's page (missing alt text and labels, empty links and
    buttons, language, title, duplicate ids), each with a count and samples, and a 0-100 score."""
    target = tab(req.get("tabId"))
    report, info = on_tab(target, lambda t: (page_metrics.a11y_audit(t), page_info(t)))
    return {"tabId": target.id, "url": info["url"], **report}


@bp.route("/audit/page", methods=["POST"])
@bp.arguments(AuditPageSchema)
@bp.response(200, PageAuditResponse)
def audit_page(req: dict[str, Any]) -> dict[str, Any]:
    """Audit one page in a tab of its own: broken assets, console, accessibility, timing,
    interactive elements and a screenshot. A page that cannot load is an entry with ``error``."""
    url = check_url(req["url"])
    st = state()
    st.ensure()
    return site_audit.audit_page(st, url, req["options"])


@bp.route("/audit", methods=["POST"])
@bp.arguments(AuditSchema)
@bp.alt_response(200, content_type=progress.EVENT_STREAM, schema=TEXT, description=_STREAMED)
@bp.response(200, AuditReportResponse)
def audit(req: dict[str, Any]) -> Response | dict[str, Any]:
    """Audit several pages into one report: ``urls``, the pages a ``sitemapUrl`` lists (up to
    ``maxPages``), or a SeaPortal report's pages (``seaportalResults``: those it says need a browser,
    every one with ``enrichAll``); ``sampleSize`` keeps at most that many pages of each template
    group. ``concurrency`` pages at a time; 400 ``no_urls`` when the sources list no page.
    With ``Accept: text/event-stream`` the run's progress streams as it goes, the report last."""
    st = state()
    options = req["options"]
    plan, source = _audit_plan(req)
    if not plan:
        raise site_audit.nothing_to_audit()
    if any(p.enrich and not p.refused for p in plan):
        st.ensure()
    # The original leaves out what is off (Go's omitempty): a consumer diffing reports sees the same keys.
    run_options: dict[str, Any] = {"sampleSize": req["sampleSize"], "screenshot": options["screenshot"],
                                   "networkMonitor": options["network"], "concurrency": req["concurrency"]}

    def run(follow: progress.Progress | None = None) -> dict[str, Any]:
        entries = site_audit.run_plan(st, plan, options, req["concurrency"], follow)
        return site_audit.site_report(entries, source, {k: v for k, v in run_options.items() if v})

    if progress.wants_stream(request):
        return progress.stream_run(run, name="audit")
    return run()


def _audit_plan(req: dict[str, Any]) -> tuple[list[site_audit.PlannedPage], dict[str, Any]]:
    """The pages the audit visits, in order, and the report's ``input``."""
    st = state()
    if req.get("seaportalResults") is not None:
        try:
            pages = audit_plan.parse_seaportal(req["seaportalResults"])
        except audit_plan.BadSeaportalReport as exc:
            raise BadRequest(str(exc), code="bad_seaportal_report", details={"field": "seaportalResults"}) from None
        by_url = {p.url: p for p in pages}
        plan = []
        for url in audit_plan.sample_pages([p.url for p in pages], req["sampleSize"]):
            page = by_url[url]
            item = site_audit.PlannedPage(url, enrich=page.browser_recommended or req["enrichAll"], seaportal=page)
            if item.enrich:
                # A page of someone else's report: one the policy refuses is an entry with an error, not the run's end.
                try:
                    item.url = st.navigation.check(url, "seaportalResults").url
                except APIError as exc:
                    item.refused = f"navigation refused: {exc.message}"
            plan.append(item)
        source: dict[str, Any] = {"seaportalFormat": audit_plan.SEAPORTAL_FORMAT}
        if req.get("seaportalFile"):
            source["seaportalFile"] = req["seaportalFile"]
        return plan, source
    urls = [check_url(u, "urls") for u in req.get("urls", [])]
    source = {"urls": urls} if urls else {}
    if req.get("sitemapUrl"):
        sitemap = check_url(req["sitemapUrl"], "sitemapUrl")
        source["sitemapUrl"] = sitemap
        st.ensure()
        urls += [check_url(u, "sitemapUrl") for u in site_audit.sitemap_urls(st, sitemap)]
    planned = audit_plan.sample_pages(urls, req["sampleSize"])
    # maxPages bounds what a sitemap adds; pages named in urls are all kept.
    named = set(source.get("urls", []))
    room = max(0, req["maxPages"] - len(named))
    kept = []
    for url in planned:
        if url in named or room > 0:
            room -= url not in named
            kept.append(url)
    return [site_audit.PlannedPage(u) for u in kept], source


@bp.route("/scrape", methods=["POST"])
@bp.arguments(ScrapeSchema)
@bp.alt_response(200, content_type=progress.EVENT_STREAM, schema=TEXT, description=_STREAMED)
@bp.response(200, ScrapeReportResponse)
def scrape(req: dict[str, Any]) -> Response | dict[str, Any]:
    """Crawl a site from ``url`` (same origin, ``maxPages``, include/exclude path globs) and keep
    each page as Markdown with its title, meta tags, JSON-LD and link counts. HTTP first: a page
    goes to the browser only when its verdict says so (``browserRecommended``, ``browserReasons``;
    ``enrichAll``: every page, ``noBrowser``: none). ``preview`` gives a snippet and a character
    count instead of the Markdown and renders nothing; ``only`` scrapes just the URLs listed.
    With ``Accept: text/event-stream`` the crawl's progress streams as it goes, the report last."""
    req["url"] = check_url(req["url"])
    req["only"] = [check_url(u, "only") for u in req["only"]]
    st = state()
    check_engine(st.config, req.get("browser"))
    sec = st.config.security
    # The HTTP fetches obey the download policy; its resolver is the app's (read here, in the request).
    resolver = current_app.extensions.get(netguard.RESOLVER_EXTENSION, netguard.system_resolver)
    policy = netguard.Policy.for_download(sec.download_allowed_domains, sec.allowed_domains, resolver)
    st.ensure()
    if progress.wants_stream(request):
        return progress.stream_run(lambda follow: scraping.scrape(st, req, policy, follow), name="scrape")
    return scraping.scrape(st, req, policy)
