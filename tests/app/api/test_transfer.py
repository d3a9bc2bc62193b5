"""POST /upload and GET /download against a real Chromium.

Downloads: every test server listens on 127.0.0.1, which the download policy always refuses. So
the download tests run their own browser, started with a host resolver rule that sends
``fixtures.test`` to 127.0.0.1, allow only ``fixtures.test``, and give the policy a resolver stub
that answers a public address for that name. Literal loopback URLs, and redirects to them, must
still be refused in that setup. ``rebind.test`` goes to 127.0.0.1 as well, for a name that
resolves to a public address when checked and to an internal one when Chrome connects.
"""
from __future__ import annotations

import base64
import http.server
import os
import stat
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlparse

import pytest
from support.mapped_hosts import PUBLIC, fixtures_resolver, mapped_browser
from support.waits import wait_until

from app.api.routes import transfer
from cdp.browser import Browser

BINARY = bytes(range(256)) * 4 + b"\xff\xfe end"  # not UTF-8: must come back byte for byte


def state_dir(app: Any) -> Path:
    return app.extensions["pinchtab"].config.server.state_dir


def nav(client: Any, url: str) -> str:
    r = client.post("/navigate", json={"url": url})
    assert r.status_code == 200, r.json
    return r.json["tabId"]


def page_text(client: Any, tab: str) -> str:
    return client.get(f"/text?tabId={tab}&mode=raw").json["text"]


def data_url(content: bytes, mime: str = "text/plain", name: str = "") -> str:
    extra = f";name={quote(name)}" if name else ""
    return f"data:{mime}{extra};base64,{base64.b64encode(content).decode()}"


def staging_dirs(app: Any) -> list[Path]:
    uploads = state_dir(app) / "uploads"
    return sorted(p for p in uploads.glob(".staging-*")) if uploads.is_dir() else []


# --- upload ----------------------------------------------------------------------------------------
@pytest.fixture
def upload_app(app_factory: Any) -> Any:
    return app_factory(**{"security.allowUpload": True})


def test_upload_sets_files_the_page_reads_with_their_names_and_sizes(upload_app, site):
    client = upload_app.test_client()
    tab = nav(client, site.url("upload.html"))
    r = client.post(f"/upload?tabId={tab}", json={
        "selector": "#many",
        "files": [data_url(b"hello upload, line one", name="notes.txt"), base64.b64encode(b"plain b64").decode()]})
    assert r.status_code == 200, r.json
    assert r.json == {"status": "ok", "files": 2}
    text = wait_until(lambda: (t := page_text(client, tab)).count("many:") == 2 and t)
    assert "many:notes.txt:22:hello upload, line o" in text
    assert "many:file-2:9:plain b64" in text
    [staged] = staging_dirs(upload_app)
    assert stat.S_IMODE(staged.stat().st_mode) == 0o700
    assert tab in staged.name


def test_upload_default_selector_and_tab_twin_with_a_file_from_the_uploads_dir(upload_app, site):
    client = upload_app.test_client()
    tab = nav(client, site.url("upload.html"))
    uploads = state_dir(upload_app) / "uploads"
    (uploads / "reports").mkdir(parents=True)
    (uploads / "reports" / "q3.csv").write_bytes(b"region,total\nnorth,12\n")
    r = client.post(f"/tabs/{tab}/upload", json={"paths": ["reports/q3.csv"]})
    assert r.status_code == 200 and r.json == {"status": "ok", "files": 1}, r.json
    # No selector: the first file input on the page, the single one.
    text = wait_until(lambda: (t := page_text(client, tab)) and "single:" in t and t)
    assert "single:q3.csv:22:region,total" in text
    absolute = str((uploads / "reports" / "q3.csv").resolve())
    r = client.post(f"/upload?tabId={tab}", json={"selector": "#many", "paths": [absolute]})
    assert r.status_code == 200, r.json
    wait_until(lambda: "many:q3.csv:22" in page_text(client, tab))


def test_upload_paths_cannot_leave_the_uploads_dir(upload_app, site):
    client = upload_app.test_client()
    tab = nav(client, site.url("upload.html"))
    base = state_dir(upload_app)
    uploads = base / "uploads"
    uploads.mkdir(parents=True, exist_ok=True)
    (base / "secret.txt").write_text("token")
    (uploads / "link.txt").symlink_to(base / "secret.txt")
    (uploads / "folder").mkdir()
    for bad in ("../secret.txt", "reports/../../secret.txt", str(base / "secret.txt"), "/etc/passwd", "link.txt",
                "folder", "missing.txt", ".staging-x/file"):
        r = client.post(f"/upload?tabId={tab}", json={"paths": [bad]})
        assert r.status_code == 400, (bad, r.json)
        assert r.json["code"] == "invalid_path" and r.json["details"]["field"] == "paths[0]", bad
    assert staging_dirs(upload_app) == []
    assert "single:" not in page_text(client, tab) and "many:" not in page_text(client, tab)


def test_upload_limits_name_the_setting(app_factory, site):
    app = app_factory(**{"security.allowUpload": True, "security.uploadMaxFiles": 2,
                         "security.uploadMaxFileBytes": 10, "security.uploadMaxTotalBytes": 15,
                         "security.uploadMaxRequestBytes": 2000})
    client = app.test_client()
    tab = nav(client, site.url("upload.html"))
    url = f"/upload?tabId={tab}"
    small = base64.b64encode(b"12345678").decode()

    r = client.post(url, json={"selector": "#many", "files": [small, small, small]})
    assert r.status_code == 400 and r.json["code"] == "too_many_files"
    assert r.json["details"]["setting"] == "security.uploadMaxFiles" and "2" in r.json["error"]

    r = client.post(url, json={"files": [base64.b64encode(b"12345678901").decode()]})
    assert r.status_code == 400 and r.json["code"] == "file_too_large"
    assert r.json["details"] == {"field": "files[0]", "maxBytes": 10, "setting": "security.uploadMaxFileBytes"}

    r = client.post(url, json={"selector": "#many", "files": [small, small]})
    assert r.status_code == 400 and r.json["code"] == "upload_too_large"
    assert r.json["details"]["setting"] == "security.uploadMaxTotalBytes"

    r = client.post(url, json={"files": ["A" * 3000]})
    assert r.status_code == 413 and r.json["code"] == "body_too_large"
    assert r.json["details"]["setting"] == "security.uploadMaxRequestBytes"

    (state_dir(app) / "uploads").mkdir(parents=True, exist_ok=True)
    (state_dir(app) / "uploads" / "big.bin").write_bytes(b"x" * 11)
    r = client.post(url, json={"paths": ["big.bin"]})
    assert r.status_code == 400 and r.json["code"] == "file_too_large" and r.json["details"]["field"] == "paths[0]"

    r = client.post(url, json={"selector": "#many", "files": [small]})  # within every limit
    assert r.status_code == 200, r.json


def test_upload_bad_requests_and_targets(upload_app, site):
    client = upload_app.test_client()
    tab = nav(client, site.url("upload.html"))
    url = f"/upload?tabId={tab}"
    one = base64.b64encode(b"x").decode()

    r = client.post(url, json={})
    assert r.status_code == 400 and r.json["code"] == "bad_request" and r.json["details"]["field"] == "files"
    r = client.post(url, json={"files": ["not base64 at all!"]})
    assert r.status_code == 400 and r.json["code"] == "bad_file" and r.json["details"]["field"] == "files[0]"
    r = client.post(url, data="{nope", content_type="application/json")
    assert r.status_code == 400 and r.json["code"] == "bad_json"
    r = client.post(url, json={"selector": "#nothing-here", "files": [one]})
    assert r.status_code == 404 and r.json["code"] == "element_not_found"
    r = client.post(url, json={"selector": "#name", "files": [one]})
    assert r.status_code == 400 and r.json["code"] == "not_file_input" and "type text" in r.json["error"]
    r = client.post(url, json={"selector": "#single", "files": [one, one]})
    assert r.status_code == 400 and r.json["code"] == "too_many_files"
    r = client.post("/upload?tabId=NOSUCHTAB", json={"files": [one]})
    assert r.status_code == 404 and r.json["code"] == "tab_not_found"
    assert staging_dirs(upload_app) == []  # failed uploads leave nothing behind


def test_upload_is_off_by_default(app_factory, site):
    client = app_factory().test_client()
    r = client.post("/upload", json={"files": [base64.b64encode(b"x").decode()]})
    assert r.status_code == 403 and r.json["code"] == "upload_disabled"
    assert r.json["details"]["setting"] == "security.allowUpload"


def test_staging_dirs_go_with_their_tab_and_with_age(upload_app, site):
    client = upload_app.test_client()
    keep = nav(client, site.url("upload.html"))
    gone = nav(client, site.url("upload.html"))
    one = {"files": [base64.b64encode(b"x").decode()]}
    assert client.post(f"/upload?tabId={keep}", json=one).status_code == 200
    assert client.post(f"/upload?tabId={gone}", json=one).status_code == 200
    assert len(staging_dirs(upload_app)) == 2

    assert client.post("/close", json={"tabId": gone}).status_code == 200
    [left] = staging_dirs(upload_app)
    assert keep in left.name

    uploads = state_dir(upload_app) / "uploads"
    old = uploads / ".staging-0000aaaa-DEADTAB-old"  # another bridge's, past the age limit
    other = uploads / ".staging-0000bbbb-DEADTAB-new"  # another bridge's, recent: not ours to judge
    for d in (old, other):
        d.mkdir()
    past = time.time() - transfer.STAGING_MAX_AGE_S - 60
    os.utime(old, (past, past))
    assert client.post(f"/upload?tabId={keep}", json=one).status_code == 200
    names = {p.name for p in staging_dirs(upload_app)}
    assert old.name not in names and other.name in names
    assert sum(keep in n for n in names) == 2  # the live tab keeps both of its uploads


# --- download --------------------------------------------------------------------------------------
class _Fixtures(http.server.BaseHTTPRequestHandler):
    """What the download tests fetch; records every path it serves (to prove a request never came)."""

    hits: list[str] = []

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        url = urlparse(self.path)
        q = {k: v[0] for k, v in parse_qs(url.query).items()}
        self.hits.append(url.path)
        if url.path == "/file.bin":
            return self._send(200, BINARY, "application/octet-stream")
        if url.path == "/hello.txt":
            return self._send(200, b"hello from fixtures\n", "text/plain; charset=utf-8")
        if url.path == "/health":
            return self._send(200, b'{"status":"ok"}', "application/json")
        if url.path == "/redirect":
            return self._send(302, b"", "text/plain", {"Location": q["to"]})
        if url.path == "/loop":
            n = int(q.get("n", "0"))
            return self._send(302, b"", "text/plain", {"Location": f"/loop?n={n + 1}"})
        if url.path == "/big":
            return self._send(200, b"x" * int(q["n"]), "application/octet-stream")
        if url.path == "/stream":  # no Content-Length: the size is only known by reading
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.end_headers()
            for _ in range(int(q["n"]) // 1000):
                self.wfile.write(b"y" * 1000)
            return None
        if url.path == "/status":
            return self._send(int(q["code"]), b"nope", "text/plain")
        if url.path == "/set-cookie":
            return self._send(200, b"<title>Cookie set</title>", "text/html",
                              {"Set-Cookie": "session=abc123; Path=/; HttpOnly"})
        if url.path == "/cookie":
            return self._send(200, (self.headers.get("Cookie") or "").encode(), "text/plain")
        if url.path == "/slow":
            time.sleep(int(q["ms"]) / 1000)
            try:
                return self._send(200, b"late", "text/plain")
            except OSError:  # the browser gave up waiting, as the test wants
                return None
        return self._send(404, b"", "text/plain")

    def _send(self, status: int, body: bytes, ctype: str, headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture(scope="module")
def fixtures_server() -> Iterator[Any]:
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Fixtures)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, name="fixtures-test", daemon=True).start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """This module's browser (``app_factory`` builds on it): ``fixtures.test`` is the test server."""
    yield from mapped_browser("rebind.test")


@pytest.fixture
def dl_factory(app_factory: Any) -> Any:
    def build(**overrides: Any) -> Any:
        app = app_factory(**{"security.allowDownload": True, "security.downloadAllowedDomains": ["fixtures.test"],
                             **overrides})
        app.extensions[transfer.RESOLVER_KEY] = fixtures_resolver
        return app

    return build


@pytest.fixture
def dl(dl_factory: Any) -> Any:
    return dl_factory().test_client()


@pytest.fixture
def fx(fixtures_server: Any) -> Any:
    """URLs on the fixtures server: ``fx("/x")`` by the allowed name, ``fx("/x", "127.0.0.1")`` literally."""
    _Fixtures.hits.clear()
    port = fixtures_server.server_address[1]
    return lambda path, host="fixtures.test": f"http://{host}:{port}{path}"


def download(client: Any, url: str, **params: str) -> Any:
    query = "&".join(f"{k}={quote(v, safe='')}" for k, v in {"url": url, **params}.items())
    return client.get(f"/download?{query}")


def test_download_through_the_allowed_host_returns_the_bytes(dl, fx, browser):
    before = len(browser.pages())
    r = download(dl, fx("/file.bin"))
    assert r.status_code == 200, r.json
    assert base64.b64decode(r.json["data"]) == BINARY
    assert r.json["contentType"] == "application/octet-stream"
    assert r.json["size"] == len(BINARY) and r.json["url"] == fx("/file.bin")
    assert len(browser.pages()) == before  # the helper tab is gone again
    assert _Fixtures.hits == ["/file.bin"]


def test_a_name_that_rebinds_to_an_internal_address_is_refused(dl_factory, fx):
    # No allowlist: any public host. The policy's resolver says rebind.test is public; when Chrome
    # connects, the name leads to 127.0.0.1 (DNS rebinding). The connection itself gives it away.
    app = dl_factory(**{"security.downloadAllowedDomains": [], "security.allowedDomains": []})
    app.extensions[transfer.RESOLVER_KEY] = lambda host: [PUBLIC] if host == "rebind.test" else []
    r = download(app.test_client(), fx("/file.bin", "rebind.test"))
    assert r.status_code == 400 and r.json["code"] == "download_blocked", r.json
    assert r.json["details"] == {"reason": "internal", "host": "rebind.test"}
    assert "internal address (loopback)" in r.json["error"] and "data" not in r.json
    # With an allowlist the operator vouches for the name, as the other tests here rely on.
    vouched = dl_factory(**{"security.downloadAllowedDomains": ["fixtures.test"]}).test_client()
    assert download(vouched, fx("/file.bin")).status_code == 200


def test_download_raw_and_to_a_file(dl_factory, fx):
    app = dl_factory()
    client = app.test_client()
    r = download(client, fx("/hello.txt"), raw="true")
    assert r.status_code == 200 and r.data == b"hello from fixtures\n"
    assert r.content_type == "text/plain; charset=utf-8"
    assert "sandbox" in r.headers["Content-Security-Policy"]

    r = download(client, fx("/file.bin"), output="file")
    assert r.status_code == 200, r.json
    saved = Path(r.json["path"])
    assert r.json["status"] == "saved" and r.json["size"] == len(BINARY)
    assert r.json["contentType"] == "application/octet-stream"
    assert saved.parent == state_dir(app) / "outputs" / "downloads" and saved.read_bytes() == BINARY
    assert stat.S_IMODE(saved.stat().st_mode) == 0o600

    r = download(client, fx("/hello.txt"), output="file", path="mine/hello.txt")
    saved = state_dir(app) / "outputs" / "mine" / "hello.txt"
    assert r.status_code == 200 and saved.read_bytes() == b"hello from fixtures\n"
    for bad in ("../../escape.txt", "/var/escape.txt"):
        r = download(client, fx("/hello.txt"), output="file", path=bad)
        assert r.status_code == 400 and r.json["code"] == "invalid_output_path", bad
    assert _Fixtures.hits.count("/hello.txt") == 2  # refused paths are refused before fetching


def test_download_carries_the_browser_cookies(dl, fx):
    tab = nav(dl, fx("/set-cookie"))
    r = download(dl, fx("/cookie"), tabId=tab, raw="true")
    assert r.status_code == 200 and b"session=abc123" in r.data
    r = dl.get(f"/tabs/{tab}/download?url={quote(fx('/cookie'), safe='')}&raw=true")
    assert r.status_code == 200 and b"session=abc123" in r.data
    assert dl.get(f"/download?url={quote(fx('/cookie'))}&tabId=NOSUCHTAB").status_code == 404


@pytest.mark.parametrize("host", ["127.0.0.1", "2130706433", "0x7f.1", "localhost", "app.localhost", "[::1]",
                                  "[::ffff:127.0.0.1]"])
def test_download_refuses_loopback_even_though_the_server_is_there(dl, fx, host):
    r = download(dl, fx("/health", host))
    assert r.status_code == 400 and r.json["code"] == "download_blocked"
    assert r.json["error"] == "unsafe URL: internal or blocked host"
    assert _Fixtures.hits == []


def test_download_refuses_hosts_off_the_list_and_other_schemes(dl, fx):
    r = download(dl, "http://example.com/file.bin")
    assert r.status_code == 400 and r.json["code"] == "download_blocked"
    assert r.json["error"] == "unsafe URL: domain not allowed by security.downloadAllowedDomains"
    for url in ("file:///etc/passwd", "ftp://fixtures.test/x", "javascript:alert(1)"):
        r = download(dl, url)
        assert r.status_code == 400 and r.json["code"] == "download_blocked", url
    r = dl.get("/download")
    assert r.status_code == 400 and r.json["details"]["field"] == "url"


def test_download_falls_back_to_allowed_domains(dl_factory, fx):
    client = dl_factory(**{"security.downloadAllowedDomains": [], "security.allowedDomains": ["example.com"]}) \
        .test_client()
    r = download(client, fx("/hello.txt"))
    assert r.status_code == 400 and r.json["error"] == "unsafe URL: domain not allowed by security.allowedDomains"
    assert _Fixtures.hits == []


@pytest.mark.parametrize("target", ["http://127.0.0.1:{port}/health", "http://localhost:{port}/health",
                                    "http://[::1]:{port}/health", "http://example.com/health"])
def test_a_redirect_to_a_refused_host_is_refused_before_it_is_followed(dl, fx, fixtures_server, target):
    to = target.format(port=fixtures_server.server_address[1])
    r = download(dl, fx("/redirect?to=" + quote(to, safe="")))
    assert r.status_code == 400, r.json
    assert r.json["code"] == "download_blocked" and r.json["error"].startswith("unsafe browser request")
    assert "/health" not in _Fixtures.hits and _Fixtures.hits == ["/redirect"]


def test_redirects_within_the_allowed_host_are_followed_up_to_the_limit(dl, fx):
    r = download(dl, fx("/redirect?to=" + quote("/hello.txt", safe="")))
    assert r.status_code == 200, r.json
    assert base64.b64decode(r.json["data"]) == b"hello from fixtures\n" and r.json["url"] == fx("/hello.txt")
    r = download(dl, fx("/loop"))
    assert r.status_code == 422 and r.json["code"] == "too_many_redirects"
    assert r.json["details"]["maxRedirects"] == transfer.MAX_REDIRECTS
    assert _Fixtures.hits.count("/loop") == transfer.MAX_REDIRECTS + 1


def test_download_too_large_with_and_without_content_length(dl_factory, fx):
    client = dl_factory(**{"security.downloadMaxBytes": 3000}).test_client()
    for path in ("/big?n=5000", "/stream?n=5000"):
        r = download(client, fx(path))
        assert r.status_code == 413 and r.json["code"] == "download_too_large", path
        assert r.json["details"] == {"maxBytes": 3000}
    r = download(client, fx("/big?n=3000"))
    assert r.status_code == 200 and r.json["size"] == 3000


def test_remote_errors_are_502_and_a_slow_server_is_504(dl, fx, monkeypatch):
    for code in (404, 500):
        r = download(dl, fx(f"/status?code={code}"))
        assert r.status_code == 502 and r.json["code"] == "download_failed"
        assert r.json["details"]["status"] == code
    monkeypatch.setattr(transfer, "DOWNLOAD_TIMEOUT_S", 1.0)
    r = download(dl, fx("/slow?ms=2500"))
    assert r.status_code == 504 and r.json["code"] == "download_timeout"


def test_download_is_off_by_default(dl_factory, fx):
    client = dl_factory(**{"security.allowDownload": False}).test_client()
    r = download(client, fx("/hello.txt"))
    assert r.status_code == 403 and r.json["code"] == "download_disabled"
    assert r.json["details"]["setting"] == "security.allowDownload"
    assert _Fixtures.hits == []
