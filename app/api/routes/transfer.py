"""Files in and out of the browser: POST /upload (off unless security.allowUpload) and GET /download
(off unless security.allowDownload).

Uploads are staged under ``<stateDir>/uploads/.staging-<owner>-<tab>-<random>`` (0700) and handed
to a file input with ``DOM.setFileInputFiles``. Chrome reads the files when the page does (on
submit, or through a FileReader), so a staging dir lives as long as its tab: it is removed when
the tab is closed through the API, or by the sweep each upload runs (tabs that are gone, dirs
older than ``STAGING_MAX_AGE_S``).

Downloads are fetched by the browser, so the tab's cookies apply: a throwaway tab navigates to the
URL with every request paused by the ``Fetch`` domain. Each hop is checked by ``app.policy.netguard``
before it leaves the browser (the first request as Chrome canonicalised it, and every redirect's
``Location``), at most ``MAX_REDIRECTS`` of them; the final response body is read as a stream
(bounded by ``security.downloadMaxBytes``) and the navigation is then aborted, so nothing renders.
"""
from __future__ import annotations

import base64
import binascii
import collections
import mimetypes
import os
import re
import secrets
import shutil
import stat
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote, unquote_to_bytes, urljoin, urlsplit

from flask import Response, current_app, request

from cdp import selectors
from cdp.errors import BrowserGone, CDPError, CDPTimeout, TargetClosed
from cdp.page import call_on
from cdp.tab import Tab

from ...policy import netguard
from ...web.errors import APIError, BadRequest, disabled
from ...web.files import inside, output_file, stamp, write_atomic
from ...web.openapi import BINARY, Blueprint, ErrorSchema, tab_route
from ...web.parser import read_json, with_path_tab
from ..contract import OneOf
from .common import before_reading, caller, on_tab, state, tab
from .locks import check_access, request_owner
from .transfer_contract import (
    DownloadQuerySchema,
    DownloadResponse,
    DownloadSavedResponse,
    UploadResponse,
    UploadSchema,
)

bp = Blueprint("transfer", __name__)

UPLOADS = "uploads"
DOWNLOADS = "downloads"
STAGING_PREFIX = ".staging-"
STAGING_MAX_AGE_S = 3600.0
DOWNLOAD_TIMEOUT_S = 30.0
MAX_REDIRECTS = 10
READ_CHUNK = 1 << 20
# Chrome's names for the address spaces a connection can land in (CDP Network.IPAddressSpace).
INTERNAL_SPACES = frozenset({"Loopback", "Local", "Private"})
CONNECTED_INFO_WAIT_S = 0.5  # it comes before the paused response; a cache hit has none
#: ``app.extensions`` key of the name resolver the download policy uses (tests put a stub there).
RESOLVER_KEY = netguard.RESOLVER_EXTENSION
_OWNER_KEY = "pinchtab.upload_owner"
_DATA_URL = re.compile(r"^data:(?P<meta>[^,]*),(?P<data>.*)$", re.S | re.I)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


# --- upload --------------------------------------------------------------------------------------
def _upload_allowed() -> None:
    """Before the body is validated: upload is on, the request is within its size limit, and a
    tabId in the body agrees with the query's (clients name the tab there, as a path would)."""
    sec = state().config.security
    if not sec.allow_upload:
        raise disabled("upload", "security.allowUpload")
    limit = sec.upload_max_request_bytes
    if (request.content_length or 0) > limit or len(request.get_data(cache=True)) > limit:
        raise APIError(f"upload request is larger than {limit} bytes (security.uploadMaxRequestBytes)", status=413,
                       code="body_too_large", details={"maxBytes": limit, "setting": "security.uploadMaxRequestBytes"})
    query_tab = _query_tab()
    if query_tab:
        with_path_tab(read_json(request), query_tab)


def _query_tab() -> str | None:
    """The tab the query names, unless the path names one (the path's wins)."""
    if (request.view_args or {}).get("tab_id") is not None:
        return None
    return request.args.get("tabId") or None


@tab_route(bp, "/upload", methods=["POST"])
@bp.doc(parameters=[{"in": "query", "name": "tabId", "schema": {"type": "string"},
                     "description": "the tab to set the files in"}])
@before_reading(_upload_allowed)
@bp.arguments(UploadSchema)
@bp.response(200, UploadResponse)
@bp.alt_response(403, schema=ErrorSchema, description="upload is off unless security.allowUpload is set")
@bp.alt_response(413, schema=ErrorSchema, description="the request is over security.uploadMaxRequestBytes")
def upload(req: dict[str, Any], tab_id: str | None) -> dict[str, Any]:
    """Set files on a file input (base64 or data URLs, or files under <stateDir>/uploads)."""
    sec = state().config.security
    count = len(req["files"]) + len(req["paths"])
    if count > sec.upload_max_files:
        raise BadRequest(f"too many files: {count}; the limit is {sec.upload_max_files} (security.uploadMaxFiles)",
                         code="too_many_files",
                         details={"maxFiles": sec.upload_max_files, "setting": "security.uploadMaxFiles"})
    uploads = uploads_dir(state().config.server.state_dir)
    blobs = [_decode(entry, f"files[{i}]", i, sec.upload_max_file_bytes) for i, entry in enumerate(req["files"])]
    blobs += [_read_path(uploads, p, f"paths[{i}]", sec.upload_max_file_bytes) for i, p in enumerate(req["paths"])]
    total = sum(len(data) for _, data in blobs)
    if total > sec.upload_max_total_bytes:
        raise BadRequest(f"files total {total} bytes; the limit is {sec.upload_max_total_bytes} "
                         "(security.uploadMaxTotalBytes)", code="upload_too_large",
                         details={"maxBytes": sec.upload_max_total_bytes, "setting": "security.uploadMaxTotalBytes"})
    target = tab(req.get("tabId") or _query_tab())
    check_access(target, request_owner(req.get("owner")), handoff=False)
    owner = _owner()
    try:
        sweep_staging(uploads, owner, lambda: {p["targetId"] for p in state().ensure(caller()).pages()})
    except OSError:
        pass  # tidying is best effort; the next upload tries again
    staging = Path(tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{owner}-{target.id}-", dir=uploads))
    try:
        staged = []
        for i, (name, data) in enumerate(blobs):
            # One folder per file: the page sees each file under the name it was given, even twice.
            path = inside(staging, f"{i + 1}/{name}", "")
            write_atomic(path, data)
            staged.append(str(path))
        selector = req["selector"]
        on_tab(target, lambda t: _set_files(t, selector, staged))
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {"status": "ok", "files": len(staged)}


def uploads_dir(state_dir: Path) -> Path:
    """``<stateDir>/uploads`` (created 0700), resolved."""
    path = state_dir / UPLOADS
    path.mkdir(parents=True, exist_ok=True, mode=0o700)
    return path.resolve()


def _owner() -> str:
    """This app's mark on its staging dirs: another bridge on the same state dir sweeps only its own."""
    ext = current_app.extensions
    if _OWNER_KEY not in ext:
        ext[_OWNER_KEY] = secrets.token_hex(4)
    return str(ext[_OWNER_KEY])


def _set_files(t: Tab, selector: str, files: list[str]) -> None:
    el = selectors.resolve(t, selector)
    kind, multiple = call_on(t, el, "function(){return this.tagName === 'INPUT' ? "
                                    "[String(this.type).toLowerCase(), !!this.multiple] : "
                                    "['<' + this.tagName.toLowerCase() + '>', false]}")
    if kind != "file":
        raise BadRequest(f"selector {selector!r} matches {kind if kind.startswith('<') else 'an input of type ' + kind}"
                         ", not a file input", code="not_file_input", details={"field": "selector"})
    if len(files) > 1 and not multiple:
        raise BadRequest(f"the file input takes one file (it has no 'multiple' attribute); {len(files)} given",
                         code="too_many_files", details={"field": "files"})
    t.call("DOM.setFileInputFiles", {"files": files, "objectId": el.object_id}, session_id=el.session_id)


def _too_big(field: str, size: int, limit: int) -> BadRequest:
    return BadRequest(f"{field} is {size} bytes; the limit is {limit} (security.uploadMaxFileBytes)",
                      code="file_too_large",
                      details={"field": field, "maxBytes": limit, "setting": "security.uploadMaxFileBytes"})


def _decode(entry: str, field: str, index: int, limit: int) -> tuple[str, bytes]:
    """A ``files`` entry: plain base64, or a data URL (its ``name=`` parameter names the file)."""
    name, mime, is_b64, payload = f"file-{index + 1}", "", True, entry.strip()
    m = _DATA_URL.match(payload)
    if m:
        params = m["meta"].split(";")
        mime = params[0].strip().lower()
        is_b64 = any(p.strip().lower() == "base64" for p in params[1:])
        for p in params[1:]:
            key, _, value = p.partition("=")
            if key.strip().lower() in ("name", "filename") and value.strip():
                name = safe_name(unquote(value.strip()), name)
        payload = m["data"]
        if "." not in name and mime:
            name += mimetypes.guess_extension(mime) or ""
    if is_b64:
        payload = re.sub(r"\s+", "", payload).translate(str.maketrans("-_", "+/"))
        if len(payload) * 3 // 4 > limit + 2:  # refuse before decoding a huge string
            raise _too_big(field, len(payload) * 3 // 4, limit)
        try:
            data = base64.b64decode(payload + "=" * (-len(payload) % 4), validate=True)
        except (binascii.Error, ValueError):
            raise BadRequest(f"{field} is neither base64 nor a data URL", code="bad_file",
                             details={"field": field}) from None
    else:
        data = unquote_to_bytes(payload)
    if len(data) > limit:
        raise _too_big(field, len(data), limit)
    return name, data


def _read_path(uploads: Path, requested: str, field: str, limit: int) -> tuple[str, bytes]:
    """A ``paths`` entry: a regular file under ``<stateDir>/uploads``, read now (not when Chrome reads)."""

    def bad(why: str) -> BadRequest:
        return BadRequest(f"{field}: {requested!r} {why}", code="invalid_path", details={"field": field})

    try:
        target = inside(uploads, requested, "")
    except BadRequest:
        raise bad("is not under <stateDir>/uploads") from None
    if any(part.startswith(STAGING_PREFIX) for part in target.relative_to(uploads).parts):
        raise bad("is inside a staging folder")
    try:
        # Resolved already; O_NOFOLLOW keeps a symlink swapped in since then from being followed.
        fd = os.open(target, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise bad("does not exist") from None
    except OSError:
        raise bad("cannot be read") from None
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise bad("is not a regular file")
    with os.fdopen(fd, "rb") as fh:
        if st.st_size > limit:
            raise _too_big(field, st.st_size, limit)
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise _too_big(field, len(data), limit)
    return target.name, data


def safe_name(name: str, default: str) -> str:
    """A file name that is one harmless path component."""
    base = name.replace("\\", "/").rsplit("/", 1)[-1]
    cleaned = _UNSAFE_NAME.sub("_", base).lstrip("._-")[:100]
    return cleaned or default


def sweep_staging(uploads: Path, owner: str, live_tabs: Any, now: float | None = None) -> int:
    """Remove staging dirs older than STAGING_MAX_AGE_S, and this owner's dirs whose tab is gone.

    ``live_tabs`` is called after the dirs are listed, so a dir made for a tab opened meanwhile
    always finds its tab in the answer.
    """
    now = time.time() if now is None else now
    try:
        entries = [e for e in uploads.iterdir() if e.name.startswith(STAGING_PREFIX)]
    except FileNotFoundError:
        return 0
    if not entries:
        return 0
    live: set[str] = live_tabs()
    removed = 0
    for entry in entries:
        try:
            st = entry.lstat()
        except FileNotFoundError:
            continue
        if not stat.S_ISDIR(st.st_mode):
            continue
        entry_owner, _, rest = entry.name[len(STAGING_PREFIX):].partition("-")
        tab_id = rest.partition("-")[0]
        if now - st.st_mtime > STAGING_MAX_AGE_S or (entry_owner == owner and tab_id not in live):
            shutil.rmtree(entry, ignore_errors=True)
            removed += 1
    return removed


@bp.after_app_request
def _sweep_after_close(resp: Response) -> Response:
    """A tab closed through the API takes its staging dirs with it."""
    if resp.status_code == 200 and request.endpoint == "tabs.close" and request.method == "POST":
        st = state()
        uploads = st.config.server.state_dir / UPLOADS
        if st.browser is not None and _OWNER_KEY in current_app.extensions and uploads.is_dir():
            browser = st.browser
            try:
                sweep_staging(uploads.resolve(), _owner(), lambda: {p["targetId"] for p in browser.pages()})
            except OSError:
                pass  # the next upload's sweep tries again
    return resp


# --- download ------------------------------------------------------------------------------------
def _download_allowed() -> None:
    if not state().config.security.allow_download:
        raise disabled("download", "security.allowDownload")


@tab_route(bp, "/download", methods=["GET"])
@before_reading(_download_allowed)
@bp.arguments(DownloadQuerySchema, location="query")
@bp.alt_response(403, schema=ErrorSchema, description="download is off unless security.allowDownload is set")
@bp.alt_response(200, content_type="application/octet-stream", schema=BINARY)
@bp.response(200, OneOf(DownloadResponse, DownloadSavedResponse),
             description="the bytes in base64, where they were written (output=file), or themselves (raw=true, "
                         "with the content type the server sent)")
def download(req: dict[str, Any], tab_id: str | None) -> Response | dict[str, Any]:
    """Fetch a URL in the browser session (its cookies apply); every redirect hop is checked."""
    st = state()
    sec = st.config.security
    resolver = current_app.extensions.get(RESOLVER_KEY, netguard.system_resolver)
    policy = netguard.Policy.for_download(sec.download_allowed_domains, sec.allowed_domains, resolver)
    if req.get("tabId"):
        # An unknown tab is a 404, as everywhere; a tab leased to another owner, 423.
        check_access(tab(req["tabId"]), request_owner(), handoff=False)
    url = req["url"].strip()
    try:
        netguard.check_url(url, policy)
    except netguard.UnsafeURL as exc:
        if exc.reason == netguard.MALFORMED:  # not a URL at all, rather than one the policy refuses
            raise BadRequest(exc.message, code="bad_url", details={"field": "url", "reason": exc.reason}) from None
        raise _blocked(exc.message, exc) from None
    out_path = None
    if req["output"] == "file":
        default = f"{DOWNLOADS}/{stamp()}-{safe_name(urlsplit(url).path, 'download')}"
        out_path = output_file(st.config.server.state_dir, req["path"], default)
    browser = st.ensure(caller())
    max_bytes = sec.download_max_bytes
    # A throwaway tab of the same browser (its cookies), so the caller's page is left as it is.
    helper = browser.new_tab()
    try:
        got = on_tab(helper, lambda t: browser_fetch(t, url, policy, max_bytes, DOWNLOAD_TIMEOUT_S),
                     DOWNLOAD_TIMEOUT_S + 3)
    finally:
        try:
            browser.close_tab(helper.id)
        except (CDPError, CDPTimeout, BrowserGone, TargetClosed):
            pass  # gone already; nothing to tidy
    data: bytes = got["data"]
    ctype: str = got["contentType"]
    media = ctype.split(";", 1)[0].strip() or "application/octet-stream"
    if out_path is not None:
        size = write_atomic(out_path, data)
        return {"status": "saved", "path": str(out_path), "size": size, "contentType": media}
    if req["raw"]:
        resp = Response(data, content_type=ctype)
        # Bytes from the web under our origin: never let a browser run them as our page.
        resp.headers["Content-Security-Policy"] = "sandbox; default-src 'none'"
        resp.headers["X-Content-Type-Options"] = "nosniff"
        return resp
    return {"data": base64.b64encode(data).decode(), "contentType": media, "size": len(data),
            "url": got["url"]}


def _blocked(message: str, exc: netguard.UnsafeURL) -> BadRequest:
    return BadRequest(message, code="download_blocked", details={"reason": exc.reason, "host": exc.host})


def browser_fetch(t: Tab, url: str, policy: netguard.Policy, max_bytes: int, timeout_s: float,
                  vet: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Navigate the (throwaway) tab ``t`` to ``url`` and take the response body; runs on its worker.

    Every request is paused twice by the Fetch domain: before it is sent (its URL, as Chrome will
    request it, is checked by the policy) and when its headers arrive (a redirect's Location is
    checked before Chrome follows it; the final body is taken as a stream). Returns
    ``{"data", "contentType", "url", "status"}``; raises APIError for every refusal or failure.

    With no allowlist (any public host) the address Chrome actually connected to is checked too:
    a name can resolve to a public address when we check it and to an internal one when Chrome
    connects (DNS rebinding). Chrome reports the connection's address space
    (Network.responseReceivedExtraInfo) before the response pauses. A name on an allowlist is
    one the operator vouches for, and is not second-guessed.

    ``vet``, when given, judges each hop too (after the policy), raising an APIError to refuse it:
    a caller with rules of its own (a scrape's navigation policy) sees every URL the fetch goes to.

    A tab whose fetch returned may fetch again (a scrape keeps one per worker): every request of
    the fetch was answered, its event handlers are removed, and Fetch stays on, so anything the tab
    would load meanwhile waits paused. After a fetch that raised, nobody can vouch for the tab.
    """
    paused: collections.deque[dict[str, Any]] = collections.deque()
    spaces: dict[str, str] = {}  # network request id -> the address space Chrome connected to
    # Taken off again however the fetch ends: a tab kept for the next fetch (a scrape's) must not
    # feed this fetch's queues, or keep them alive.
    handlers: list[tuple[str, Callable[[str, dict[str, Any]], None]]] = [
        ("Fetch.requestPaused", lambda _sid, p: paused.append(p))]
    if not policy.allowlist:
        handlers.append(("Network.responseReceivedExtraInfo", lambda _sid, p: spaces.__setitem__(
            p.get("requestId", ""), p.get("resourceIPAddressSpace", ""))))
    for method, handler in handlers:
        t.on(method, handler)
    try:
        return _fetch(t, url, policy, max_bytes, timeout_s, vet, paused, spaces)
    finally:
        for method, handler in handlers:
            t.off(method, handler)


def _fetch(t: Tab, url: str, policy: netguard.Policy, max_bytes: int, timeout_s: float,
           vet: Callable[[str], None] | None, paused: collections.deque[dict[str, Any]],
           spaces: dict[str, str]) -> dict[str, Any]:
    """``browser_fetch``'s work, its event handlers in place: the navigation and each paused request."""
    deadline = time.monotonic() + timeout_s
    if not policy.allowlist:
        t.call("Network.enable", {})
    t.call("Fetch.enable", {"patterns": [{"urlPattern": "*", "requestStage": "Request"},
                                         {"urlPattern": "*", "requestStage": "Response"}]})
    nav = t.send("Page.navigate", {"url": url})
    main_frame = t.main_frame_id
    redirects = 0

    def fail(request_id: str) -> None:
        t.send("Fetch.failRequest", {"requestId": request_id, "errorReason": "BlockedByClient"})

    while True:
        left = deadline - time.monotonic()
        if left <= 0 or not t.wait_for(lambda: bool(paused) or nav.done(), left):
            raise APIError(f"download timed out after {timeout_s:.0f} s", status=504, code="download_timeout",
                           retryable=True)
        if not paused:  # the navigation ended without a response for us: Chrome refused the URL
            try:
                err = nav.result().get("errorText") or "no response"
            except (CDPError, BrowserGone, TargetClosed) as exc:  # the URL is not one Chrome navigates to
                err = str(exc)
            raise APIError(f"download failed: {err}", status=502, code="download_failed")
        p = paused.popleft()
        rid = p["requestId"]
        if p.get("resourceType") != "Document" or p.get("frameId") != main_frame:
            fail(rid)  # the throwaway tab loads nothing but the document
            continue
        req_url = p["request"]["url"]
        status = p.get("responseStatusCode")
        if p.get("responseErrorReason"):
            fail(rid)
            raise APIError(f"download failed: {p['responseErrorReason']}", status=502, code="download_failed",
                           details={"url": req_url})
        if status is None:  # about to be sent: check the URL exactly as Chrome will request it
            try:
                netguard.check_url(req_url, policy)
            except netguard.UnsafeURL as exc:
                fail(rid)
                raise _blocked(f"unsafe browser request: {req_url} refused: {exc.message}", exc) from None
            _vet(vet, req_url, fail, rid)
            t.send("Fetch.continueRequest", {"requestId": rid})
            continue
        if not policy.allowlist:
            nid = p.get("networkId", "")
            t.wait_for(lambda: nid in spaces, min(CONNECTED_INFO_WAIT_S, max(deadline - time.monotonic(), 0)))
            if spaces.get(nid) in INTERNAL_SPACES:  # absent (a cache hit): no connection was made
                fail(rid)
                host = urlsplit(req_url).hostname or ""
                raise _blocked(f"unsafe browser request: {req_url} refused: {host} connected to an internal "
                               f"address ({spaces[nid].lower()}) after resolving to a public one",
                               netguard.UnsafeURL("", netguard.INTERNAL, host))
        headers = {h["name"].lower(): h["value"] for h in reversed(p.get("responseHeaders") or [])}
        if 300 <= status < 400 and headers.get("location"):
            redirects += 1
            target = urljoin(req_url, headers["location"])
            if redirects > MAX_REDIRECTS:
                fail(rid)
                raise APIError(f"too many redirects (more than {MAX_REDIRECTS})", status=422,
                               code="too_many_redirects", details={"maxRedirects": MAX_REDIRECTS})
            try:
                netguard.check_url(target, policy)
            except netguard.UnsafeURL as exc:
                fail(rid)
                raise _blocked(f"unsafe browser request: redirect to {target} refused: {exc.message}",
                               exc) from None
            _vet(vet, target, fail, rid)
            t.send("Fetch.continueRequest", {"requestId": rid})
            continue
        if status >= 300:
            fail(rid)
            raise APIError(f"download failed: the server answered {status}", status=502, code="download_failed",
                           details={"status": status, "url": req_url})
        length = headers.get("content-length", "")
        if length.isdigit() and int(length) > max_bytes:
            fail(rid)
            raise _too_large(max_bytes)
        try:
            data = _read_body(t, rid, max_bytes)
        finally:
            fail(rid)  # the body is ours now; the navigation must not go on and render it
        return {"data": data, "contentType": headers.get("content-type", "application/octet-stream"),
                "url": req_url, "status": status}


def _vet(vet: Callable[[str], None] | None, url: str, fail: Callable[[str], None], request_id: str) -> None:
    """Run the caller's own check on a hop; a refusal fails the paused request before it goes on."""
    if vet is None:
        return
    try:
        vet(url)
    except APIError:
        fail(request_id)
        raise


def _too_large(max_bytes: int) -> APIError:
    return APIError(f"download is larger than {max_bytes} bytes (security.downloadMaxBytes)", status=413,
                    code="download_too_large", details={"maxBytes": max_bytes})


def _read_body(t: Tab, request_id: str, max_bytes: int) -> bytes:
    stream = t.call("Fetch.takeResponseBodyAsStream", {"requestId": request_id})["stream"]
    chunks: list[bytes] = []
    size = 0
    try:
        while True:
            part = t.call("IO.read", {"handle": stream, "size": READ_CHUNK})
            raw = part.get("data", "")
            chunk = base64.b64decode(raw) if part.get("base64Encoded") else raw.encode("utf-8")
            size += len(chunk)
            if size > max_bytes:
                raise _too_large(max_bytes)
            chunks.append(chunk)
            if part.get("eof"):
                return b"".join(chunks)
    finally:
        t.send("IO.close", {"handle": stream})
