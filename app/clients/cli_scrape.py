"""``pinchtab scrape``: a site scrape (``POST /scrape``) as the original's command runs it.

HTTP first: each page is read over plain HTTP and sent to the browser only when its extraction
says it needs one (``--enrich-all``: every page; ``--no-browser``: none, the verdicts still
recorded). ``--preview`` outlines the site (size, snippet and verdict per page, nothing rendered);
``--only URL`` (repeatable) then takes exactly the pages picked, at full fidelity. Prints a summary,
the report with ``--json``, or it as Markdown with ``--format md``; ``--output-dir`` writes
``report.json`` (and ``report.md``) there. ``--cookie``, ``--cookies-file`` and ``--profile`` choose
where the run happens, as for ``pinchtab audit``. On a terminal, one line of stderr says how far the
crawl is (``--quiet``: not).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from ..web.files import write_atomic
from . import cli_audit, cli_progress
from .cli_verbs import Ctx, Verbs, normalize_url

__all__ = ["register", "render_markdown"]

SCRAPE_TIMEOUT_S = 900.0  # the whole crawl, rendering included, outlasts the client's default timeout


def _listed(values: list[str] | None) -> list[str]:
    """A repeatable flag's values, each of which may also be a comma-separated list."""
    return [part.strip() for value in values or [] for part in value.split(",") if part.strip()]


def scrape(ctx: Ctx) -> None:
    """POST /scrape; a summary (an outline with ``--preview``), the report with ``--json``, or it as
    Markdown (``--format md``); ``--output-dir`` writes it to disk."""
    a = ctx.args
    url = normalize_url(a.url)
    cookies = cli_audit.run_cookies(a)  # a bad flag fails before a crawl runs
    body: dict[str, Any] = {"url": url}
    for flag, key in (("max_pages", "maxPages"), ("max_per_pattern", "maxPerPattern"),
                      ("concurrency", "concurrency"), ("timeout", "timeoutSeconds")):
        if getattr(a, flag) is not None:
            body[key] = getattr(a, flag)
    for flag in ("include", "exclude"):
        if _listed(getattr(a, flag)):
            body[flag] = _listed(getattr(a, flag))
    only = [normalize_url(u) for u in _listed(a.only)]
    if only:
        body["only"] = only
    for flag, key in (("preview", "preview"), ("enrich_all", "enrichAll"), ("no_browser", "noBrowser")):
        if getattr(a, flag):
            body[key] = True
    with cli_audit.where(ctx, cookies, only or [url], "scrape") as routing:
        report = cli_progress.run_report(ctx, "scrape", "/scrape", body, routing, SCRAPE_TIMEOUT_S, quiet=a.quiet)
    if a.output_dir:
        out = Path(a.output_dir)
        write_atomic(out / "report.json", (json.dumps(report, ensure_ascii=False, indent=2) + "\n").encode(),
                     mode=0o644, what="report.json")
        if a.format == "md":
            write_atomic(out / "report.md", render_markdown(report).encode(), mode=0o644, what="report.md")
        print(f"report written to {out / 'report.json'}", file=sys.stderr)
    elif a.format == "md":
        ctx.out.line(render_markdown(report))
        return
    if ctx.out.as_json:
        ctx.out.json(report)
    elif a.preview:
        ctx.out.line(outline(report))
    else:
        ctx.out.line(summary(report))


def _verdict(page: dict[str, Any]) -> str:
    if not page.get("browserRecommended"):
        return ""
    return " · needs browser: " + ",".join(str(r) for r in page.get("browserReasons") or [])


def outline(report: dict[str, Any]) -> str:
    """The preview: a line per page with its size and verdict, and its snippet, to pick pages for --only."""
    pages = report.get("pages") or []
    lines = [f"Preview: {len(pages)} page(s) discovered of {(report.get('site') or {}).get('totalDiscovered', 0)} · "
             "pick pages to expand with --only"]
    for p in pages:
        if p.get("error"):
            lines.append(f"  {p.get('url')} · error: {p['error']}{_verdict(p)}")
            continue
        lines.append(f"  {p.get('url')} · {p.get('charCount', 0)} chars{_verdict(p)}")
        if p.get("snippet"):
            lines.append(f"      {p['snippet']}")
    return "\n".join(lines)


def summary(report: dict[str, Any]) -> str:
    """One line for the run, one per page: where its content came from, or why there is none."""
    pages = report.get("pages") or []
    s = report.get("summary") or {}
    lines = [f"Scraped {len(pages)} page(s) · {s.get('httpPages', 0)} http · {s.get('browserPages', 0)} "
             f"browser-rendered · {s.get('failedPages', 0)} failed"]
    for p in pages:
        status = f"source: {p.get('source')}"
        if p.get("browserError"):
            status += f" · browser failed: {p['browserError']}"
        if p.get("error"):
            status = f"error: {p['error']}"
        lines.append(f"  {p.get('url')} · {status}")
    return "\n".join(lines)


def render_markdown(report: dict[str, Any]) -> str:
    """The report as one Markdown digest: the site, its page tree by URL pattern, each page's content
    (its snippet in a preview)."""
    site = report.get("site") or {}
    pages = report.get("pages") or []
    lines = [f"# Site scrape: {site.get('title') or site.get('baseUrl', '')}", "",
             f"- Base URL: {site.get('baseUrl', '')}", f"- Generated: {report.get('generatedAt', '')}",
             f"- Pages: {len(pages)} of {site.get('totalDiscovered', 0)} discovered", "", "## Page tree", ""]
    for g in report.get("pageGroups") or []:
        lines.append(f"- `{g.get('pattern')}` ({g.get('sampled')} of {g.get('total')})")
        lines += [f"  - {u}" for u in g.get("urls") or []]
    lines.append("")
    for p in pages:
        lines += [f"## {p.get('title') or p.get('url')}", "", f"- URL: {p.get('url')}",
                  f"- Source: {p.get('source')}{_verdict(p)}"]
        if p.get("error"):
            lines.append(f"- Error: {p['error']}")
        lines.append("")
        body = p.get("markdown") or p.get("snippet") or ""
        if body:
            lines += [str(body), ""]
    return "\n".join(lines).rstrip() + "\n"


def register(sub: Any) -> None:
    """Add ``scrape`` to the ``pinchtab`` subparsers."""
    v = Verbs(sub)
    p = v.add("scrape", "crawl a site and extract its pages (HTTP first, the browser where needed)", scrape,
              description="Crawl a site from a URL into Markdown, page by page: over HTTP first, in the browser "
                          "only for the pages that need it.")
    p.add_argument("url")
    p.add_argument("--preview", action="store_true",
                   help="an outline: size, snippet and verdict per page; nothing rendered, no full bodies")
    p.add_argument("--only", action="append", metavar="URL",
                   help="take exactly these URLs at full fidelity instead of crawling (repeatable, or comma-separated)")
    p.add_argument("--max-pages", type=int, metavar="N", help="at most N pages in all")
    p.add_argument("--max-per-pattern", type=int, metavar="N", help="at most N pages of each URL pattern (/blog/*)")
    p.add_argument("--include", action="append", metavar="GLOB", help="only crawl paths matching (repeatable)")
    p.add_argument("--exclude", action="append", metavar="GLOB", help="skip paths matching (repeatable)")
    p.add_argument("--enrich-all", action="store_true", help="render every page in the browser, whatever its verdict")
    p.add_argument("--no-browser", action="store_true", help="HTTP only: record the verdicts, render nothing")
    p.add_argument("--concurrency", type=int, metavar="N", help="pages at a time (default 2)")
    p.add_argument("--timeout", type=int, metavar="SECONDS", help="the whole crawl's time (default 120)")
    p.add_argument("--output-dir", metavar="DIR", help="write report.json (and report.md) here")
    p.add_argument("--format", choices=("json", "md"), default="json",
                   help="md: the report as Markdown (into --output-dir, else on stdout)")
    cli_audit.add_instance_flags(p, "crawled")
