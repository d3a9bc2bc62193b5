"""The contract of the site tools (GET /timing, /metrics, /a11y/audit, POST /audit/page, /audit,
/scrape): what they take and what they answer."""
from __future__ import annotations

from typing import Any

from marshmallow import ValidationError, fields, validate, validates_schema

from ...web.schemas import Loose, Strict
from ..contract import Answer, Number, RawList, TabIdMixin

MAX_AUDIT_URLS = 50
_URL = fields.String(required=True, validate=validate.Length(min=1, max=8192),
                     error_messages={"required": "url required"})


# --- requests ------------------------------------------------------------------------------------
class AuditOptionsSchema(Strict):
    """Which collectors run (all by default)."""

    screenshot = fields.Boolean(load_default=True)
    network = fields.Boolean(load_default=True)
    console = fields.Boolean(load_default=True)
    a11y = fields.Boolean(load_default=True)
    timing = fields.Boolean(load_default=True)
    elements = fields.Boolean(load_default=True)
    security = fields.Boolean(load_default=True, metadata={
        "description": "rule-based security findings (insecure password forms, mixed content, ...)"})


class AuditPageSchema(Loose):
    url = _URL
    options = fields.Nested(AuditOptionsSchema, load_default=lambda: AuditOptionsSchema().load({}))


class AuditSchema(Loose):
    urls = fields.List(fields.String(validate=validate.Length(min=1, max=8192)),
                       validate=validate.Length(min=1, max=MAX_AUDIT_URLS))
    sitemapUrl = fields.String(validate=validate.Length(min=1, max=8192))
    seaportalResults = fields.Raw(metadata={"description": "a SeaPortal results file's content: a JSON array of its "
                                                           "per-page results; pages whose profile.browserRecommended "
                                                           "is false are reported from it without a browser"})
    seaportalFile = fields.String(validate=validate.Length(max=4096),
                                  metadata={"description": "where the caller read seaportalResults from; only echoed "
                                                           "in the report's input"})
    enrichAll = fields.Boolean(load_default=False,
                               metadata={"description": "audit every SeaPortal page in the browser"})
    sampleSize = fields.Integer(load_default=0, validate=validate.Range(min=0, max=1000),
                                metadata={"description": "at most this many pages of each template group (URLs that "
                                                         "differ only in digits); 0: all"})
    maxPages = fields.Integer(load_default=20, validate=validate.Range(min=1, max=MAX_AUDIT_URLS))
    concurrency = fields.Integer(load_default=2, validate=validate.Range(min=1, max=4))
    options = fields.Nested(AuditOptionsSchema, load_default=lambda: AuditOptionsSchema().load({}))

    @validates_schema
    def _a_source(self, data: dict[str, Any], **kwargs: Any) -> None:
        if not data.get("urls") and not data.get("sitemapUrl") and data.get("seaportalResults") is None:
            raise ValidationError("urls, sitemapUrl, or seaportalResults required", "urls")


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
    preview = fields.Boolean(load_default=False, metadata={
        "description": "an outline: routing verdicts, charCount and a snippet per page; no rendering, no Markdown"})
    enrichAll = fields.Boolean(load_default=False, metadata={
        "description": "render every page in the browser (but 404s), whatever its verdict"})
    noBrowser = fields.Boolean(load_default=False, metadata={
        "description": "HTTP only: the verdicts are recorded, nothing is rendered"})
    timeoutSeconds = fields.Integer(load_default=120, validate=validate.Range(min=5, max=600))
    browser = fields.String(validate=validate.Length(max=64))


class SiteTabQuerySchema(Loose, TabIdMixin):
    pass


# --- answers -------------------------------------------------------------------------------------
class TimingResponse(Answer):
    tabId = fields.String()
    url = fields.String()
    ttfbMs = Number()
    fcpMs = Number()
    lcpMs = Number()
    cls = Number()
    domContentLoadedMs = Number()
    loadMs = Number()
    resourceCount = fields.Integer()
    transferSizeBytes = fields.Integer()


class MetricsResponse(Answer):
    tabId = fields.String()
    metrics = fields.Dict(metadata={"description": "the server's request counters, or the tab's renderer counters"})
    memory = fields.Dict(metadata={"description": "memoryMB (the browser's processes), jsHeapUsedMB, jsHeapTotalMB"})


class A11yFinding(Answer):
    rule = fields.String()
    severity = fields.String()
    count = fields.Integer()
    samples = fields.List(fields.String())


class A11yAuditResponse(Answer):
    tabId = fields.String()
    url = fields.String()
    score = fields.Integer(metadata={"description": "0-100; a page with no findings scores 100"})
    findings = fields.List(fields.Nested(A11yFinding))


class PageAuditResponse(Answer):
    url = fields.String()
    title = fields.String()
    statusCode = fields.Integer()
    error = fields.String()
    screenshot = fields.String(metadata={"description": "PNG, base64"})
    accessibilityScore = fields.Integer()
    a11yFindings = fields.List(fields.Nested(A11yFinding))
    consoleLogs = RawList(fields.Dict())
    networkRequests = RawList(fields.Dict())
    brokenAssets = RawList(fields.Dict())
    interactiveElements = RawList(fields.Dict())
    timingMetrics = fields.Dict()
    securityFindings = fields.List(fields.Nested(lambda: SecurityFinding()))


class SecurityFinding(Answer):
    ruleId = fields.String()
    severity = fields.String(metadata={"description": "info, low, medium, high or critical"})
    detail = fields.String()
    url = fields.String()


class AuditReportResponse(Answer):
    schemaVersion = fields.String()
    generatedAt = fields.String()
    input = fields.Dict(metadata={"description": "urls, sitemapUrl, or seaportalFormat (+ seaportalFile)"})
    options = fields.Dict(metadata={"description": "sampleSize, screenshot, networkMonitor, concurrency (those set)"})
    pages = RawList(fields.Dict(), metadata={"description": "url, title, error, screenshot, securityFindings, "
                                                               "seaportal, browser{...}"})
    summaryScore = fields.Integer(metadata={"description": "mean accessibility score of the pages audited"})
    securityFindings = fields.List(fields.Nested(SecurityFinding))


class ScrapeReportResponse(Answer):
    schemaVersion = fields.String()
    generatedAt = fields.String()
    input = fields.Dict()
    site = fields.Dict()
    pageGroups = RawList(fields.Dict())
    pages = RawList(fields.Dict())
    summary = fields.Dict()
