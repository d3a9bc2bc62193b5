"""Benchmark pages, generated as HTML strings, and a tiny local server for them.

Everything here is pure and deterministic so every tool under test (Pinchtab
and its peers) reads exactly the same document.
"""

from __future__ import annotations

import html
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable

_SIZES = ("S", "M", "L")

_ADJECTIVES = (
    "Compact", "Sturdy", "Lightweight", "Classic", "Deluxe", "Portable",
    "Ergonomic", "Weatherproof", "Minimal", "Premium", "Recycled", "Modular",
)
_NOUNS = (
    "Backpack", "Desk Lamp", "Water Bottle", "Notebook", "Headphones",
    "Coffee Grinder", "Yoga Mat", "Umbrella", "Wall Clock", "Keyboard",
    "Cutting Board", "Travel Mug", "Plant Pot", "Bike Light",
)
_DETAILS = (
    "made from durable materials and built for everyday use",
    "a favourite with customers who value simple, honest design",
    "ships in plastic-free packaging within two working days",
    "covered by our two-year warranty and free returns",
    "available in three sizes to suit most needs",
    "designed in-house and tested by our support team",
)


def _product_name(i: int) -> str:
    return f"{_ADJECTIVES[i % len(_ADJECTIVES)]} {_NOUNS[(i * 7) % len(_NOUNS)]} {i}"


def _price(i: int) -> str:
    # Deterministic, varied prices between 4.99 and ~250.
    cents = 499 + (i * 3779) % 24500
    return f"${cents // 100}.{cents % 100:02d}"


def _stock(i: int) -> int:
    return (i * 37) % 120


def _doc(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html>\n"
        '<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n"
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        # No favicon request: keeps a 404 out of every tool's console report.
        '<link rel="icon" href="data:,">\n'
        "<style>body{font-family:sans-serif;margin:1rem}"
        "section{border-bottom:1px solid #ddd;padding:.5rem 0}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px}"
        "</style>\n</head>\n<body>\n"
        f"{body}\n</body>\n</html>\n"
    )


def controls_page(n_sections: int = 1000) -> str:
    """A long shop/settings page: five interactive controls per section.

    Each section holds a heading, a description, a labelled number input, a
    wrapped checkbox, a labelled select (S/M/L), a link and a button, so the
    default 1,000 sections give 5,000 controls.
    """
    parts: list[str] = ["<h1>Shop settings and cart</h1>", "<main>"]
    for i in range(1, n_sections + 1):
        name = html.escape(_product_name(i))
        detail = _DETAILS[i % len(_DETAILS)]
        options = "".join(f'<option value="{s}">{s}</option>' for s in _SIZES)
        parts.append(
            f'<section id="item{i}">'
            f"<h3>Item {i}</h3>"
            f"<p>{name}: {detail}.</p>"
            f'<label for="qty{i}">Quantity {i}</label> '
            f'<input type="number" id="qty{i}" name="qty{i}" value="1" min="0" max="99"> '
            f'<label><input type="checkbox" name="gift{i}"> Gift wrap {i}</label> '
            f'<select name="size{i}" aria-label="Size {i}">{options}</select> '
            f'<a href="#item{i}">Details {i}</a> '
            f'<button type="button" data-item="{i}">Add to cart {i}</button>'
            "</section>"
        )
    parts.append("</main>")
    return _doc("Shop settings", "\n".join(parts))


def products_table(rows: int = 1500) -> str:
    """A product table whose every row ends with an identical "Add to cart" button.

    An agent must tell rows apart by their cells (name, price, stock), not by
    the button's text.
    """
    parts: list[str] = [
        "<h1>Products</h1>",
        "<table>",
        "<thead><tr><th>Product</th><th>Price</th><th>Stock</th><th>Action</th></tr></thead>",
        "<tbody>",
    ]
    for i in range(1, rows + 1):
        parts.append(
            f"<tr><td>{html.escape(_product_name(i))}</td>"
            f"<td>{_price(i)}</td>"
            f"<td>{_stock(i)}</td>"
            f'<td><button type="button" data-row="{i}">Add to cart</button></td></tr>'
        )
    parts.extend(["</tbody>", "</table>"])
    return _doc("Products", "\n".join(parts))


def small_page() -> str:
    """A small page with a counter and a button that increments it."""
    body = (
        "<h1>Counter</h1>\n"
        '<p id="count">Count: 0</p>\n'
        '<button type="button" id="inc">Increment</button>\n'
        "<script>\n"
        "let n = 0;\n"
        "document.getElementById('inc').addEventListener('click', () => {\n"
        "  n += 1;\n"
        "  document.getElementById('count').textContent = 'Count: ' + n;\n"
        "});\n"
        "</script>"
    )
    return _doc("Counter", body)


def serve(pages: dict[str, str]) -> tuple[str, Callable[[], None]]:
    """Serve ``path -> HTML`` (or JavaScript, for paths ending in .js) on 127.0.0.1 (ephemeral port) in a daemon thread.

    Returns ``(base_url, stop)``; ``base_url`` has no trailing slash, so a page
    registered as ``"/controls"`` is at ``base_url + "/controls"``. Paths are
    matched without their query string; unknown paths get a 404.
    """
    table = {
        (p if p.startswith("/") else "/" + p): body.encode("utf-8")
        for p, body in pages.items()
    }

    class _Handler(BaseHTTPRequestHandler):
        def _send(self, head_only: bool) -> None:
            path = self.path.split("?", 1)[0].split("#", 1)[0]
            body = table.get(path)
            if body is None:
                body, status = b"not found", 404
                ctype = "text/plain; charset=utf-8"
            else:  # pages, and the scripts a page loads (modules need a JavaScript type)
                status = 200
                script = path.endswith((".js", ".mjs"))
                ctype = "text/javascript; charset=utf-8" if script else "text/html; charset=utf-8"
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            if not head_only:
                self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 (http.server naming)
            self._send(head_only=False)

        def do_HEAD(self) -> None:  # noqa: N802
            self._send(head_only=True)

        def log_message(self, format: str, *args: object) -> None:  # silence
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, name="bench-pages", daemon=True)
    thread.start()
    host, port = server.server_address[:2]
    stopped = threading.Event()

    def stop() -> None:
        if stopped.is_set():
            return
        stopped.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)

    return f"http://{host}:{port}", stop
