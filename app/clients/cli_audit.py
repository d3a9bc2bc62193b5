"""``pinchtab audit``: a site audit (``POST /audit``) as the original's command runs it.

One or more URLs (or ``--sitemap`` URL, or the pages of a SeaPortal report with
``--seaportal-report FILE``) are audited into one report: a summary line per page, the whole report
with ``--json``, or the report rendered as Markdown or HTML (``--format md|html``). A SeaPortal
report's pages go to the browser when it recommends it (every one with ``--enrich-all``); the
others are reported from the file. ``--output-dir`` keeps it on disk: ``report.json`` with each
page's screenshot moved to ``screenshots/page-NNN.png`` (the page's ``browser.screenshotPath``), and
``report.md`` or a self-contained ``report.html`` beside it.

Where the run happens (server mode): ``--profile P`` audits in the running instance of that profile;
``--cookie``/``--cookies-file`` audit in a temporary instance of its own, the cookies set there first
and gone with it, so they never touch a kept profile nor a later run. Both reach their instance the
way the server routes any request: by a ``tabId`` of that instance.

On a terminal, one line of stderr says how far the audit is (``--quiet``: not); stdout is the same.
"""
from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import html
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from ..web.files import write_atomic
from . import cli_progress
from .cli_verbs import Ctx, UsageError, Verbs, normalize_url, server_only
from .rest import ClientError

__all__ = ["register", "render", "run_cookies", "where"]

AUDIT_TIMEOUT_S = 600.0  # a multi-page audit outlasts the client's default timeout
INSTANCE_START_S = 60.0  # how long a temporary instance gets to come up
_POLL_S = 0.2
_FORMATS = ("json", "md", "html")
_COOKIE_FIELDS = ("name", "value", "domain", "path", "secure", "httpOnly", "sameSite", "expires")


# --------------------------------------------------------------------------
# Cookies and where the run happens


def add_instance_flags(p: argparse.ArgumentParser, pages: str) -> None:
    """Where a long run goes (``--cookie``/``--cookies-file``: a temporary instance; ``--profile``), as
    :func:`run_cookies` and :func:`where` read them, and ``--quiet`` for its progress line."""
    p.add_argument("--cookie", action="append", metavar="NAME=VALUE",
                   help=f"a cookie for the {pages} pages (repeatable); the run gets a temporary instance (server mode)")
    p.add_argument("--cookies-file", metavar="FILE", help="cookies from a JSON array of {name, value, ...} objects")
    p.add_argument("--profile", metavar="NAME", help="run in the running instance of this profile (server mode)")
    cli_progress.add_quiet_flag(p)


def run_cookies(args: argparse.Namespace) -> list[dict[str, Any]]:
    """The cookies of ``--cookie name=value`` (repeatable) and ``--cookies-file`` (a JSON array of
    ``{name, value, domain?, path?, ...}``), checked before any server work starts."""
    cookies: list[dict[str, Any]] = []
    for raw in args.cookie or []:
        name, sep, value = raw.partition("=")
        if not sep or not name.strip():
            raise UsageError(f"--cookie wants name=value, not {raw!r}")
        cookies.append({"name": name.strip(), "value": value})
    if args.cookies_file:
        path = Path(args.cookies_file)
        try:
            listed = json.loads(path.read_text(encoding="utf-8-sig"))
        except ValueError as exc:
            raise UsageError(f"the cookies file {args.cookies_file} is not valid JSON: {exc}") from None
        shape = f"the cookies file {args.cookies_file} must be a JSON array of {{name, value, ...}} objects"
        if not isinstance(listed, list):
            raise UsageError(shape)
        for item in listed:
            if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item["name"] or \
                    not isinstance(item.get("value"), str):
                raise UsageError(shape)
            cookies.append({k: item[k] for k in _COOKIE_FIELDS if k in item})
    return cookies


def _origins(urls: list[str]) -> list[str]:
    """``scheme://host[:port]/`` of each URL, once each: where the cookies are set."""
    out: list[str] = []
    for url in urls:
        parts = urlsplit(url)
        if parts.scheme in ("http", "https") and parts.netloc:
            origin = f"{parts.scheme}://{parts.netloc}/"
            if origin not in out:
                out.append(origin)
    return out


def _wait_running(ctx: Ctx, instance_id: str) -> None:
    deadline = time.monotonic() + INSTANCE_START_S
    while True:
        status = ctx.client.get(f"/instances/{instance_id}").get("status")
        if status == "running":
            return
        if status in ("error", "stopped", "stopping"):
            raise ClientError(f"the temporary instance {instance_id} is {status}; see: pinchtab instance logs "
                              f"{instance_id}", code="instance_unavailable")
        if time.monotonic() > deadline:
            raise ClientError(f"the temporary instance {instance_id} did not start within {INSTANCE_START_S:g} s",
                              code="timeout")
        time.sleep(_POLL_S)


@contextlib.contextmanager
def _temporary_instance(ctx: Ctx, cookies: list[dict[str, Any]], urls: list[str],
                        verb: str) -> Iterator[dict[str, str]]:
    """A temporary instance with ``cookies`` set for the URLs' origins; the query that routes there.
    It is stopped afterwards, which deletes its profile and the cookies with it."""
    origins = _origins(urls)
    if not origins:
        raise UsageError("--cookie and --cookies-file need an http(s) URL to set the cookies for")
    record = server_only(ctx, "POST", "/instances/start", {}, what=f"{verb} --cookie")
    instance = str(record["id"])
    try:
        _wait_running(ctx, instance)
        tab = ctx.client.post(f"/instances/{instance}/tabs/open", {"url": "about:blank"})["tabId"]
        for origin in origins:
            done = ctx.client.post("/cookies", {"tabId": tab, "url": origin, "cookies": cookies})
            if done.get("set") != len(cookies):
                raise ClientError(f"cookie injection incomplete: set {done.get('set')} of {len(cookies)} cookies "
                                  f"for {origin}", code="cookies_not_set")
        yield {"tabId": tab}
    finally:
        try:
            ctx.client.post(f"/instances/{instance}/stop")
        except ClientError as exc:
            print(f"Warning: could not stop the temporary instance {instance}: {exc.message}", file=sys.stderr)


@contextlib.contextmanager
def _profile_instance(ctx: Ctx, profile: str, verb: str) -> Iterator[dict[str, str]]:
    """The query that routes to the running instance of ``profile`` (one of its tabs; a blank one
    opened for the run, and closed after, when it has none)."""
    instances = server_only(ctx, "GET", "/instances", what=f"{verb} --profile")
    found = next((i for i in instances if i.get("profileName") == profile and i.get("status") == "running"), None)
    if found is None:
        raise ClientError(f"no running instance for profile {profile!r} (start one: pinchtab instance start "
                          f"--profile {profile})", status=404, code="no_instance")
    tabs = ctx.client.get(f"/instances/{found['id']}/tabs")
    opened = None if tabs else ctx.client.post(f"/instances/{found['id']}/tabs/open", {"url": "about:blank"})["tabId"]
    try:
        yield {"tabId": opened or tabs[0]["id"]}
    finally:
        if opened:
            with contextlib.suppress(ClientError):
                ctx.client.post("/close", {"tabId": opened})


def where(ctx: Ctx, cookies: list[dict[str, Any]], urls: list[str],
          verb: str = "audit") -> contextlib.AbstractContextManager[dict[str, str]]:
    """Where the run of ``verb`` (audit, scrape) happens: the query routing its request there (none:
    the server's choice)."""
    if cookies and ctx.args.profile:
        raise UsageError("--profile cannot be combined with --cookie or --cookies-file: a run with cookies uses a "
                         "temporary instance of its own")
    if cookies:
        return _temporary_instance(ctx, cookies, urls, verb)
    if ctx.args.profile:
        return _profile_instance(ctx, ctx.args.profile, verb)
    return contextlib.nullcontext({})


# --------------------------------------------------------------------------
# The verb


def seaportal_report(path: str) -> list[Any]:
    """The results array of a SeaPortal report file, checked before any server work starts."""
    try:
        results = json.loads(Path(path).read_text(encoding="utf-8-sig"))
    except OSError as exc:
        raise UsageError(f"cannot read the SeaPortal report {path}: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise UsageError(f"the SeaPortal report {path} is not valid JSON: {exc}") from None
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise UsageError(f"the SeaPortal report {path} must be a JSON array of SeaPortal result objects")
    return results


def audit(ctx: Ctx) -> None:
    """POST /audit; the summary, the report (``--json``), or it rendered (``--format``); ``--output-dir``
    writes it to disk."""
    a = ctx.args
    urls = [normalize_url(u) for u in a.urls]
    if a.seaportal_report and (urls or a.sitemap):
        raise UsageError("--seaportal-report names the pages itself: give no URL (and no --sitemap)")
    if not a.seaportal_report and not urls:
        raise UsageError("pinchtab audit <url>... | <sitemap-url> --sitemap | --seaportal-report FILE")
    if a.enrich_all and not a.seaportal_report:
        raise UsageError("--enrich-all goes with --seaportal-report")
    if a.sitemap and len(urls) != 1:
        raise UsageError("pinchtab audit <sitemap-url> --sitemap  (one sitemap)")
    cookies = run_cookies(a)  # a bad flag fails before an audit runs
    body: dict[str, Any]
    if a.seaportal_report:
        results = seaportal_report(a.seaportal_report)
        body = {"seaportalResults": results, "seaportalFile": a.seaportal_report}
        if a.enrich_all:
            body["enrichAll"] = True
        # The cookies go to the origins of the report's pages.
        urls = [r["url"] for r in results if isinstance(r.get("url"), str) and r["url"].strip()]
    else:
        body = {"sitemapUrl": urls[0]} if a.sitemap else {"urls": urls}
    body["options"] = {"screenshot": a.screenshot, "network": a.network_monitor}
    if a.concurrency:
        body["concurrency"] = a.concurrency
    if a.sample_size:
        body["sampleSize"] = a.sample_size
    with where(ctx, cookies, urls) as routing:
        report = cli_progress.run_report(ctx, "audit", "/audit", body, routing, AUDIT_TIMEOUT_S, quiet=a.quiet)
    if a.output_dir:
        out = Path(a.output_dir)
        write_artifacts(out, report)
        if a.format != "json":
            write_atomic(out / f"report.{a.format}", render(report, a.format).encode(), mode=0o644,
                         what=f"report.{a.format}")
        print(f"report written to {out / 'report.json'}", file=sys.stderr)
    elif a.format != "json":
        ctx.out.line(render(report, a.format))
        return
    if ctx.out.as_json:
        ctx.out.json(report)
    else:
        ctx.out.line(summary(report))


def _shot(page: dict[str, Any]) -> str | None:
    """A page's inline screenshot (base64): the report keeps it on the page; older servers put it
    under ``browser``."""
    for holder in (page, _browser(page)):
        if isinstance(holder.get("screenshot"), str) and holder["screenshot"]:
            return str(holder["screenshot"])
    return None


def write_artifacts(out: Path, report: dict[str, Any]) -> None:
    """``report.json`` in ``out``, each page's screenshot moved from the report into
    ``screenshots/page-NNN.png`` and named by its ``browser.screenshotPath`` (relative to ``out``)."""
    for i, page in enumerate(report.get("pages") or [], 1):
        shot = _shot(page)
        if shot is None:
            continue
        page.pop("screenshot", None)
        browser = page.setdefault("browser", {})
        if not isinstance(browser, dict):
            continue
        browser.pop("screenshot", None)
        try:
            png = base64.b64decode(shot, validate=True)
        except (binascii.Error, ValueError):
            continue
        rel = f"screenshots/page-{i:03d}.png"
        write_atomic(out / rel, png, mode=0o644, what=rel)
        browser["screenshotPath"] = rel
    write_atomic(out / "report.json", (json.dumps(report, ensure_ascii=False, indent=2) + "\n").encode(),
                 mode=0o644, what="report.json")


def summary(report: dict[str, Any]) -> str:
    """One line for the run, one per page: what a person reads after ``pinchtab audit <url>``."""
    pages = report.get("pages") or []
    broken = sum(len(_browser(p).get("brokenAssets") or []) for p in pages)
    failed = sum(1 for p in pages if p.get("error"))
    lines = [f"Audited {len(pages)} page(s) · summary score {report.get('summaryScore')} · {broken} broken asset(s) "
             f"· {failed} failed page(s)"]
    lines += [f"  {p.get('url')} · {'error: ' + p['error'] if p.get('error') else 'ok'}" for p in pages]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# Rendering: the report as sections of tables, lists and images, then as Markdown or HTML


@dataclass
class _Section:
    title: str
    headers: tuple[str, ...] = ()
    rows: list[list[str]] = field(default_factory=list)
    items: list[str] = field(default_factory=list)
    images: list[tuple[str, str]] = field(default_factory=list)  # (caption, src)
    note: str = ""


def _browser(page: dict[str, Any]) -> dict[str, Any]:
    found = page.get("browser")
    return found if isinstance(found, dict) else {}


def _ms(value: Any) -> str:
    return f"{value:.0f} ms" if isinstance(value, int | float) and value else "-"


def _sections(report: dict[str, Any]) -> list[_Section]:
    pages = report.get("pages") or []
    out = [_Section("Summary", ("Page", "Accessibility", "Load", "Broken assets", "Console errors", "Status"),
                    note=f"Summary score: {report.get('summaryScore', '-')}/100")]
    for p in pages:
        b = _browser(p)
        errors = sum(1 for c in b.get("consoleLogs") or [] if c.get("level") == "error")
        out[0].rows.append([str(p.get("url", "")), str(b.get("accessibilityScore", "-")),
                            _ms((b.get("timingMetrics") or {}).get("loadMs")), str(len(b.get("brokenAssets") or [])),
                            str(errors), f"error: {p['error']}" if p.get("error") else "ok"])
    timing = _Section("Performance", ("Page", "TTFB", "FCP", "LCP", "CLS", "DOMContentLoaded", "Load"))
    for p in pages:
        t = _browser(p).get("timingMetrics") or {}
        if t:
            timing.rows.append([str(p.get("url", "")), _ms(t.get("ttfbMs")), _ms(t.get("fcpMs")), _ms(t.get("lcpMs")),
                                str(t.get("cls", "-")), _ms(t.get("domContentLoadedMs")), _ms(t.get("loadMs"))])
    console = _Section("Console & JS Errors")
    console.items = [f"{p.get('url')}: [{c.get('level')}] {c.get('message', '')}" for p in pages
                     for c in _browser(p).get("consoleLogs") or [] if c.get("level") in ("error", "warning")]
    broken = _Section("Broken Assets", ("Page", "Asset", "Type", "Status"))
    broken.rows = [[str(p.get("url", "")), str(a.get("url", "")), str(a.get("resourceType", "")),
                    str(a.get("status") or a.get("error") or "-")] for p in pages for a in _browser(p).get(
                        "brokenAssets") or []]
    a11y = _Section("Accessibility")
    a11y.items = [f"{p.get('url')}: accessibility score {_browser(p)['accessibilityScore']}/100" for p in pages
                  if isinstance(_browser(p).get("accessibilityScore"), int) and _browser(p)["accessibilityScore"] < 100]
    security = _Section("Security", ("Page", "Rule", "Severity", "Detail"))
    security.rows = [[str(f.get("url", "")), str(f.get("ruleId", "")), str(f.get("severity", "")),
                      str(f.get("detail", ""))] for f in report.get("securityFindings") or []]
    shots = _Section("Screenshots")
    for p in pages:
        b = _browser(p)
        if b.get("screenshotPath"):
            shots.images.append((str(p.get("url", "")), str(b["screenshotPath"])))
        elif _shot(p):  # not written to disk: inline, so the page stands alone
            shots.images.append((str(p.get("url", "")), "data:image/png;base64," + str(_shot(p))))
    recs = _Section("Recommendations", items=recommendations(report))
    return [s for s in (*out, timing, console, broken, a11y, security, shots, recs)
            if s.rows or s.items or s.images or s.note]


def recommendations(report: dict[str, Any]) -> list[str]:
    """What to fix first, in plain words, read off the report (the server's own, when it sends some)."""
    if report.get("recommendations"):
        return [str(r) for r in report["recommendations"]]
    pages = report.get("pages") or []
    out = []
    failed = [str(p.get("url")) for p in pages if p.get("error")]
    if failed:
        out.append(f"{len(failed)} page(s) did not load: {', '.join(failed[:3])}")
    high = [f for f in report.get("securityFindings") or [] if f.get("severity") in ("high", "critical")]
    if high:
        out.append(f"Fix {len(high)} high-severity security finding(s) ({high[0].get('ruleId')} first)")
    broken = sum(len(_browser(p).get("brokenAssets") or []) for p in pages)
    if broken:
        out.append(f"Fix {broken} broken asset(s) (failed requests or HTTP status >= 400)")
    low = [p for p in pages if isinstance(_browser(p).get("accessibilityScore"), int)
           and _browser(p)["accessibilityScore"] < 100]
    if low:
        out.append(f"Improve accessibility on {len(low)} page(s) (lowest score "
                   f"{min(_browser(p)['accessibilityScore'] for p in low)}/100)")
    errors = sum(1 for p in pages for c in _browser(p).get("consoleLogs") or [] if c.get("level") == "error")
    if errors:
        out.append(f"{errors} console error(s) while loading")
    return out


def _md_text(text: str) -> str:
    return " ".join(text.split())


def _md_cell(text: str) -> str:
    return _md_text(text).replace("|", "\\|")


def render_markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: a heading per section (``## Summary``, ``## Broken Assets``...)."""
    lines = ["# Site Audit Report", "", f"- Schema version: {report.get('schemaVersion', '')}",
             f"- Generated: {report.get('generatedAt', '')}", f"- Pages audited: {len(report.get('pages') or [])}", ""]
    for s in _sections(report):
        lines += [f"## {s.title}", ""]
        if s.note:
            lines += [f"**{s.note}**", ""]
        if s.rows:
            lines += ["| " + " | ".join(s.headers) + " |", "|" + "---|" * len(s.headers)]
            lines += ["| " + " | ".join(_md_cell(c) for c in row) + " |" for row in s.rows]
            lines.append("")
        if s.items:
            lines += [f"{i}. {_md_text(t)}" if s.title == "Recommendations" else f"- {_md_text(t)}"
                      for i, t in enumerate(s.items, 1)]
            lines.append("")
        # Inline images would make a Markdown file unreadable: only those saved beside it.
        lines += [f"![{_md_text(cap)}]({src})" for cap, src in s.images if not src.startswith("data:")]
        if s.images:
            lines.append("")
    return "\n".join(lines).rstrip() + "\n"


_CSS = """body{font-family:system-ui,sans-serif;margin:2rem;color:#222;max-width:1100px}
h1{margin-bottom:.2rem}h2{border-bottom:1px solid #ddd;padding-bottom:.2rem;margin-top:2rem}
table{border-collapse:collapse;width:100%;font-size:.9rem}th,td{border:1px solid #ddd;padding:.3rem .5rem;
text-align:left;vertical-align:top;word-break:break-all}th{background:#f4f4f4}.meta{color:#666}
figure{display:inline-block;margin:.5rem}figure img{max-width:480px;border:1px solid #ccc}
figcaption{font-size:.8rem;color:#555;word-break:break-all}"""


def render_html(report: dict[str, Any]) -> str:
    """The report as one self-contained HTML page: its CSS inline, screenshots linked relatively (or
    inline when they were not written to disk)."""
    e = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8"><title>Site Audit Report</title>',
             f"<style>{_CSS}</style></head><body>", "<h1>Site Audit Report</h1>",
             f'<p class="meta">Schema version {e(str(report.get("schemaVersion", "")))} · generated '
             f'{e(str(report.get("generatedAt", "")))} · {len(report.get("pages") or [])} page(s)</p>']
    for s in _sections(report):
        parts.append(f"<h2>{e(s.title)}</h2>")
        if s.note:
            parts.append(f"<p><strong>{e(s.note)}</strong></p>")
        if s.rows:
            parts.append("<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in s.headers) + "</tr>")
            parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in s.rows]
            parts.append("</table>")
        if s.items:
            tag = "ol" if s.title == "Recommendations" else "ul"
            parts.append(f"<{tag}>" + "".join(f"<li>{e(t)}</li>" for t in s.items) + f"</{tag}>")
        parts += [f'<figure><img src="{e(src)}" alt="{e(cap)}"><figcaption>{e(cap)}</figcaption></figure>'
                  for cap, src in s.images]
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def render(report: dict[str, Any], fmt: str) -> str:
    """The report rendered as ``md`` or ``html``."""
    return render_markdown(report) if fmt == "md" else render_html(report)


def register(sub: Any) -> None:
    """Add ``audit`` to the ``pinchtab`` subparsers."""
    v = Verbs(sub)
    p = v.add("audit", "audit pages: broken assets, console, accessibility, timing", audit,
              description="Audit pages into one report (broken assets, console, accessibility, timing, interactive "
                          "elements, screenshots): a summary, the report with --json, or it rendered with --format.")
    p.add_argument("urls", nargs="*", metavar="URL", help="the pages (with --sitemap: one sitemap.xml)")
    p.add_argument("--sitemap", action="store_true", help="the URL is a sitemap.xml: audit the pages it lists")
    p.add_argument("--seaportal-report", metavar="FILE",
                   help="audit the pages of a SeaPortal results file (a JSON array): those it says need a "
                        "browser in the browser, the others from the file")
    p.add_argument("--enrich-all", action="store_true",
                   help="with --seaportal-report: audit every page in the browser")
    p.add_argument("--sample-size", type=int, metavar="N",
                   help="at most N pages of each template group (URLs that differ only in digits)")
    p.add_argument("--screenshot", action=argparse.BooleanOptionalAction, default=True,
                   help="take a screenshot of each page (the default; --screenshot=false for none)")
    p.add_argument("--network-monitor", action=argparse.BooleanOptionalAction, default=True,
                   help="record requests and broken assets (the default; --network-monitor=false for none)")
    p.add_argument("--concurrency", type=int, metavar="N", help="pages audited at a time (default 2)")
    p.add_argument("--output-dir", metavar="DIR", help="write report.json and screenshots/ (and report.md|html) here")
    p.add_argument("--format", choices=_FORMATS, default="json",
                   help="md or html: the report rendered (into --output-dir, else on stdout)")
    add_instance_flags(p, "audited")
