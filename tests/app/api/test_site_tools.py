"""Site QA and runtime figures against real Chromium: /timing, /metrics, /a11y/audit, /audit/page,
/audit and /scrape, on a tiny shop the tests serve."""
from __future__ import annotations

import base64
import socket

import pytest


def nav(client, url):
    r = client.post("/navigate", json={"url": url})
    assert r.status_code == 200, r.json
    return r.json["tabId"]


@pytest.fixture(scope="module")
def shop_client(browser, tmp_path_factory):
    from app.api import create_app
    from support.config import make_config

    before = {p["targetId"] for p in browser.pages()}
    app = create_app(make_config(tmp_path_factory.mktemp("site")), start_browser=False,
                     browser_factory=lambda: browser)
    app.extensions["pinchtab"].start(background=False)
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
    assert r.json["score"] == 100 - (2 * 5 + 5 + 5 + 5) - (3 + 3) - 1   # serious 5, moderate 3, minor 1 each
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
    assert 0 < report["summaryScore"] < 100
    assert any("missing-alt" in line for line in report["recommendations"])

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


def test_scrape_crawls_the_site_into_markdown(shop_client, site):
    r = shop_client.post("/scrape", json={"url": site.url("site_shop/index.html"), "maxPages": 4})
    assert r.status_code == 200, r.json
    report = r.json
    pages = {p["url"].rsplit("/site_shop/", 1)[1]: p for p in report["pages"]}
    assert len(pages) == 4 and "index.html" in pages
    home = pages["index.html"]
    assert home["source"] == "browser" and home["title"] == "Tiny Shop"
    assert "# Welcome to Tiny Shop" in home["markdown"] and "- Anvil" in home["markdown"]
    assert home["meta"]["description"] == "A tiny shop for scrape tests"
    assert home["schema"][0]["@type"] == "Store"
    assert home["externalLinks"] == 1 and home["internalLinks"] >= 5
    assert all(u.startswith(report["site"]["baseUrl"]) for u in (p["url"] for p in report["pages"]))
    assert {"/site_shop/*", "/site_shop/products/*"} >= {g["pattern"] for g in report["pageGroups"]}
    assert report["summary"]["browserPages"] == 4 and report["summary"]["failedPages"] == 0


def test_scrape_filters_caps_previews_and_fetches_without_rendering(shop_client, site):
    start = site.url("site_shop/index.html")
    no_products = shop_client.post("/scrape", json={"url": start, "exclude": ["/site_shop/products/*"]}).json
    assert sorted(p["url"].rsplit("/", 1)[1] for p in no_products["pages"]) == ["about.html", "index.html"]

    one_each = shop_client.post("/scrape", json={"url": start, "maxPerPattern": 1, "maxPages": 10}).json
    groups = {g["pattern"]: g for g in one_each["pageGroups"]}
    assert groups["/site_shop/products/*"]["sampled"] == 1 and groups["/site_shop/products/*"]["total"] == 3

    preview = shop_client.post("/scrape", json={"url": start, "maxPages": 1, "preview": True}).json["pages"][0]
    assert "markdown" not in preview and preview["charCount"] > 20 and preview["snippet"].startswith("# Welcome")

    fetched = shop_client.post("/scrape", json={"url": start, "maxPages": 2, "noBrowser": True}).json
    assert [p["source"] for p in fetched["pages"]] == ["http", "http"]
    assert "# Welcome to Tiny Shop" in fetched["pages"][0]["markdown"]
    assert fetched["pages"][0]["statusCode"] == 200

    only = shop_client.post("/scrape", json={"url": start, "only": [site.url("site_shop/products/b.html")]}).json
    assert [p["title"] for p in only["pages"]] == ["Bell | Tiny Shop"]


def test_scrape_refuses_bad_requests(shop_client):
    assert shop_client.post("/scrape", json={"url": "ftp://x.test/"}).json["code"] == "bad_url"
    assert shop_client.post("/scrape", json={"url": "http://x.test/", "maxPages": 0}).status_code == 400
    assert shop_client.post("/scrape", json={}).status_code == 400
