"""Site QA and runtime figures against real Chromium: /timing, /metrics, /a11y/audit, /audit/page,
/audit and /scrape, on a tiny shop, an audit site and a scrape site the tests serve.

The scrape's HTTP fetches refuse hosts on this machine (the download policy), and every test page
is served on 127.0.0.1. So this module runs its own browser, started with a host resolver rule that
sends ``fixtures.test`` to the test server, and gives the app a resolver stub that answers a public
address for that name: by that name a page is fetched over HTTP as on a real site; by 127.0.0.1 it
is the case of a host the HTTP fetch refuses.
"""
from __future__ import annotations

import base64
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.mapped_hosts import fixtures_resolver, mapped_browser

from app.policy import netguard
from cdp.browser import Browser

PAGES = Path(__file__).resolve().parents[2] / "pages"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """This module's browser: ``fixtures.test`` is the test server."""
    yield from mapped_browser()


def nav(client, url):
    r = client.post("/navigate", json={"url": url})
    assert r.status_code == 200, r.json
    return r.json["tabId"]


@pytest.fixture(scope="module")
def shop_client(browser, tmp_path_factory):
    from support.config import make_config

    from app.api import create_app

    before = {p["targetId"] for p in browser.pages()}
    app = create_app(make_config(tmp_path_factory.mktemp("site")), start_browser=False,
                     browser_factory=lambda: browser)
    app.extensions["pinchtab"].start(background=False)
    app.extensions[netguard.RESOLVER_EXTENSION] = fixtures_resolver
    app.testing = True
    yield app.test_client()
    for p in browser.pages():
        if p["targetId"] not in before:
            try:
                browser.close_tab(p["targetId"])
            except Exception:
                pass


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def public(site: Any, path: str) -> str:
    """``path`` on the test server by the name the browser maps to it and the policies call public."""
    return f"http://fixtures.test:{site.port}/{path}"


def test_timing_reports_load_figures_of_the_page(shop_client, site):
    tab = nav(shop_client, site.url("site_shop/index.html"))
    r = shop_client.get(f"/tabs/{tab}/timing")
    assert r.status_code == 200, r.json
    t = r.json
    assert t["tabId"] == tab and t["url"].endswith("/site_shop/index.html")
    assert 0 < t["ttfbMs"] <= t["domContentLoadedMs"] <= t["loadMs"]
    assert t["resourceCount"] >= 1          # the logo request
    assert t["fcpMs"] > 0                   # the page painted text
    assert t["cls"] >= 0


def test_metrics_report_requests_memory_and_a_tabs_counters(shop_client, site):
    tab = nav(shop_client, site.url("site_shop/index.html"))
    whole = shop_client.get("/metrics").json
    assert whole["metrics"]["requestsTotal"] >= 1 and whole["metrics"]["tabs"] >= 1
    assert whole["memory"]["memoryMB"] > 10       # a launched Chromium's processes
    assert whole["memory"]["processCount"] >= 2 and whole["memory"]["jsHeapUsedMB"] > 0
    one = shop_client.get(f"/tabs/{tab}/metrics").json
    assert one["tabId"] == tab
    assert one["metrics"]["nodes"] > 10 and one["metrics"]["jsHeapUsedBytes"] > 0
    assert shop_client.get("/tabs/NOPE/metrics").status_code == 404


def test_a11y_audit_finds_each_problem_and_a_clean_page_scores_100(shop_client, site):
    tab = nav(shop_client, site.url("site_a11y_bad.html"))
    r = shop_client.get("/a11y/audit", query_string={"tabId": tab})
    assert r.status_code == 200, r.json
    found = {f["rule"]: f for f in r.json["findings"]}
    assert found["missing-alt"]["count"] == 2          # alt="" is decorative; the hidden one is skipped
    assert found["missing-label"]["count"] == 1 and found["missing-label"]["samples"] == ["input#nolabel"]
    assert found["empty-link"]["count"] == 1 and found["empty-button"]["count"] == 1
    assert {"missing-lang", "missing-title", "duplicate-id"} <= found.keys()
    assert [f["rule"] for f in r.json["findings"]] == sorted(found)   # in rule order, as the original
    # The original's weights: serious 10, moderate 5, minor 2 points off each instance.
    assert found["missing-alt"]["severity"] == "serious" and found["empty-link"]["severity"] == "moderate"
    assert r.json["score"] == 100 - (2 * 10 + 10) - (5 + 5 + 5 + 5) - 2
    clean = nav(shop_client, site.url("site_a11y_good.html"))
    good = shop_client.get(f"/tabs/{clean}/a11y/audit").json
    assert good["score"] == 100 and good["findings"] == []


def test_audit_page_collects_everything_in_a_tab_of_its_own(shop_client, site):
    tabs_before = len(shop_client.get("/tabs").json["tabs"])
    r = shop_client.post("/audit/page", json={"url": site.url("site_shop/index.html")})
    assert r.status_code == 200, r.json
    page = r.json
    assert page["title"] == "Tiny Shop" and "error" not in page and page["statusCode"] == 200
    assert [(b["url"].rsplit("/", 1)[1], b["status"]) for b in page["brokenAssets"]] == [("missing-logo.png", 404)]
    assert any(n["url"].endswith("/site_shop/index.html") for n in page["networkRequests"])
    assert any("shop widget failed" in c["message"] and c["level"] == "error" for c in page["consoleLogs"])
    assert {"role": "button", "name": "Find"}.items() <= next(
        e for e in page["interactiveElements"] if e["role"] == "button").items()
    assert page["accessibilityScore"] == 100
    assert page["timingMetrics"]["loadMs"] > 0
    assert base64.b64decode(page["screenshot"])[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(shop_client.get("/tabs").json["tabs"]) == tabs_before     # its tab is closed again

    lean = shop_client.post("/audit/page", json={"url": site.url("site_shop/about.html"),
                                                 "options": {"screenshot": False, "elements": False}}).json
    assert "screenshot" not in lean and "interactiveElements" not in lean and lean["title"].startswith("About")


def test_audit_page_of_an_unreachable_site_is_an_entry_with_an_error(shop_client):
    r = shop_client.post("/audit/page", json={"url": f"http://127.0.0.1:{closed_port()}/"})
    assert r.status_code == 200
    assert r.json["error"] and "title" not in r.json


def test_audit_of_several_pages_and_of_a_sitemap(shop_client, site):
    urls = [site.url("site_shop/index.html"), site.url("site_a11y_bad.html")]
    r = shop_client.post("/audit", json={"urls": urls, "concurrency": 2, "options": {"screenshot": False}})
    assert r.status_code == 200, r.json
    report = r.json
    assert report["schemaVersion"] == "1.0" and [p["url"] for p in report["pages"]] == urls
    bad = report["pages"][1]["browser"]
    assert bad["accessibilityScore"] < report["pages"][0]["browser"]["accessibilityScore"]
    # The site's score is the mean accessibility score of the pages audited, rounded down.
    assert report["summaryScore"] == (100 + bad["accessibilityScore"]) // 2
    assert "recommendations" not in report and "securityFindings" not in report
    assert report["options"] == {"networkMonitor": True, "concurrency": 2}   # what is off is left out

    mapped = shop_client.post("/audit", json={"sitemapUrl": site.url("site_shop/sitemap.xml"),
                                              "options": {"screenshot": False}}).json
    assert [p["url"].rsplit("/site_shop/", 1)[1] for p in mapped["pages"]] == ["about.html", "products/a.html"]
    assert mapped["input"]["sitemapUrl"].endswith("sitemap.xml")


@pytest.mark.parametrize("body, field", [
    ({}, "urls"),
    ({"urls": ["javascript:alert(1)"]}, "urls"),
    ({"urls": ["http://x.test/"], "concurrency": 9}, "concurrency"),
])
def test_audit_refuses_bad_requests(shop_client, body, field):
    r = shop_client.post("/audit", json=body)
    assert r.status_code == 400, r.json
    assert field in str(r.json)


def normalized_report(report: dict[str, Any]) -> dict[str, Any]:
    """An audit report without what differs from run to run (the time, the input, timings,
    screenshots, request details and completion order), for comparing with the golden report."""
    out = {**report, "generatedAt": "0000-00-00T00:00:00Z", "input": {}}
    pages = []
    for page in report["pages"]:
        page = {k: v for k, v in page.items() if k != "screenshot"}
        b = dict(page.get("browser") or {})
        b["screenshotPath"], b["timingMetrics"] = "", {}
        b["consoleLogs"] = [{"level": c["level"], "message": c["message"].rstrip()} for c in b.get("consoleLogs") or []]
        b["interactiveElements"] = [{k: v for k, v in e.items() if k != "ref"}
                                    for e in b.get("interactiveElements") or []]
        b["networkRequests"] = sorted(({k: r.get(k) for k in ("url", "method", "status", "resourceType")}
                                       for r in b.get("networkRequests") or []), key=lambda r: r["url"])
        b["brokenAssets"] = sorted(b.get("brokenAssets") or [], key=lambda a: a["url"])
        pages.append({**page, "browser": b})
    out["pages"] = pages
    return out


def test_audit_report_normalizes_to_the_golden_report(shop_client, site):
    origin = site.url("").rstrip("/")
    r = shop_client.post("/audit", json={"sitemapUrl": f"{origin}/audit_site/sitemap.xml",
                                         "options": {"screenshot": False}, "concurrency": 1})
    assert r.status_code == 200, r.json
    golden = json.loads((PAGES / "audit_site" / "golden_report.json").read_text().replace("{origin}", origin))
    assert normalized_report(r.json) == golden
    # What the golden holds, said plainly: each page's defect, and the site's figures.
    pages = {p["url"].rsplit("/audit_site/", 1)[1]: p for p in r.json["pages"]}
    assert [a["status"] for a in pages["broken_assets.html"]["browser"]["brokenAssets"]] == [404] * 4
    assert pages["a11y_issues.html"]["browser"]["accessibilityScore"] == 70
    assert r.json["summaryScore"] == (9 * 100 + 70) // 10
    assert [f["ruleId"] for f in r.json["securityFindings"]] == ["insecure-password-form"]


def test_an_empty_sitemap_is_a_400_saying_there_is_nothing_to_audit(shop_client, site):
    r = shop_client.post("/audit", json={"sitemapUrl": site.url("audit_site/empty_sitemap.xml")})
    assert r.status_code == 400 and r.json["code"] == "no_urls", r.json
    assert "no URLs to audit" in r.json["error"]
    follow_up = shop_client.post("/audit", json={"urls": [site.url("audit_site/clean.html")],
                                                 "options": {"screenshot": False}})
    assert follow_up.status_code == 200 and "error" not in follow_up.json["pages"][0]


def test_sample_size_keeps_every_lone_page_and_n_of_each_template_group(shop_client, site):
    # Through a sitemap index: the pages of the sitemaps it names.
    body = {"sitemapUrl": site.url("audit_site/sitemap_index.xml"), "sampleSize": 2,
            "options": {"screenshot": False, "a11y": False, "timing": False, "elements": False}}
    r = shop_client.post("/audit", json=body)
    assert r.status_code == 200, r.json
    names = [p["url"].rsplit("/audit_site/", 1)[1] for p in r.json["pages"]]
    assert names == ["index.html", "broken_assets.html", "console_errors.html", "a11y_issues.html", "clean.html",
                     "forms.html", "products/p1.html", "products/p2.html"]
    assert r.json["options"]["sampleSize"] == 2


def test_sampling_is_a_pure_deterministic_plan():
    from app.api.audit_plan import sample_pages

    urls = ["http://s.test/shop/item-7", "http://s.test/", "http://s.test/shop/item-3", "http://s.test/about",
            "http://s.test/shop/item-12", "http://s.test/blog/2024/01/a", "http://s.test/blog/2023/11/a"]
    plan = sample_pages(urls, 1)
    # The entry first (it counts toward its group), lone pages, then the lowest of each group.
    assert plan == ["http://s.test/shop/item-7", "http://s.test/", "http://s.test/about",
                    "http://s.test/blog/2023/11/a"]
    assert sample_pages(urls, 1) == plan   # the same input, the same plan
    assert sample_pages(urls, 0) == [urls[0], urls[1], urls[3], "http://s.test/shop/item-12", "http://s.test/shop/item-3",
                                     "http://s.test/blog/2023/11/a", "http://s.test/blog/2024/01/a"]


def test_a_password_form_over_http_is_a_high_security_finding(shop_client, site):
    r = shop_client.post("/audit", json={"urls": [site.url("audit_site/forms.html"), site.url("audit_site/clean.html")],
                                         "options": {"screenshot": False}})
    assert r.status_code == 200, r.json
    forms, clean = r.json["pages"]
    finding = forms["securityFindings"][0]
    assert finding == {"ruleId": "insecure-password-form", "severity": "high",
                       "detail": f"password form submits over plain http to {site.url('audit_site/login')}",
                       "url": site.url("audit_site/forms.html")}
    assert r.json["securityFindings"] == [finding]     # gathered into the report's section
    assert "securityFindings" not in clean
    page = shop_client.post("/audit/page", json={"url": site.url("audit_site/forms.html"),
                                                 "options": {"screenshot": False, "security": False}}).json
    assert "securityFindings" not in page


def test_security_rules_cover_plain_http_pages_and_the_originals_other_rules():
    from app.api.audit_rules import security_findings

    loose = security_findings("http://s.test/", "", [], {"forms": [], "loosePassword": True})
    assert [(f["ruleId"], f["severity"]) for f in loose] == [("insecure-password-form", "high")]
    secure_page = security_findings("https://s.test/", "Index of /files", [
        {"url": "http://cdn.test/x.js", "status": 200}, {"url": "https://s.test/.env", "status": 200},
        {"url": "https://s.test/.git/config", "status": 404}],
        {"forms": [{"action": "http://s.test/search", "hasPassword": False},
                   {"action": "https://s.test/login", "hasPassword": True}], "loosePassword": False})
    assert [f["ruleId"] for f in secure_page] == ["mixed-content", "insecure-form-action", "exposed-endpoint",
                                                  "directory-listing"]
    assert security_findings("https://s.test/", "", [], None) == []


def seaportal_results(site: Any) -> list[dict[str, Any]]:
    """A SeaPortal results file for three audit site pages: one it says needs no browser."""
    def result(page: str, title: str, recommended: bool) -> dict[str, Any]:
        return {"url": site.url(f"audit_site/{page}"), "title": title, "description": f"About {page}",
                "confidence": 90, "statusCode": 200, "quality": 0.8,
                "profile": {"class": "hydrated" if recommended else "static",
                            "decision": "browser-needed" if recommended else "static-high-confidence",
                            "browserRecommended": recommended, "confidence": 90}}

    return [result("index.html", "Audit Test Site", True), result("clean.html", "Clean (from SeaPortal)", False),
            result("broken_assets.html", "Broken Assets", True)]


def test_a_seaportal_report_routes_pages_by_browser_recommended(shop_client, site):
    results = seaportal_results(site)
    r = shop_client.post("/audit", json={"seaportalResults": results, "seaportalFile": "sp.json",
                                         "options": {"timing": False}})
    assert r.status_code == 200, r.json
    report = r.json
    assert report["input"] == {"seaportalFormat": "seaportal-results/v0", "seaportalFile": "sp.json"}
    pages = {p["url"].rsplit("/audit_site/", 1)[1]: p for p in report["pages"]}
    assert list(pages) == ["index.html", "clean.html", "broken_assets.html"]
    clean = pages["clean.html"]   # reported from the file alone
    assert "screenshot" not in clean and clean["browser"] == {} and clean["statusCode"] == 200
    assert clean["title"] == "Clean (from SeaPortal)" and clean["seaportal"]["description"] == "About clean.html"
    assert clean["seaportal"]["browserRecommended"] is False
    assert clean["seaportal"]["decision"] == "static-high-confidence"
    home = pages["index.html"]    # audited in the browser, its SeaPortal summary kept
    assert home["screenshot"] and home["title"] == "Audit Test Site" and home["seaportal"]["description"]
    assert report["summaryScore"] == 100   # of the pages audited in the browser only

    every = shop_client.post("/audit", json={"seaportalResults": results, "enrichAll": True,
                                             "options": {"timing": False, "elements": False}}).json
    clean = next(p for p in every["pages"] if p["url"].endswith("clean.html"))
    assert clean["screenshot"] and clean["title"] == "Clean Page | Audit Test Site"
    assert clean["seaportal"]["title"] == "Clean (from SeaPortal)"


@pytest.mark.parametrize("results", [{"url": "x"}, ["not an object"], "[]"])
def test_a_seaportal_report_that_is_not_an_array_of_results_is_a_400(shop_client, results):
    r = shop_client.post("/audit", json={"seaportalResults": results})
    assert r.status_code == 400 and r.json["code"] == "bad_seaportal_report", r.json


def test_scrape_reads_over_http_first_and_renders_only_the_page_that_needs_it(shop_client, site):
    r = shop_client.post("/scrape", json={"url": public(site, "scrape_site/index.html"), "timeoutSeconds": 30})
    assert r.status_code == 200, r.json
    report = r.json
    assert report["schemaVersion"] == "1.0" and report["pageGroups"]
    pages = {p["url"].rsplit("/", 1)[1]: p for p in report["pages"]}
    assert list(pages) == ["index.html", "about.html", "guide.html", "app.html"]   # found by following links
    for name in ("index.html", "about.html", "guide.html"):
        assert pages[name]["source"] == "http" and pages[name]["browserRecommended"] is False, pages[name]
        assert pages[name]["statusCode"] == 200 and pages[name]["contentType"].startswith("text/html")
    assert "# Reading guide" in pages["guide.html"]["markdown"] and "```" in pages["guide.html"]["markdown"]
    app = pages["app.html"]
    assert app["source"] == "browser" and app["browserRecommended"] is True
    assert app["browserReasons"] == ["thin-content"] and "# Rendered by JavaScript" in app["markdown"]
    assert report["summary"] == {"contentTypes": {"text/html": 4}, "httpPages": 3, "browserPages": 1,
                                 "failedPages": 0}

    every = shop_client.post("/scrape", json={"url": public(site, "scrape_site/index.html"), "maxPages": 2,
                                              "enrichAll": True}).json
    assert [p["source"] for p in every["pages"]] == ["browser", "browser"]
    assert every["pages"][0]["browserReasons"] == ["enrich-all"] and every["pages"][0]["browserRecommended"] is False


def test_scrape_no_browser_and_preview_record_verdicts_and_render_nothing(shop_client, site):
    start = public(site, "scrape_site/index.html")
    fetched = shop_client.post("/scrape", json={"url": start, "noBrowser": True}).json
    assert [p["source"] for p in fetched["pages"]] == ["http"] * 4 and fetched["summary"]["browserPages"] == 0
    app = fetched["pages"][3]
    assert app["url"].endswith("app.html") and app["browserRecommended"] is True and app["markdown"] == "Loading…"

    preview = shop_client.post("/scrape", json={"url": start, "preview": True}).json
    assert len(preview["pages"]) == 4 and preview["summary"]["browserPages"] == 0
    assert all("markdown" not in p and p["charCount"] > 0 for p in preview["pages"])
    assert preview["pages"][0]["snippet"].startswith("# The scrape test site This is")
    flagged = [p["url"] for p in preview["pages"] if p["browserRecommended"]]
    assert flagged == [public(site, "scrape_site/app.html")]

    # Expand the page the preview flagged: exactly it, rendered.
    expanded = shop_client.post("/scrape", json={"url": start, "only": flagged}).json
    assert [p["url"] for p in expanded["pages"]] == flagged
    assert expanded["pages"][0]["source"] == "browser" and "JavaScript" in expanded["pages"][0]["markdown"]


def test_scrape_http_fetches_keep_the_download_policy(shop_client, site):
    # A host on this machine: the HTTP fetch refuses it; the browser, under the navigation policy, may render it.
    loopback = shop_client.post("/scrape", json={"url": site.url("scrape_site/about.html"), "maxPages": 1}).json
    page = loopback["pages"][0]
    assert page["source"] == "browser" and page["browserReasons"] == ["fetch-error"] and "# About" in page["markdown"]
    refused = shop_client.post("/scrape", json={"url": site.url("scrape_site/index.html"), "noBrowser": True}).json
    assert len(refused["pages"]) == 1 and "internal or blocked host" in refused["pages"][0]["error"]
    assert refused["summary"] == {"contentTypes": {}, "httpPages": 0, "browserPages": 0, "failedPages": 1}
    # Every hop is checked: a redirect to a metadata address is refused before it is followed.
    hop = public(site, "redirect?to=http://169.254.169.254/latest/meta-data/")
    redirected = shop_client.post("/scrape", json={"url": hop, "noBrowser": True}).json["pages"][0]
    assert "redirect to http://169.254.169.254/" in redirected["error"] and "markdown" not in redirected


def test_scrape_crawls_the_site_into_markdown(shop_client, site):
    r = shop_client.post("/scrape", json={"url": public(site, "site_shop/index.html"), "maxPages": 4})
    assert r.status_code == 200, r.json
    report = r.json
    pages = {p["url"].rsplit("/site_shop/", 1)[1]: p for p in report["pages"]}
    assert len(pages) == 4 and "index.html" in pages
    home = pages["index.html"]
    # The shop's pages are short: thin over HTTP, so each is rendered.
    assert home["source"] == "browser" and home["browserReasons"] == ["thin-content"] and home["title"] == "Tiny Shop"
    assert "# Welcome to Tiny Shop" in home["markdown"] and "- Anvil" in home["markdown"]
    assert home["meta"]["description"] == "A tiny shop for scrape tests"
    assert home["schema"][0]["@type"] == "Store"
    assert home["externalLinks"] == 1 and home["internalLinks"] >= 5
    assert all(u.startswith(report["site"]["baseUrl"]) for u in (p["url"] for p in report["pages"]))
    assert {"/site_shop/*", "/site_shop/products/*"} >= {g["pattern"] for g in report["pageGroups"]}
    assert report["summary"]["browserPages"] == 4 and report["summary"]["failedPages"] == 0


def test_scrape_filters_caps_and_previews(shop_client, site):
    start = public(site, "site_shop/index.html")
    no_products = shop_client.post("/scrape", json={"url": start, "exclude": ["/site_shop/products/*"],
                                                    "noBrowser": True}).json
    assert sorted(p["url"].rsplit("/", 1)[1] for p in no_products["pages"]) == ["about.html", "index.html"]

    one_each = shop_client.post("/scrape", json={"url": start, "maxPerPattern": 1, "maxPages": 10,
                                                 "noBrowser": True}).json
    groups = {g["pattern"]: g for g in one_each["pageGroups"]}
    assert groups["/site_shop/products/*"]["sampled"] == 1 and groups["/site_shop/products/*"]["total"] == 3

    preview = shop_client.post("/scrape", json={"url": start, "maxPages": 1, "preview": True}).json["pages"][0]
    assert "markdown" not in preview and preview["charCount"] > 20 and preview["snippet"].startswith("# Welcome")

    only = shop_client.post("/scrape", json={"url": start, "only": [public(site, "site_shop/products/b.html")]}).json
    assert [p["title"] for p in only["pages"]] == ["Bell | Tiny Shop"]


def test_scrape_refuses_bad_requests(shop_client):
    assert shop_client.post("/scrape", json={"url": "ftp://x.test/"}).json["code"] == "bad_url"
    assert shop_client.post("/scrape", json={"url": "http://x.test/", "maxPages": 0}).status_code == 400
    assert shop_client.post("/scrape", json={}).status_code == 400


# --- following a long run: Accept: text/event-stream ------------------------------------------------
def read_events(resp: Any) -> list[tuple[str, Any]]:
    """The (event, data) pairs of a streamed answer, read as they arrive."""
    events: list[tuple[str, Any]] = []
    buffer = b""
    for chunk in resp.response:
        buffer += chunk if isinstance(chunk, bytes) else chunk.encode()
        while b"\n\n" in buffer:
            block, buffer = buffer.split(b"\n\n", 1)
            fields = dict(line.split(": ", 1) for line in block.decode().splitlines() if not line.startswith(":"))
            if "event" in fields:
                events.append((fields["event"], json.loads(fields["data"])))
    resp.close()
    return events


def check_progress(events: list[tuple[str, Any]], pages: int) -> dict[str, Any]:
    """The events' promises: progress as the run goes (done only grows, never past total), then the
    report last; returns the report."""
    kinds = [kind for kind, _ in events]
    assert kinds[-1] == "result" and kinds.count("result") == 1 and "error" not in kinds, kinds
    steps = [data for kind, data in events if kind == "progress"]
    done = [s["done"] for s in steps]
    assert done == sorted(done) and done[-1] == pages, steps
    # Some arrived while the run was still going: pages were left to do when they were sent.
    assert any(0 < s["done"] < pages for s in steps), steps
    assert all(s["done"] <= s["total"] and s["errors"] == 0 for s in steps), steps
    assert all(s["url"].startswith("http") for s in steps if s["done"]), steps  # the page last started
    return dict(events[-1][1])


def without_time(report: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in report.items() if k != "generatedAt"}


def test_a_scrape_streams_its_progress_then_the_plain_posts_report(shop_client, site):
    from support.site import MANY_PAGES

    body = {"url": public(site, "many/"), "maxPages": MANY_PAGES, "concurrency": 3}
    r = shop_client.post("/scrape", json=body, headers={"Accept": "text/event-stream"}, buffered=False)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    streamed = check_progress(read_events(r), MANY_PAGES)
    assert streamed["summary"]["httpPages"] == MANY_PAGES  # every page read over HTTP, none rendered
    plain = shop_client.post("/scrape", json=body)
    assert plain.status_code == 200 and plain.mimetype == "application/json"
    assert without_time(streamed) == without_time(plain.json)


def same_run(report: dict[str, Any]) -> dict[str, Any]:
    """An audit report normalized, less the browser's favicon request (made or not as its cache has it)."""
    out = normalized_report(report)
    for page in out["pages"]:
        for key in ("networkRequests", "brokenAssets"):
            page["browser"][key] = [r for r in page["browser"][key] if not r["url"].endswith("/favicon.ico")]
    return out


def test_an_audit_streams_its_progress_then_the_plain_posts_report(shop_client, site):
    urls = [public(site, f"many/p{n}.html") for n in range(1, 6)]
    body = {"urls": urls, "concurrency": 2, "options": {"screenshot": False}}
    r = shop_client.post("/audit", json=body, headers={"Accept": "text/event-stream"}, buffered=False)
    assert r.status_code == 200 and r.mimetype == "text/event-stream"
    streamed = check_progress(read_events(r), len(urls))
    plain = shop_client.post("/audit", json=body).json
    assert same_run(streamed) == same_run(plain)
    assert [p["title"] for p in streamed["pages"]] == [f"Page {n}" for n in range(1, 6)]


def test_a_bad_streamed_request_is_still_a_plain_4xx(shop_client):
    sse = {"Accept": "text/event-stream"}
    r = shop_client.post("/scrape", json={"url": "ftp://x.test/"}, headers=sse)
    assert r.status_code == 400 and r.json["code"] == "bad_url"
    r = shop_client.post("/audit", json={}, headers=sse)
    assert r.status_code == 400 and r.json["error"] and r.json["code"]


def test_a_stream_left_by_its_reader_stops_the_run(shop_client, site):
    from support.waits import wait_until

    from app.api import progress

    follow = progress.Progress()
    follow.cancelled.set()
    with pytest.raises(progress.Cancelled):
        follow.check()
    # A reader that goes after the first event: the slot is given back, the run told to stop.
    hub = shop_client.application.extensions["pinchtab.debug"]
    before = hub.connections
    r = shop_client.post("/scrape", json={"url": public(site, "many/"), "maxPages": 30},
                         headers={"Accept": "text/event-stream"}, buffered=False)
    assert next(iter(r.response)).startswith(b": stream open")
    assert hub.connections == before + 1
    r.close()
    wait_until(lambda: hub.connections == before)
