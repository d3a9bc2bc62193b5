"""``POST /scrape``: crawl a site from one URL and keep each page's content as Markdown, with its
title, meta tags, JSON-LD and link counts, in the original's report schema (version 1.0).

HTTP first, the browser only where it is needed. Each page is fetched as a plain HTTP GET and
parsed without running it; a routing verdict then says whether the browser must render it:

* ``not-found``: a 404 or 410 never goes to the browser (rendering cannot bring it back);
* ``fetch-error``: the fetch failed (refused, unreachable, cut short) and the browser may do better;
* ``blocked-status:N``: the server refused a plain client (401, 403, 407, 429, 503);
* ``thin-content``: the extraction is shorter than ``MIN_CONTENT_CHARS``, a page built by scripts;
* ``enrich-all``: the caller asked for every page to be rendered (``browserRecommended`` stays as
  the verdict found it).

``noBrowser`` and ``preview`` record the verdict (``browserRecommended``, ``browserReasons``) and
render nothing; ``preview`` also withholds the Markdown (``charCount`` and a ``snippet`` instead);
``only`` takes exactly the URLs listed, at full fidelity, instead of crawling. A page the browser
rendered says ``source: "browser"``, with the rendered extraction; a failed rendering keeps the HTTP
one and says why in ``browserError``.

Where requests go: every URL, and every redirect hop, passes the navigation policy. The HTTP
fetches are made with the download policy's protections (``app.policy.netguard``: no internal hosts, each
hop checked, the address connected to checked, a size cap), by the browser's network stack, so no
request leaves this process itself; the browser renders under the navigation policy, as
``/navigate`` does. A page whose HTTP fetch the download policy refuses (a host on this machine,
say) is a ``fetch-error`` the browser may still render.

Each crawl worker keeps its tabs for the whole crawl, opened when first needed: one to parse the
fetched HTML in, one to fetch or render pages in (``_KeptTab``: how a kept tab is made ready for the
next page, and when it is replaced by a fresh one). None of them is anyone's current tab.
"""
from __future__ import annotations

import contextlib
import fnmatch
import re
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any
from urllib.parse import urlsplit

from cdp import page_facts
from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed
from cdp.page import evaluate, main_frame
from cdp.tab import Tab
from profiles.times import utc_iso

from ..policy import netguard
from ..web.errors import APIError
from .browser_state import BrowserState, Caller
from .progress import Progress
from .routes.transfer import browser_fetch
from .site_audit import SCHEMA_VERSION, SCRATCH_AGENT, load, refused_landing, scratch_tab

MARKDOWN_MAX = 50_000   # characters of one page's Markdown in a report
SNIPPET_CHARS = 240
SCRAPE_QUIET_S = 0.15   # a crawl reads content, not every late asset: a shorter quiet moment will do
MIN_CONTENT_CHARS = 500  # an HTTP extraction shorter than this is a page built by scripts
HTTP_MAX_BYTES = 5 << 20
HTML_PARSE_MAX = 2_000_000  # characters of a body handed to the parser
HTTP_TIMEOUT_S = 30.0
RENDER_TIMEOUT_S = 60.0
READY_TIMEOUT_S = 2.0  # a rendering tab made ready for its next page (else a fresh one is opened)
BLOCKED_STATUSES = frozenset({401, 403, 407, 429, 503})
NOT_FOUND = frozenset({404, 410})
_CHARSET = re.compile(rb"""<meta[^>]+charset=["']?([A-Za-z0-9_-]+)""", re.I)


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


def verdict(page: dict[str, Any]) -> tuple[bool, list[str]]:
    """Whether the browser should render a page its HTTP extraction gave, and why (the reasons)."""
    status = page.get("statusCode") or 0
    if status in NOT_FOUND:
        return False, []
    reasons = []
    if page.get("error"):
        reasons.append("fetch-error")
    if status in BLOCKED_STATUSES:
        reasons.append(f"blocked-status:{status}")
    if not reasons and len((page.get("markdown") or "").strip()) < MIN_CONTENT_CHARS:
        reasons.append("thin-content")
    return bool(reasons), reasons


class _Crawl:
    """The frontier and the findings of one scrape."""

    def __init__(self, req: dict[str, Any]) -> None:
        self.req = req
        start = urlsplit(req["url"])
        self.origin = f"{start.scheme}://{start.netloc}"
        self.queue: list[str] = list(dict.fromkeys(req["only"])) if req["only"] else [req["url"]]
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


@contextlib.contextmanager
def _fetch_tab(state: BrowserState) -> Iterator[Tab]:
    """A tab for HTTP fetches (the download machinery's way): nobody's, closed after."""
    browser = state.ensure(Caller(agent=SCRATCH_AGENT))
    tab = browser.new_tab()
    try:
        yield tab
    finally:
        with contextlib.suppress(CDPError, CDPTimeout, BrowserGone, TargetClosed):
            browser.close_tab(tab.id)


class _KeptTab:
    """A tab a crawl worker keeps from one page to the next, opened when first needed and closed
    with the crawl: opening a tab costs more than fetching or parsing a page. It is of one kind at a
    time (``_fetch_tab`` or ``scratch_tab``), so a worker holds no more tabs than it did with a tab
    per page; a page that needs the other kind closes it and opens one of that kind.

    A fetch tab is ready for the next fetch once ``browser_fetch`` returned; a rendering tab is made
    ready just before its next page (``_ready``), the way a fresh tab would be. A use that raised (a
    refused or failed fetch, a timeout, a page the browser could not load) may leave a request
    paused, a job running or a dialog open: that tab is closed, and the next page gets a fresh one,
    as it does when readying a tab fails.
    """

    def __init__(self, state: BrowserState) -> None:
        self.state = state
        self.opener: Callable[[BrowserState], contextlib.AbstractContextManager[Tab]] | None = None
        self.tab: Tab | None = None
        self._open = contextlib.ExitStack()

    @contextlib.contextmanager
    def use(self, opener: Callable[[BrowserState], contextlib.AbstractContextManager[Tab]],
            ready: Callable[[Tab], None] | None = None) -> Iterator[Tab]:
        """This worker's tab of ``opener``'s kind; ``ready`` prepares a tab kept from an earlier page."""
        tab = self.tab
        if tab is not None and self.opener is opener and tab.closed is None and ready is not None:
            try:
                tab.run(lambda: ready(tab), READY_TIMEOUT_S)
            except Exception:  # whatever the last page left, it is not this page's: a fresh tab instead
                self.close()
        if self.tab is None or self.opener is not opener or self.tab.closed is not None:
            self.close()
            self.tab = self._open.enter_context(opener(self.state))
            self.opener = opener
        tab = self.tab
        try:
            yield tab
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        self.tab = self.opener = None
        self._open.close()


def _ready(tab: Tab) -> None:
    """Make a tab that rendered a page what a fresh one would be for the next (on its worker, just
    before the next navigation, which unloads the last page): the last page's session storage and
    window name cleared, an empty network log (the next page's status is read from it), and a
    history that the next navigation resets, as it does in a new tab. Raises when it cannot (a
    dialog open, no document)."""
    evaluate(tab, main_frame(tab), "(() => { try { sessionStorage.clear() } catch (e) {} window.name = '' })()")
    tab.network.clear()
    tab.navigated = False


class _Worker:
    """What one crawl worker keeps for the whole crawl: a tab to parse HTML in, and one to fetch or
    render pages in. A crawl whose fetches are all refused never opens a parser."""

    def __init__(self, state: BrowserState) -> None:
        self.parser = _KeptTab(state)
        self.pages = _KeptTab(state)

    def close(self) -> None:
        self.pages.close()
        self.parser.close()


def _decode(body: bytes, content_type: str) -> str:
    """The body as text: the charset the headers name, else the one a <meta> names, else UTF-8."""
    charset = ""
    for part in content_type.split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key.lower() == "charset":
            charset = value.strip("\"' ")
    if not charset:
        found = _CHARSET.search(body[:2048])
        charset = found.group(1).decode("ascii") if found else "utf-8"
    try:
        return body.decode(charset, errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


class LandingRefused(RuntimeError):
    """The browser's page ended (after its redirects) where the navigation policy refuses to go."""


class _Scraper:
    """One scrape's machinery: the HTTP extraction, the rendering, the policies both obey."""

    def __init__(self, state: BrowserState, req: dict[str, Any], policy: netguard.Policy, deadline: float) -> None:
        self.state, self.req, self.policy, self.deadline = state, req, policy, deadline

    def left(self, cap: float) -> float:
        return max(1.0, min(cap, self.deadline - time.monotonic()))

    def vet(self, url: str) -> None:
        """The navigation policy's word on one URL (raises its APIError)."""
        self.state.navigation.check(url)

    def http(self, worker: _Worker, url: str) -> dict[str, Any]:
        """The HTTP extraction of ``url``: ``statusCode``, ``contentType``, ``facts`` or ``error``."""
        timeout_s = self.left(HTTP_TIMEOUT_S)
        max_bytes = min(self.state.config.security.download_max_bytes, HTTP_MAX_BYTES)
        try:
            netguard.check_url(url, self.policy)  # refused before a tab is opened for it
        except netguard.UnsafeURL as exc:
            return {"error": f"HTTP fetch refused: {exc.message}"}
        try:
            with worker.pages.use(_fetch_tab) as t:
                got = t.run(lambda: browser_fetch(t, url, self.policy, max_bytes, timeout_s, vet=self.vet),
                            timeout_s + 3)
        except APIError as exc:
            out: dict[str, Any] = {"error": f"HTTP fetch: {exc.message}"}
            status = (exc.details or {}).get("status")
            if isinstance(status, int):
                out["statusCode"] = status
            return out
        except (CDPError, CDPTimeout, BrowserGone, TargetClosed) as exc:
            return {"error": f"HTTP fetch: {exc}"}
        ctype = got["contentType"]
        out = {"statusCode": got["status"], "contentType": ctype}
        if "html" in ctype.lower() or not ctype:
            try:
                html = _decode(got["data"], ctype)[:HTML_PARSE_MAX]
                with worker.parser.use(scratch_tab) as parser:
                    out["facts"] = parser.run(lambda: page_facts.parsed(parser, html, got["url"]), 25.0)
            except (CDPError, CDPTimeout) as exc:  # a body the parser chokes on is a page without content
                out["error"] = f"HTML parse: {exc}"
        return out

    def render(self, worker: _Worker, url: str) -> dict[str, Any]:
        """The browser's extraction of ``url``: ``facts`` and ``statusCode``; raises when it fails."""
        with worker.pages.use(scratch_tab, ready=_ready) as tab:
            info = load(tab, url, self.left(RENDER_TIMEOUT_S), quiet_s=SCRAPE_QUIET_S)
            if info["url"].startswith("chrome-error://"):
                raise RuntimeError(f"{url} could not be loaded")
            refused = refused_landing(self.state.navigation, info["url"])
            if refused:
                raise LandingRefused(refused)
            facts = tab.run(lambda: page_facts.rendered(tab), 20.0)
            status = next((e.get("status") for e in tab.network.entries()
                           if str(e.get("resourceType", "")).lower() == "document" and e.get("status")), None)
        return {"facts": facts, "statusCode": status}

    def page(self, worker: _Worker, url: str) -> tuple[dict[str, Any], list[str]]:
        """One page end to end: the policy, the HTTP extraction, the verdict, the browser if it is
        needed and allowed. Returns the report entry and the links it found; never raises."""
        try:
            self.vet(url)  # a link the crawl found is a navigation of its own
        except APIError as exc:
            return {"url": url, "source": "http", "browserRecommended": False,
                    "error": f"navigation refused: {exc.message}"}, []
        try:
            return self._page(worker, url)
        except (CDPError, CDPTimeout, BrowserGone, TargetClosed) as exc:  # the browser failed us, not the page
            return {"url": url, "source": "http", "browserRecommended": False, "error": f"browser: {exc}"}, []

    def _page(self, worker: _Worker, url: str) -> tuple[dict[str, Any], list[str]]:
        got = self.http(worker, url)
        facts = got.get("facts") or {}
        page: dict[str, Any] = {"url": url, "source": "http"}
        for key in ("statusCode", "contentType"):
            if got.get(key):
                page[key] = got[key]
        if got.get("error"):
            page["error"] = got["error"]
        page["markdown"] = facts.get("markdown", "")
        recommended, reasons = verdict(page)
        render = recommended
        if self.req["enrichAll"] and not recommended and page.get("statusCode") not in NOT_FOUND:
            render, reasons = True, ["enrich-all"]
        page["browserRecommended"] = recommended
        if reasons:
            page["browserReasons"] = reasons
        links = list(facts.get("links", []))
        if render and not self.req["noBrowser"] and not self.req["preview"]:
            try:
                rendered = self.render(worker, url)
                if not (rendered["facts"] or {}).get("markdown", "").strip():
                    raise RuntimeError("browser extraction produced no content")
            except LandingRefused as exc:  # the page is off the policy: that is why it is not reported
                page["browserError"] = page["error"] = str(exc)
                page["markdown"], facts, links = "", {}, []
            except Exception as exc:  # a failed rendering keeps the HTTP extraction
                page["browserError"] = str(exc)
            else:
                facts = rendered["facts"]
                links += [u for u in facts.get("links", []) if u not in links]
                page.update(source="browser", markdown=facts.get("markdown", ""))
                page.pop("error", None)  # the browser reached the page: the HTTP failure no longer counts
                if rendered["statusCode"] and not page.get("statusCode"):
                    page["statusCode"] = rendered["statusCode"]
        return self._finish(page, facts, links), links

    def _finish(self, page: dict[str, Any], facts: dict[str, Any], links: list[str]) -> dict[str, Any]:
        """The entry as the report shows it: title first, the Markdown or its preview, the rest."""
        out: dict[str, Any] = {"url": page["url"]}
        if facts.get("title"):
            out["title"] = facts["title"]
        out.update({k: v for k, v in page.items() if k not in ("url", "markdown")})
        markdown = page.get("markdown") or ""
        if self.req["preview"]:
            out["charCount"] = len(markdown)
            out["snippet"] = _snippet(markdown)
        elif markdown:
            out["markdown"] = markdown[:MARKDOWN_MAX]
            if len(markdown) > MARKDOWN_MAX:
                out["truncated"] = True
        if facts.get("meta"):
            out["meta"] = facts["meta"]
        if facts.get("schema"):
            out["schema"] = facts["schema"]
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(page["url"]))
        internal = sum(1 for u in links if u.startswith(origin + "/") or u == origin)
        out["internalLinks"], out["externalLinks"] = internal, len(links) - internal
        return out


def _snippet(markdown: str) -> str:
    text = " ".join(markdown.split())
    return text if len(text) <= SNIPPET_CHARS else text[:SNIPPET_CHARS].rstrip() + "…"


def scrape(state: BrowserState, req: dict[str, Any], policy: netguard.Policy,
           progress: Progress | None = None) -> dict[str, Any]:
    """Run the crawl ``req`` describes (validated by ``ScrapeSchema``) and build its report;
    ``policy`` is the download policy the HTTP fetches obey. ``progress``, when given, hears of each
    page started and finished and of the pages found so far; its ``check`` may stop the crawl
    between batches."""
    crawl = _Crawl(req)
    deadline = time.monotonic() + req["timeoutSeconds"]
    scraper = _Scraper(state, req, policy, deadline)
    limit = len(crawl.queue) if req["only"] else req["maxPages"]
    workers = max(1, min(req["concurrency"], limit))
    timed_out = False

    def one(worker: _Worker, url: str) -> tuple[dict[str, Any], list[str]]:
        if progress is None:
            return scraper.page(worker, url)
        progress.started(url)
        page, links = scraper.page(worker, url)
        progress.finished(url, "error" in page)
        return page, links

    with contextlib.ExitStack() as stack:
        crew = [stack.enter_context(contextlib.closing(_Worker(state))) for _ in range(workers)]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="scrape") as pool:
            while crawl.queue and len(crawl.pages) < limit:
                if progress is not None:
                    progress.check()
                    # What is known now: the pages done and those queued, within the cap.
                    progress.found(min(limit, len(crawl.pages) + len(crawl.queue)))
                if time.monotonic() >= deadline:
                    timed_out = True
                    break
                batch = crawl.take(min(workers, limit - len(crawl.pages)))
                if not batch:
                    break
                for page, links in pool.map(lambda pu: one(*pu), zip(crew, batch, strict=False)):
                    crawl.pages.append(page)
                    for link in links:
                        if crawl.admit(link):
                            crawl.queue.append(link)
    if progress is not None:
        progress.found(len(crawl.pages))  # the crawl is over: what was done is the whole of it
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
        if p.get("contentType"):
            kind = p["contentType"].split(";")[0].strip().lower()
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
