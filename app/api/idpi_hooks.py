"""The IDPI policy (:mod:`app.policy.idpi`) applied to the browser API: the helpers the routes call, and
the one after-request hook that puts a warning on the response.

* a navigation is judged by :mod:`app.policy.navigation` (the allowlist among the rest); a
  warning it gives (a host off ``security.allowedDomains`` outside strict mode) is handed to
  :func:`record`;
* ``/snapshot``, ``/text``, ``/find`` and ``/pdf`` call :func:`screen` with the text they are about
  to answer with: a refused answer raises 403 (``idpi_blocked`` for what the page says,
  ``idpi_domain_blocked`` for a page off the allowlist); a warning comes back as the JSON
  fields to merge (``idpiWarning``) and goes on the response as ``X-IDPI-Warning`` and
  ``X-IDPI-Pattern``;
* ``/action`` and ``/actions`` call :func:`screen_attached` on the snapshot a step's answer carries
  (``snap``): the step has already run, so a refused snapshot is dropped from a successful answer,
  with the refusal in its place (``snapshotError``), rather than failing the whole request;
* :func:`untrusted` gives the fields that mark a structured answer as web content
  (``untrustedContent``, ``idpiNotice``) and :func:`wrap_text` wraps page text, when
  ``security.idpi.wrapContent`` is on.
"""
from __future__ import annotations

from typing import Any

from flask import Flask, Response, current_app, g

from ..config import Config
from ..policy import idpi
from ..web.errors import Forbidden
from ..web.errors import body as error_body

_KEY = "pinchtab.idpi"
_STRICT = "security.idpi.strictMode"


def policy() -> idpi.Policy:
    """This app's policy (built once from its config)."""
    found: idpi.Policy | None = current_app.extensions.get(_KEY)
    if found is None:  # an app assembled without register(): its config still decides
        config = current_app.extensions["pinchtab.config"]
        found = current_app.extensions[_KEY] = idpi.Policy.from_config(config.security)
    return found


def screen(text: str, url: str = "") -> dict[str, Any]:
    """Scan what a read is about to answer with, from the page at ``url``.

    Raises 403 when the policy refuses it: ``idpi_domain_blocked`` ("current tab blocked by IDPI:
    ...", with the warning header) for a page off ``security.allowedDomains`` (a tab can get there by
    a redirect, a click or the page's own script), ``idpi_blocked`` ("content blocked by IDPI scanner:
    ...") for what the page says. Returns ``{"idpiWarning": <reason>}`` to
    merge into a JSON answer when it only warns, else {}.
    """
    pol = policy()
    if url:
        where = idpi.check_domain(url, pol)
        record(where)  # the refusal carries the warning header too, as the original's does
        if where.blocked:
            raise Forbidden(f"current tab blocked by IDPI: {where.reason}", code="idpi_domain_blocked",
                            details={"setting": "security.allowedDomains", "url": url,
                                     "hint": "navigate back to an allowed page, or list its host in "
                                             "security.allowedDomains",
                                     "remedy": "edit the config and restart pinchtab"})
    verdict = idpi.scan(text, pol)
    if verdict.blocked:
        raise Forbidden(f"content blocked by IDPI scanner: {verdict.reason}", code="idpi_blocked",
                        details={"setting": _STRICT, "pattern": verdict.pattern, "score": verdict.score,
                                 "categories": list(verdict.categories), "threshold": pol.shield_threshold,
                                 "hint": f"set {_STRICT} to false to receive such content with a warning "
                                         "instead, or raise security.idpi.shieldThreshold",
                                 "remedy": "edit the config and restart pinchtab"})
    record(verdict)
    return {"idpiWarning": verdict.reason} if verdict.threat else {}


def screen_attached(out: dict[str, Any], url: str) -> dict[str, Any]:
    """``out`` (an action's answer) with its ``snapshot`` screened: warned (``idpiWarning``),
    marked untrusted, or, when refused, replaced by ``snapshotError``."""
    if not isinstance(out.get("snapshot"), str):
        return out
    try:
        out.update(screen(out["snapshot"], url))
    except Forbidden as refused:
        del out["snapshot"], out["snapshotFormat"]
        out["snapshotError"] = error_body(refused)
        return out
    out.update(untrusted())
    return out


def node_text(doc: dict[str, Any]) -> str:
    """What a snapshot document says in words: its nodes' names and values (a diff's added and
    changed ones), one node per line, as the scanner reads them."""
    lines = []
    for key in ("nodes", "added", "changed"):
        for node in doc.get(key) or ():
            words = [str(node[k]) for k in ("name", "value") if isinstance(node, dict) and node.get(k)]
            if words:
                lines.append(" ".join(words))
    return "\n".join(lines)


def untrusted() -> dict[str, Any]:
    """``{"untrustedContent": true, "idpiNotice": ...}`` when wrapContent is on, else {}."""
    return {"untrustedContent": True, "idpiNotice": idpi.NOTICE} if policy().wraps else {}


def wrap_text(text: str, url: str) -> str:
    """Page text inside ``<untrusted_web_content>`` when wrapContent is on; else as it is."""
    return idpi.wrap(text, url) if policy().wraps else text


def record(verdict: idpi.Verdict | None) -> None:
    """Put ``verdict`` on the current response (``X-IDPI-Warning``, ``X-IDPI-Pattern``) when it warns."""
    if verdict is not None and verdict.threat:
        g.idpi_verdict = verdict


def register(app: Flask, config: Config) -> None:
    """Build the app's policy and add the hook that writes warnings on responses."""
    app.extensions[_KEY] = idpi.Policy.from_config(config.security)

    @app.after_request
    def idpi_headers(resp: Response) -> Response:
        verdict: idpi.Verdict | None = g.get("idpi_verdict")
        if verdict is not None:
            resp.headers[idpi.WARNING_HEADER] = idpi.header_value(verdict.reason)
            if verdict.pattern:
                resp.headers[idpi.PATTERN_HEADER] = verdict.pattern
        return resp
