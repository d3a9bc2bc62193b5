"""What ``pinchtab`` takes away from the page: ``screenshot`` and ``pdf`` (saved to a file, or stdout),
and its ``console`` messages and uncaught ``errors``.
"""
from __future__ import annotations

import argparse
import base64
import re
import time
from datetime import datetime
from typing import Any

from .cli_verbs import Ctx, Verb, Verbs, save

__all__ = ["register"]


# --------------------------------------------------------------------------
# Files: screenshot, pdf


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")


def screenshot(ctx: Ctx) -> None:
    """GET /screenshot into a file: ``Saved X (N bytes)``; ``--annotate`` adds a ``[n] ref`` legend."""
    a = ctx.args
    png = a.format == "png" or a.png or (a.output or "").lower().endswith(".png")
    fmt = "png" if png else "jpeg"
    path = a.output or f"screenshot-{_stamp()}.{'png' if png else 'jpg'}"
    params: dict[str, Any] = {"format": fmt, "quality": a.quality, "selector": a.selector, "scale": a.scale,
                              "beyondViewport": True if a.beyond_viewport else None}
    if a.annotate:
        reply = ctx.get("/screenshot", {**params, "annotate": True})
        save(ctx, path, base64.b64decode(reply.get("base64", "")))
        for ann in reply.get("annotations") or []:
            ref = ann.get("ref", "")
            digits = re.search(r"\d+", ref)
            line = f"[{digits.group(0) if digits else ref}] {ref}"
            if ann.get("role"):
                line += f" {ann['role']}"
            line += f' "{ann["name"]}"' if ann.get("name") else (f" <{ann['tag']}>" if ann.get("tag") else "")
            ctx.out.line(line)
        return
    save(ctx, path, ctx.raw("GET", "/screenshot", params={**params, "raw": True}).body)


_PDF_OPTIONS = (("scale", "scale"), ("paper_width", "paperWidth"), ("paper_height", "paperHeight"),
                ("margin_top", "marginTop"), ("margin_bottom", "marginBottom"), ("margin_left", "marginLeft"),
                ("margin_right", "marginRight"), ("page_ranges", "pageRanges"), ("header_template", "headerTemplate"),
                ("footer_template", "footerTemplate"))
_PDF_SWITCHES = (("landscape", "landscape"), ("prefer_css_page_size", "preferCSSPageSize"),
                 ("display_header_footer", "displayHeaderFooter"), ("generate_tagged_pdf", "generateTaggedPDF"),
                 ("generate_document_outline", "generateDocumentOutline"))


def pdf(ctx: Ctx) -> None:
    """GET /pdf into a local file, or (``--file-output``) into the server's state dir."""
    a = ctx.args
    params: dict[str, Any] = {key: getattr(a, flag) for flag, key in _PDF_OPTIONS if getattr(a, flag) is not None}
    params.update({key: True for flag, key in _PDF_SWITCHES if getattr(a, flag)})
    if a.file_output:
        ctx.out.json(ctx.get("/pdf", {**params, "output": "file", "path": a.path}))
        return
    save(ctx, a.output or f"page-{_stamp()}.pdf", ctx.raw("GET", "/pdf", params={**params, "raw": True}).body)


# --------------------------------------------------------------------------
# Logs: console, errors


def logs(kind: str) -> Verb:
    """``console`` and ``errors``: ``HH:MM:SS [LEVEL] message`` per entry; ``--clear`` empties the buffer."""

    def show(ctx: Ctx) -> None:
        if ctx.args.clear:
            reply = ctx.post(f"/{kind}/clear")
            ctx.out.answer(reply, "Console logs cleared" if kind == "console" else "Error logs cleared")
            return
        reply = ctx.get(f"/{kind}", {"limit": ctx.args.limit})
        if ctx.out.as_json:
            ctx.out.json(reply)
            return
        entries = reply.get(kind) or []
        if not entries:
            ctx.out.line("No console logs" if kind == "console" else "No errors")
        for e in entries:
            when = _clock(e.get("timestamp"))
            if kind == "console":
                ctx.out.line(f"{when} [{str(e.get('level', '')).upper()}] {e.get('message', '')}")
            else:
                ctx.out.line(f"{when} [ERROR] {e.get('message', '')}")
                if e.get("url"):
                    ctx.out.line(f"  at {e['url']}:{e.get('line', 0)}:{e.get('column', 0)}")

    return show


def _clock(stamp: Any) -> str:
    """``HH:MM:SS`` (local time) of an ISO timestamp or epoch milliseconds."""
    try:
        if isinstance(stamp, int | float):
            when = datetime.fromtimestamp(stamp / 1000 if stamp > 1e11 else stamp)
        else:
            when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).astimezone()
        return when.strftime("%H:%M:%S")
    except (ValueError, OverflowError, OSError):
        return "--:--:--"


# --------------------------------------------------------------------------
# The parsers


def register(sub: Any) -> None:
    """Add screenshot, pdf, console and errors to the ``pinchtab`` subparsers."""
    v = Verbs(sub)

    p = v.add("screenshot", "save a screenshot (JPEG, or PNG)", screenshot, aliases=("ss",))
    p.add_argument("-o", "--output", metavar="FILE", help="where (- for stdout; default screenshot-<time>.jpg)")
    p.add_argument("-q", "--quality", type=int, metavar="N", help="JPEG quality 0-100 (default 80)")
    p.add_argument("-s", "--selector", metavar="SEL", help="only this element")
    p.add_argument("--scale", type=float, metavar="F", help="rescale the image (0.5 = half size)")
    p.add_argument("--annotate", action="store_true", help="numbered ref boxes on interactive elements, and a legend")
    p.add_argument("--format", choices=("jpeg", "png"))
    p.add_argument("--png", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--beyond-viewport", "--full-page", dest="beyond_viewport", action="store_true",
                   help="the whole document, not just the viewport")
    p = v.add("pdf", "save the page as PDF", pdf)
    p.add_argument("-o", "--output", metavar="FILE", help="where (- for stdout; default page-<time>.pdf)")
    p.add_argument("--landscape", action="store_true")
    for flag, _key in _PDF_OPTIONS:
        numeric = flag not in ("page_ranges", "header_template", "footer_template")
        p.add_argument("--" + flag.replace("_", "-"), type=float if numeric else str)
    for flag, _key in _PDF_SWITCHES[1:]:
        p.add_argument("--" + flag.replace("_", "-"), action="store_true")
    p.add_argument("--file-output", action="store_true", help="save on the server, in its state dir")
    p.add_argument("--path", help="with --file-output: the name in the server's state dir")

    for name, help_ in (("console", "print the page's console messages"),
                        ("errors", "print the page's uncaught JavaScript errors")):
        p = v.add(name, help_, logs(name))
        p.add_argument("--limit", type=int, metavar="N", help="only the last N")
        p.add_argument("--clear", action="store_true", help="empty the buffer")

