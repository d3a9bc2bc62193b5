"""Which pages a site audit visits, and in what order: pure functions, no browser, no I/O.

* **Sampling.** Pages whose paths differ only in their digits (``/products/p1.html``,
  ``/products/p2.html``) are one template group; a group has two members or more. ``sampleSize``
  keeps every page outside a group and at most that many of each group (the lowest URLs, so the
  same input always gives the same plan). The entry page stays first, lone pages come before
  grouped ones: the home page and the navigation pages matter more than the tenth product.
* **SeaPortal input.** A SeaPortal results file (a JSON array of its per-page results) names the
  pages and, for each, whether it needs a browser (``profile.browserRecommended``). Pages that do
  not are reported from the file alone; ``enrichAll`` sends every page to the browser.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

# The version of the SeaPortal input we read (a bare array of results), echoed as input.seaportalFormat.
SEAPORTAL_FORMAT = "seaportal-results/v0"
MAX_SEAPORTAL_PAGES = 1000
_DIGITS = re.compile(r"\d+")


class BadSeaportalReport(ValueError):
    """seaportalResults is not an array of SeaPortal result objects."""


def template_key(url: str) -> str:
    """The page's path template: scheme, host and path with each run of digits as ``#`` (query and
    fragment ignored), so ``/products/p1.html`` and ``/products/p2.html`` share one."""
    parts = urlsplit(url)
    if not parts.netloc:
        return _DIGITS.sub("#", url)
    return f"{parts.scheme}://{parts.netloc}{_DIGITS.sub('#', parts.path)}"


def group_urls(urls: list[str]) -> dict[str, list[str]]:
    """Template -> its URLs, templates in first-seen order and members in input order."""
    groups: dict[str, list[str]] = {}
    for url in urls:
        groups.setdefault(template_key(url), []).append(url)
    return groups


def dedupe(urls: list[str]) -> list[str]:
    """``urls`` without blanks and repeats, first occurrences kept in order."""
    seen: set[str] = set()
    out = []
    for url in urls:
        if url and url not in seen:
            seen.add(url)
            out.append(url)
    return out


def sample_pages(urls: list[str], sample_size: int) -> list[str]:
    """The audit plan: the entry URL first, then every page outside a template group (input order),
    then up to ``sample_size`` pages of each group (lowest URLs first; the entry page counts
    toward its group). ``sample_size`` 0 keeps every page, in that order."""
    urls = dedupe(urls)
    if not urls:
        return []
    groups = group_urls(urls)
    grouped = {u: key for key, members in groups.items() if len(members) > 1 for u in members}
    entry = urls[0]
    plan = [entry]
    picked: dict[str, int] = {}
    if entry in grouped:
        picked[grouped[entry]] = 1
    plan += [u for u in urls[1:] if u not in grouped]
    for key, members in groups.items():
        if len(members) < 2:
            continue
        for url in sorted(members):
            if sample_size > 0 and picked.get(key, 0) >= sample_size:
                break
            if url == entry:
                continue
            plan.append(url)
            picked[key] = picked.get(key, 0) + 1
    return plan


@dataclass
class SeaportalPage:
    """One page of a SeaPortal report: what the audit routes on, and the summary it reports."""

    url: str
    title: str = ""
    status_code: int = 0
    browser_recommended: bool = False
    summary: dict[str, Any] = field(default_factory=dict)


def _number(value: Any) -> int | float:
    return value if isinstance(value, int | float) and not isinstance(value, bool) else 0


def parse_seaportal(results: Any) -> list[SeaportalPage]:
    """The pages of a SeaPortal results array; entries without a URL are dropped, each URL kept once.

    Raises BadSeaportalReport when ``results`` is not a list of objects (or lists too many pages).
    """
    if not isinstance(results, list) or not all(isinstance(r, dict) for r in results):
        raise BadSeaportalReport("seaportalResults must be a JSON array of SeaPortal result objects")
    pages: list[SeaportalPage] = []
    seen: set[str] = set()
    for r in results:
        url = r.get("url")
        if not isinstance(url, str) or not url.strip() or url.strip() in seen:
            continue
        url = url.strip()
        seen.add(url)
        profile = r.get("profile") if isinstance(r.get("profile"), dict) else {}
        title = r.get("title") if isinstance(r.get("title"), str) else ""
        recommended = profile.get("browserRecommended") is True
        status = r.get("statusCode")
        pages.append(SeaportalPage(
            url=url, title=title, status_code=status if isinstance(status, int) and not isinstance(status, bool) else 0,
            browser_recommended=recommended,
            summary={"title": title,
                     "description": r.get("description") if isinstance(r.get("description"), str) else "",
                     "confidence": _number(r.get("confidence")), "quality": _number(r.get("quality")),
                     "decision": profile.get("decision") if isinstance(profile.get("decision"), str) else "",
                     "browserRecommended": recommended}))
    if len(pages) > MAX_SEAPORTAL_PAGES:
        raise BadSeaportalReport(f"seaportalResults lists {len(pages)} pages; at most {MAX_SEAPORTAL_PAGES}")
    return pages


def seaportal_only_entry(page: SeaportalPage) -> dict[str, Any]:
    """The report entry of a page SeaPortal said needs no browser: its summary, no browser data."""
    entry: dict[str, Any] = {"url": page.url}
    if page.title:
        entry["title"] = page.title
    if page.status_code:
        entry["statusCode"] = page.status_code
    entry["seaportal"] = page.summary
    entry["browser"] = {}
    return entry


def merge_seaportal(entry: dict[str, Any], page: SeaportalPage | None) -> dict[str, Any]:
    """An audited page's entry with its SeaPortal summary, title and status filled from it when the
    browser gave none."""
    if page is None:
        return entry
    entry["seaportal"] = page.summary
    if not entry.get("title") and page.title:
        entry["title"] = page.title
    if not entry.get("statusCode") and page.status_code:
        entry["statusCode"] = page.status_code
    return entry
