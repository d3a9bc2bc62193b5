"""``POST /scrape``: crawl a site from one URL and keep each page's content as Markdown, with its
title, meta tags, JSON-LD and link counts, in the original's report schema (version 1.0).

Pages are rendered in the browser by default (what an agent would see, scripts run). With
``noBrowser`` they are fetched by the site's own page and parsed without running them: faster,
and enough for server-rendered sites. Either way requests go out through the browser (its cookies
and proxy), never from this process, and the crawl stays on the start URL's origin. Each page
passes the navigation policy before it loads and where it ended after redirects; one that ended
off it is an entry with ``error``, and its content is not kept.
"""
from __future__ import annotations

import contextlib
import fnmatch
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from cdp import page_facts
from cdp.tab import Tab
from profiles.times import utc_iso

from ..navigation_policy import NavigationPolicy
from .browser_state import BrowserState
from .site_audit import SCHEMA_VERSION, load, refused_landing, scratch_tab

MARKDOWN_MAX = 50_000   # characters of one page's Markdown in a report
SNIPPET_CHARS = 240
SCRAPE_QUIET_S = 0.15   # a crawl reads content, not every late asset: a shorter quiet moment will do


def pattern_of(url: str) -> str:
    """The URL-pattern group of a page, its folder: ``/blog/post-1`` -> ``/blog/*``; ``/about`` stays."""
    parts = [p for p in urlsplit(url).path.split("/") if p]
    if len(parts) <= 1:
        return "/" + "/".join(parts)
    return "/" + "/".join(parts[:-1]) + "/*"


def _matches(url: str, patterns: list[str]) -> bool:
    """Globs match the URL's path (``/blog/*``) or, when they start with a scheme, the whole URL."""
    path = urlsplit(url).path or "/"
    return any(fnmatch.fnmatchcase(url if "://" in p else path, p) for p in patterns)


class _Crawl:
    """The frontier and the findings of one scrape."""

    def __init__(self, req: dict[str, Any]) -> None:
        self.req = req
        start = urlsplit(req["url"])
        self.origin = f"{start.scheme}://{start.netloc}"
        self.queue: list[str] = list(req["only"]) if req["only"] else [req["url"]]
        self.seen: set[str] = set(self.queue)
        self.groups: dict[str, list[str]] = {}
        self.pages: list[dict[str, Any]] = []

    def admit(self, url: str) -> bool:
        """Whether a discovered link joins the crawl (same origin, the filters, the caps)."""
        if url in self.seen or self.req["only"] or not url.startswith(self.origin + "/") and url != self.origin:
            return False
        self.seen.add(url)
        if self.req["include"] and not _matches(url, self.req["include"]):
            return False
        if self.req["exclude"] and _matches(url, self.req["exclude"]):
            return False
        return True

    def take(self, n: int) -> list[str]:
        """Up to ``n`` next URLs, skipping those whose pattern group is full."""
        cap = self.req["maxPerPattern"]
        out: list[str] = []
        while self.queue and len(out) < n:
            url = self.queue.pop(0)
            group = self.groups.setdefault(pattern_of(url), [])
            if cap and len(group) >= cap:
                continue
            group.append(url)
            out.append(url)
        return out


def _page(url: str, source: str, result: dict[str, Any], origin: str, preview: bool) -> dict[str, Any]:
    facts = result.get("facts") or {}
    page: dict[str, Any] = {"url": result.get("url") or url, "source": source}
    if facts.get("title"):
        page["title"] = facts["title"]
    for key in ("statusCode", "contentType"):
        if result.get(key):
            page[key] = result[key]
    markdown = facts.get("markdown", "")
    if preview:
        page["charCount"] = len(markdown)
        page["snippet"] = " ".join(markdown.split())[:SNIPPET_CHARS]
    else:
        page["markdown"] = markdown[:MARKDOWN_MAX]
        if len(markdown) > MARKDOWN_MAX:
            page["truncated"] = True
    if facts.get("meta"):
        page["meta"] = facts["meta"]
    if facts.get("schema"):
        page["schema"] = facts["schema"]
    links = facts.get("links", [])
    page["internalLinks"] = sum(1 for u in links if u.startswith(origin + "/") or u == origin)
    page["externalLinks"] = len(links) - page["internalLinks"]
    return page


def _scrape_one(tab: Tab, url: str, req: dict[str, Any], origin: str, deadline: float,
                policy: NavigationPolicy) -> tuple[dict[str, Any], list[str]]:
    left = max(1.0, deadline - time.monotonic())
    try:
        policy.check(url)  # a link the crawl found is a navigation of its own
        if req["noBrowser"]:
            result = tab.run(lambda: page_facts.fetched(tab, url, left), left + 2)
            result["statusCode"] = result.pop("status", None)
            _refuse_landing(policy, result.get("url") or url)
            source = "http"
        else:
            info = load(tab, url, min(left, 60.0), quiet_s=SCRAPE_QUIET_S)
            if info["url"].startswith("chrome-error://"):
                raise RuntimeError(f"{url} could not be loaded")
            _refuse_landing(policy, info["url"])
            result = {"url": info["url"], "facts": tab.run(lambda: page_facts.rendered(tab), 20.0)}
            source = "browser"
    except Exception as exc:  # one page failing is a finding of the crawl, not its end
        return {"url": url, "source": "browser" if not req["noBrowser"] else "http", "error": str(exc)}, []
    page = _page(url, source, result, origin, req["preview"])
    return page, (result.get("facts") or {}).get("links", [])


def _refuse_landing(policy: NavigationPolicy, url: str) -> None:
    refused = refused_landing(policy, url)
    if refused:
        raise RuntimeError(refused)


def scrape(state: BrowserState, req: dict[str, Any]) -> dict[str, Any]:
    """Run the crawl ``req`` describes (validated by ``ScrapeSchema``) and build its report."""
    crawl = _Crawl(req)
    deadline = time.monotonic() + req["timeoutSeconds"]
    limit = len(req["only"]) if req["only"] else req["maxPages"]
    workers = max(1, min(req["concurrency"], limit))
    timed_out = False
    with contextlib.ExitStack() as stack:
        tabs = [stack.enter_context(scratch_tab(state)) for _ in range(workers)]
        if req["noBrowser"]:
            # The page that fetches must be on the site's origin for its fetches to be same-origin.
            for t in tabs:
                info = load(t, req["url"], min(60.0, req["timeoutSeconds"]))
                state.navigation.check(info["url"])  # where a redirect took it: refused like the URL itself
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="scrape") as pool:
            while crawl.queue and len(crawl.pages) < limit:
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
                batch = crawl.take(min(workers, limit - len(crawl.pages)))
                if not batch:
                    break
                for page, links in pool.map(lambda tu: _scrape_one(tu[0], tu[1], req, crawl.origin, deadline,
                                                                   state.navigation),
                                            zip(tabs, batch, strict=False)):  # a last batch may be short
                    crawl.pages.append(page)
                    for link in links:
                        if crawl.admit(link):
                            crawl.queue.append(link)
    return _report(req, crawl, timed_out)


def _report(req: dict[str, Any], crawl: _Crawl, timed_out: bool) -> dict[str, Any]:
    pages = crawl.pages
    discovered: dict[str, int] = {}
    for url in crawl.seen:
        discovered[pattern_of(url)] = discovered.get(pattern_of(url), 0) + 1
    scraped = {p["url"] for p in pages}
    groups = [{"pattern": pat, "total": discovered.get(pat, len(urls)), "sampled": len(urls),
               "urls": [u for u in urls if u in scraped] or urls}
              for pat, urls in sorted(crawl.groups.items())]
    types: dict[str, int] = {}
    for p in pages:
        kind = (p.get("contentType") or "text/html").split(";")[0].strip()
        types[kind] = types.get(kind, 0) + 1
    summary: dict[str, Any] = {
        "contentTypes": types,
        "httpPages": sum(1 for p in pages if p["source"] == "http" and "error" not in p),
        "browserPages": sum(1 for p in pages if p["source"] == "browser" and "error" not in p),
        "failedPages": sum(1 for p in pages if "error" in p),
    }
    if timed_out:
        summary["timedOut"] = True
        summary["recommendations"] = [f"stopped after timeoutSeconds={req['timeoutSeconds']}; "
                                      "raise it or lower maxPages for a complete crawl"]
    first = next((p for p in pages if "title" in p), {})
    return {
        "schemaVersion": SCHEMA_VERSION, "generatedAt": utc_iso(),
        "input": {"url": req["url"], "maxPages": req["maxPages"], "maxPerPattern": req["maxPerPattern"],
                  "includePatterns": req["include"], "excludePatterns": req["exclude"]},
        "site": {"baseUrl": crawl.origin, "title": first.get("title", ""), "sitemapFound": False,
                 "totalDiscovered": len(crawl.seen), "sampledPages": len(pages)},
        "pageGroups": groups, "pages": pages, "summary": summary,
    }
