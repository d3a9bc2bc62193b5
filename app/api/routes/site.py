"""Site QA and runtime figures: GET /timing, GET /metrics, GET /a11y/audit, POST /audit/page,
POST /audit and POST /scrape."""
from __future__ import annotations

import threading
import time
from typing import Any

from flask import Flask, Response, current_app, g, jsonify
from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from cdp import page_metrics
from cdp.navigation import page_info
from cdp.tab import Tab

from ...openapi import Blueprint, tab_route
from .. import scrape as scraping
from .. import site_audit
from ..schemas import Loose, Strict, TabIdMixin
from .common import check_url, on_tab, state, tab

bp = Blueprint("site", __name__)

MAX_AUDIT_URLS = 50
_URL = fields.String(required=True, validate=validate.Length(min=1, max=8192), error_messages={"required": "url required"})


# --- requests ------------------------------------------------------------------------------------
class AuditOptionsSchema(Strict):
    """Which collectors run (all by default)."""

    screenshot = fields.Boolean(load_default=True)
    network = fields.Boolean(load_default=True)
    console = fields.Boolean(load_default=True)
    a11y = fields.Boolean(load_default=True)
    timing = fields.Boolean(load_default=True)
    elements = fields.Boolean(load_default=True)


class AuditPageSchema(Loose):
    url = _URL
    options = fields.Nested(AuditOptionsSchema, load_default=lambda: AuditOptionsSchema().load({}))


class AuditSchema(Loose):
    urls = fields.List(fields.String(validate=validate.Length(min=1, max=8192)),
                       validate=validate.Length(min=1, max=MAX_AUDIT_URLS))
    sitemapUrl = fields.String(validate=validate.Length(min=1, max=8192))
    maxPages = fields.Integer(load_default=20, validate=validate.Range(min=1, max=MAX_AUDIT_URLS))
    concurrency = fields.Integer(load_default=2, validate=validate.Range(min=1, max=4))
    options = fields.Nested(AuditOptionsSchema, load_default=lambda: AuditOptionsSchema().load({}))

    @validates_schema
    def _a_source(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data.get("urls") and not data.get("sitemapUrl"):
            raise ValidationError("urls or sitemapUrl required", "urls")


class ScrapeSchema(Loose):
    url = _URL
    maxPages = fields.Integer(load_default=10, validate=validate.Range(min=1, max=100))
    maxPerPattern = fields.Integer(load_default=0, validate=validate.Range(min=0, max=100))
    include = fields.List(fields.String(validate=validate.Length(min=1, max=500)), load_default=list,
                          validate=validate.Length(max=50))
    exclude = fields.List(fields.String(validate=validate.Length(min=1, max=500)), load_default=list,
                          validate=validate.Length(max=50))
    only = fields.List(fields.String(validate=validate.Length(min=1, max=8192)), load_default=list,
                       validate=validate.Length(max=100))
    concurrency = fields.Integer(load_default=2, validate=validate.Range(min=1, max=4))
    preview = fields.Boolean(load_default=False)
    enrichAll = fields.Boolean(load_default=False)   # every page is rendered unless noBrowser: accepted as is
    noBrowser = fields.Boolean(load_default=False)
    timeoutSeconds = fields.Integer(load_default=120, validate=validate.Range(min=5, max=600))


class SiteTabQuerySchema(Loose, TabIdMixin):
    pass


# --- answers -------------------------------------------------------------------------------------
class TimingResponse(Schema):
    tabId = fields.String()
    url = fields.String()
    ttfbMs = fields.Float()
    fcpMs = fields.Float()
    lcpMs = fields.Float()
    cls = fields.Float()
    domContentLoadedMs = fields.Float()
    loadMs = fields.Float()
    resourceCount = fields.Integer()
    transferSizeBytes = fields.Integer()


class MetricsResponse(Schema):
    tabId = fields.String()
    metrics = fields.Dict(metadata={"description": "the server's request counters, or the tab's renderer counters"})
    memory = fields.Dict(metadata={"description": "memoryMB (the browser's processes), jsHeapUsedMB, jsHeapTotalMB"})


class A11yFinding(Schema):
    rule = fields.String()
    severity = fields.String()
    count = fields.Integer()
    samples = fields.List(fields.String())


class A11yAuditResponse(Schema):
    tabId = fields.String()
    url = fields.String()
    score = fields.Integer(metadata={"description": "0-100; a page with no findings scores 100"})
    findings = fields.List(fields.Nested(A11yFinding))


class PageAuditResponse(Schema):
    url = fields.String()
    title = fields.String()
    statusCode = fields.Integer()
    error = fields.String()
    screenshot = fields.String(metadata={"description": "PNG, base64"})
    accessibilityScore = fields.Integer()
    a11yFindings = fields.List(fields.Nested(A11yFinding))
    consoleLogs = fields.List(fields.Dict())
    networkRequests = fields.List(fields.Dict())
    brokenAssets = fields.List(fields.Dict())
    interactiveElements = fields.List(fields.Dict())
    timingMetrics = fields.Dict()


class AuditReportResponse(Schema):
    schemaVersion = fields.String()
    generatedAt = fields.String()
    input = fields.Dict()
    options = fields.Dict()
    pages = fields.List(fields.Dict())
    summaryScore = fields.Integer()
    recommendations = fields.List(fields.String())


class ScrapeReportResponse(Schema):
    schemaVersion = fields.String()
    generatedAt = fields.String()
    input = fields.Dict()
    site = fields.Dict()
    pageGroups = fields.List(fields.Dict())
    pages = fields.List(fields.Dict())
    summary = fields.Dict()


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
def timing(req: dict[str, Any], tab_id: str | None) -> Response:
    """Navigation timing and Core Web Vitals (TTFB, FCP, LCP, CLS) of the tab's page, in ms."""
    target = tab(req.get("tabId"))
    figures, info = on_tab(target, lambda t: (page_metrics.timing(t), page_info(t)))
    return jsonify({"tabId": target.id, "url": info["url"], **figures})


def _memory(tabs: list[Tab]) -> dict[str, Any]:
    browser = state().browser
    memory = page_metrics.browser_memory(browser.conn) if browser is not None and browser.conn is not None else {}
    heaps = []
    for t in tabs:
        try:
            heaps.append(on_tab(t, page_metrics.counters, 5.0))
        except Exception:  # a tab busy or closing: its heap is left out of the sum
            continue
    return {**memory, **page_metrics.heap_mb(heaps)}


@tab_route(bp, "/metrics", methods=["GET"])
@bp.arguments(SiteTabQuerySchema, location="query")
@bp.response(200, MetricsResponse)
def metrics(req: dict[str, Any], tab_id: str | None) -> Response:
    """Runtime figures: the server's request counters and the browser's memory; with a tab, that
    tab's renderer counters (DOM nodes, listeners, layouts, JS heap) and the same memory."""
    if req.get("tabId"):
        target = tab(req["tabId"])
        return jsonify({"tabId": target.id, "metrics": on_tab(target, page_metrics.counters),
                        "memory": _memory([target])})
    st = state()
    browser = st.ensure()
    ours = browser.attached_tabs()
    counters = current_app.extensions["pinchtab.requests"].view()
    return jsonify({"metrics": {**counters, "tabs": len(browser.pages())}, "memory": _memory(ours)})


@tab_route(bp, "/a11y/audit", methods=["GET"])
@bp.arguments(SiteTabQuerySchema, location="query")
@bp.response(200, A11yAuditResponse)
def a11y_audit(req: dict[str, Any], tab_id: str | None) -> Response:
    """Accessibility findings of the tab's page (missing alt text and labels, empty links and
    buttons, language, title, duplicate ids), each with a count and samples, and a 0-100 score."""
    target = tab(req.get("tabId"))
    report, info = on_tab(target, lambda t: (page_metrics.a11y_audit(t), page_info(t)))
    return jsonify({"tabId": target.id, "url": info["url"], **report})


@bp.route("/audit/page", methods=["POST"])
@bp.arguments(AuditPageSchema)
@bp.response(200, PageAuditResponse)
def audit_page(req: dict[str, Any]) -> Response:
    """Audit one page in a tab of its own: broken assets, console, accessibility, timing,
    interactive elements and a screenshot. A page that cannot load is an entry with ``error``."""
    url = check_url(req["url"])
    st = state()
    st.ensure()
    return jsonify(site_audit.audit_page(st, url, req["options"]))


@bp.route("/audit", methods=["POST"])
@bp.arguments(AuditSchema)
@bp.response(200, AuditReportResponse)
def audit(req: dict[str, Any]) -> Response:
    """Audit several pages (``urls``, and those a ``sitemapUrl`` lists, up to ``maxPages``),
    ``concurrency`` at a time, into one report with a summary score and recommendations."""
    st = state()
    urls = [check_url(u, "urls") for u in req.get("urls", [])]
    source: dict[str, Any] = {"urls": urls} if urls else {}
    st.ensure()
    if req.get("sitemapUrl"):
        sitemap = check_url(req["sitemapUrl"], "sitemapUrl")
        source["sitemapUrl"] = sitemap
        listed = [check_url(u, "sitemapUrl") for u in site_audit.sitemap_urls(st, sitemap, req["maxPages"])]
        urls += [u for u in listed if u not in urls][: max(0, req["maxPages"] - len(urls))]
    options = req["options"]
    pages = site_audit.audit_site(st, urls, options, req["concurrency"])
    return jsonify(site_audit.site_report(pages, source, {"screenshot": options["screenshot"],
                                                          "networkMonitor": options["network"],
                                                          "concurrency": req["concurrency"]}))


@bp.route("/scrape", methods=["POST"])
@bp.arguments(ScrapeSchema)
@bp.response(200, ScrapeReportResponse)
def scrape(req: dict[str, Any]) -> Response:
    """Crawl a site from ``url`` (same origin, ``maxPages``, include/exclude path globs) and keep
    each page as Markdown with its title, meta tags, JSON-LD and link counts. ``preview`` gives a
    snippet and a character count instead of the Markdown; ``only`` scrapes just the URLs listed."""
    req["url"] = check_url(req["url"])
    req["only"] = [check_url(u, "only") for u in req["only"]]
    st = state()
    st.ensure()
    return jsonify(scraping.scrape(st, req))
