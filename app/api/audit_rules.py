"""What an audit concludes from the data it collected: security findings and the summary score.
Pure functions over plain data, computed offline and deterministically (no scanner, no network).

Security rules (the original's, plus a password field outside any form):

* ``mixed-content`` (high): an https page loads an http:// subresource;
* ``insecure-form-action`` (medium): a form on an https page submits to http://;
* ``insecure-password-form`` (high): a password field whose form submits to http://, or that sits
  on a page served over http (what is typed can be read or changed on the way, whatever the form's
  action says);
* ``exposed-endpoint`` (medium): a request to a sensitive path (``.env``, ``.git``, ...) succeeded;
* ``directory-listing`` (low): the page is a server's directory index ("Index of /...").
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

EXPOSED_MARKERS = (".env", ".git", ".htaccess", ".htpasswd", "wp-config.php", "id_rsa")

# Evaluated in the audited page: each form's resolved action, its method, whether it holds a
# password field; and whether a password field sits outside every form.
FORM_FACTS_JS = """(() => ({
  forms: Array.from(document.forms).map((f) => ({
    action: f.action || '', method: (f.method || 'get').toLowerCase(),
    hasPassword: !!f.querySelector('input[type="password"]'),
  })),
  loosePassword: Array.from(document.querySelectorAll('input[type="password"]')).some((i) => !i.form),
}))()"""


def _scheme(url: str) -> str:
    return url.split(":", 1)[0].lower() if ":" in url else ""


def _finding(rule: str, severity: str, detail: str, page_url: str) -> dict[str, str]:
    return {"ruleId": rule, "severity": severity, "detail": detail, "url": page_url}


def security_findings(page_url: str, title: str, requests: list[dict[str, Any]],
                      facts: dict[str, Any] | None) -> list[dict[str, str]]:
    """The page's security findings: rules in the module's order, items in the order found."""
    out: list[dict[str, str]] = []
    secure = _scheme(page_url) == "https"
    if secure:
        out += [_finding("mixed-content", "high", f"https page loads insecure subresource {r['url']}", page_url)
                for r in requests if r.get("url") != page_url and _scheme(str(r.get("url", ""))) == "http"]
    forms = (facts or {}).get("forms") or []
    for form in forms:
        action = str(form.get("action") or "")
        plain_action = _scheme(action) == "http"
        if secure and plain_action and not form.get("hasPassword"):
            out.append(_finding("insecure-form-action", "medium", f"form on https page submits to insecure {action}",
                                page_url))
        if form.get("hasPassword") and plain_action:
            out.append(_finding("insecure-password-form", "high",
                                f"password form submits over plain http to {action}", page_url))
        elif form.get("hasPassword") and _scheme(page_url) == "http":
            out.append(_finding("insecure-password-form", "high",
                                f"password form on a page served over plain http ({page_url})", page_url))
    if (facts or {}).get("loosePassword") and _scheme(page_url) == "http":
        out.append(_finding("insecure-password-form", "high",
                            f"password field on a page served over plain http ({page_url})", page_url))
    for r in requests:
        status = r.get("status") or 0
        if not isinstance(status, int) or status == 0 or status >= 400:
            continue
        path = urlsplit(str(r.get("url", ""))).path.lower()
        marker = next((m for m in EXPOSED_MARKERS if m in path), "")
        if marker:
            out.append(_finding("exposed-endpoint", "medium",
                                f"sensitive path {marker!r} answered {status} at {r['url']}", page_url))
    if title.strip().startswith("Index of /"):
        out.append(_finding("directory-listing", "low", f"server directory listing exposed ({title.strip()!r})",
                            page_url))
    return out


def summary_score(entries: list[dict[str, Any]]) -> int:
    """The mean accessibility score of the pages the browser audited without error (0 when none),
    rounded down: the original's site score."""
    scores = [e["browser"]["accessibilityScore"] for e in entries
              if not e.get("error") and isinstance(e.get("browser"), dict)
              and isinstance(e["browser"].get("accessibilityScore"), int)]
    return sum(scores) // len(scores) if scores else 0
