"""The pages the browser tests load: ``tests/pages`` served on 127.0.0.1, plus a few dynamic ones."""
from __future__ import annotations

import http.server
import re
import threading
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

PAGES = Path(__file__).resolve().parents[1] / "pages"
MANY_PAGES = 30  # the pages of /many/, its index included


class _Handler(http.server.SimpleHTTPRequestHandler):
    """Static pages from tests/pages plus a few dynamic ones (slow responses, a form echo)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, directory=str(PAGES), **kwargs)

    def log_message(self, *args: Any) -> None:  # keep test output clean
        pass

    def do_GET(self) -> None:
        url = urlparse(self.path)
        q = parse_qs(url.query)
        if url.path == "/slow":
            # Holds the response for ?ms= (bounded), to test navigate timeouts.
            time.sleep(min(int(q.get("ms", ["1000"])[0]), 10000) / 1000)
            return self._html(f"<title>Slow</title><p>slow page {q.get('ms', [''])[0]}</p>")
        if url.path == "/site_shop/sitemap.xml":
            # A sitemap must name absolute URLs, so it is made for this server's own port.
            host = self.headers.get("Host", "")
            locs = "".join(f"<url><loc>http://{host}/site_shop/{p}</loc></url>" for p in ("about.html", "products/a.html"))
            data = ('<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/'
                    f'sitemap/0.9">{locs}</urlset>').encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        if url.path.endswith(".xml") and (PAGES / url.path.lstrip("/")).is_file():
            # A sitemap names absolute URLs: "{origin}" in one stands for this server as it was reached.
            raw = (PAGES / url.path.lstrip("/")).read_text(encoding="utf-8")
            data = raw.replace("{origin}", f"http://{self.headers.get('Host', '')}").encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/xml")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        if url.path == "/headers":
            # The request's headers as this server got them (to see what interception changed).
            data = "".join(f"{k}: {v}\n" for k, v in self.headers.items()).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return None
        if url.path.startswith("/many/"):
            return self._many(url.path.removeprefix("/many/"))
        if url.path == "/echo":
            items = "".join(f"<li>{k}={v[0]}</li>" for k, v in q.items())
            return self._html(f"<title>Echo</title><h1>Echo</h1><ul>{items}</ul>")
        if url.path == "/redirect":
            # A 302 to ?to= (any URL): where a page ends up is not where it was asked for.
            self.send_response(302)
            self.send_header("Location", q.get("to", ["/"])[0])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return None
        return super().do_GET()

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", "0") or 0)
        form = parse_qs(self.rfile.read(length).decode())
        if urlparse(self.path).path == "/login":
            user = form.get("username", [""])[0]
            ok = user == "agent" and form.get("password", [""])[0] == "s3cret"
            if ok:
                return self._html(f"<title>Welcome</title><h1>Welcome, {user}</h1><a href='/table.html'>Orders</a>")
            return self._html("<title>Login failed</title><h1>Wrong username or password</h1>", 401)
        self._html("<title>Posted</title>")

    def _many(self, name: str) -> None:
        """A site of ``MANY_PAGES`` pages made from one template (for runs long enough to follow):
        ``/many/`` links to every page, each page has enough text to need no rendering."""
        text = "<p>" + " ".join(f"Paragraph {i} of a page made from a template, long enough to read." for i in
                                range(12)) + "</p>"
        if name in ("", "index.html"):
            links = "".join(f"<li><a href='/many/p{n}.html'>Page {n}</a></li>" for n in range(1, MANY_PAGES))
            return self._html(f"<title>Many</title><h1>Many pages</h1>{text}<ul>{links}</ul>")
        found = re.fullmatch(r"p(\d+)\.html", name)
        if found is None or not 0 < int(found.group(1)) < MANY_PAGES:
            return self._html("<title>Not found</title><p>no such page</p>", 404)
        n = int(found.group(1))
        return self._html(f"<title>Page {n}</title><h1>Page {n}</h1>{text}<a href='/many/'>Home</a>")

    def _html(self, body: str, status: int = 200) -> None:
        data = f"<!doctype html><html><head><meta charset=utf-8>{body}</html>".encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


class Site:
    """An HTTP server on a free 127.0.0.1 port, in a thread of this process, serving ``_Handler``."""

    def __init__(self) -> None:
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, name="test-site", daemon=True)
        self.thread.start()

    def url(self, path: str = "/") -> str:
        """The absolute URL of ``path`` on this site."""
        return f"http://127.0.0.1:{self.port}/{path.lstrip('/')}"

    def stop(self) -> None:
        """Stop serving and close the socket."""
        self.server.shutdown()
        self.server.server_close()
