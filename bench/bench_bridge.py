"""The bridge's figures, measured side by side in one run, printed as one table.

    python -m bench.bench_bridge [--runs 200] [--no-peers]

* A trivial REST call (POST /evaluate "1+1") against the same raw CDP call (Runtime.evaluate on
  its own websocket to the same tab of the same browser), with the parameters the route sends
  (``userGesture`` costs Chrome about 0.04 ms; the plain call is shown beside it). The clients are
  http.client and websocket-client; the same pair of calls is also made with minimal clients on
  both sides (HTTP/1.1 written and read on a socket, CDP framed by ``cdp/frames.py``), since
  http.client spends more on an answer than websocket-client does: that row is the bridge's own
  share, the client libraries aside.
* An interactive compact snapshot of a generated page with 5,000 controls: time, nodes,
  characters and tokens (cl100k, offline), beside one raw Accessibility.getFullAXTree call and
  Playwright MCP's browser_snapshot of the same page (when npm is present).
* A small form of choices: the interactive and the whole-page compact snapshot, each round beside
  Chrome DevTools MCP's take_snapshot of the same page in the same browser (when npm is present),
  and the engine's own time per call in the page (without transport).
* Four tabs driven in parallel against one after another.

The bridge runs as users run it (``pinchtab bridge`` under gunicorn, over real HTTP with
keep-alive), attached to a Chromium this script launches, so the raw client shares the browser.
"""
from __future__ import annotations

import argparse
import asyncio
import http.client
import json
import os
import platform
import shutil
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import requests
import websocket

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import npm, pages, peers  # noqa: E402
from bench.common import group_cpu_s, med_ms, pct_ms, timed  # noqa: E402
from bench.processes import ServerExited, ServerSubprocess, free_port  # noqa: E402
from cdp.browser import world_scripts  # noqa: E402
from cdp.frames import FrameReader, client_frame  # noqa: E402
from cdp.launcher import ChromeProcess, find_browser  # noqa: E402


class RawCDP:
    """The baseline: a bare session on a tab (the browser itself without ``target_id``), no threads,
    no routing. Its messages go through websocket-client, or with ``lean`` through
    ``cdp/frames.py``: no client library at all."""

    def __init__(self, ws_url: str, target_id: str | None = None, *, lean: bool = False) -> None:
        self.ws = websocket.create_connection(ws_url, skip_utf8_validation=True, suppress_origin=True, timeout=120)
        assert self.ws.sock is not None  # connected
        self.sock = self.ws.sock
        self.frames = FrameReader(self.sock, lambda _payload: None) if lean else None
        self.n = 0
        self.session: str | None = None
        if target_id is not None:
            self.session = self.call("Target.attachToTarget", {"targetId": target_id, "flatten": True})["sessionId"]

    def call(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.n += 1
        msg: dict[str, Any] = {"id": self.n, "method": method, "params": params or {}}
        if self.session:
            msg["sessionId"] = self.session
        if self.frames is None:
            self.ws.send(json.dumps(msg))
        else:
            self.sock.sendall(client_frame(json.dumps(msg).encode()))
        while True:
            reply = json.loads(self.ws.recv() if self.frames is None else self.frames.message())
            if reply.get("id") == self.n:
                if "error" in reply:
                    raise RuntimeError(reply["error"])
                return reply["result"]

    def close(self) -> None:
        self.ws.close()


class LeanHTTP:
    """A kept-alive HTTP/1.1 connection with no client library: the request written in one send, the
    answer read up to its Content-Length."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def post(self, path: str, body: bytes) -> Any:
        self.sock.sendall(b"POST %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nContent-Type: application/json\r\n"
                          b"Content-Length: %d\r\n\r\n%s" % (path.encode(), self.port, len(body), body))
        while b"\r\n\r\n" not in self.buf:
            self.buf += self._recv()
        head, _, rest = self.buf.partition(b"\r\n\r\n")
        at = head.lower().index(b"\r\ncontent-length:") + 17
        end = head.find(b"\r\n", at)
        length = int(head[at:end if end >= 0 else None])
        while len(rest) < length:
            rest += self._recv()
        self.buf = rest[length:]
        if not head.startswith(b"HTTP/1.1 200"):
            raise RuntimeError(f"{path}: {head[:100]!r}")
        return json.loads(rest[:length])

    def _recv(self) -> bytes:
        data = self.sock.recv(65536)
        if not data:
            raise RuntimeError("the bridge closed the connection")
        return data

    def close(self) -> None:
        self.sock.close()


class Bridge(ServerSubprocess):
    """``pinchtab bridge --cdp-url`` in a subprocess, evaluate allowed (for the trivial call)."""

    def __init__(self, cdp_http: str, workdir: Path) -> None:
        port = free_port()
        cfg = workdir / "config.json"
        cfg.write_text(json.dumps({"security": {"allowEvaluate": True}, "instanceDefaults": {"maxTabs": 50}}))
        env = {**os.environ, "PINCHTAB_CONFIG": str(cfg), "PINCHTAB_PORT": str(port), "HOME": str(workdir)}
        env.pop("PINCHTAB_TOKEN", None)
        super().__init__([sys.executable, "-m", "app.clients.cli", "bridge", "--cdp-url", cdp_http], port=port, env=env,
                         cwd=ROOT, log_path=workdir / "bridge.log", name="bridge", stop_timeout_s=20)
        self.http = requests.Session()
        try:
            self.wait_healthy(60)
        except TimeoutError:
            self.stop()
            raise SystemExit(f"bridge did not become healthy within 60 s; see {self.log_path}") from None
        except ServerExited as exc:
            self.stop()
            raise SystemExit(str(exc)) from None

    def post(self, path: str, body: dict[str, Any]) -> Any:
        r = self.http.post(self.base + path, json=body, timeout=120)
        r.raise_for_status()
        return r.json()

    def lean_post(self, conn: http.client.HTTPConnection, path: str, body: dict[str, Any]) -> Any:
        """A POST on a kept-alive http.client connection: as little client time as the raw side has."""
        conn.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        resp = conn.getresponse()
        data = resp.read()
        if resp.status != 200:
            raise RuntimeError(f"{path}: {resp.status} {data[:200]!r}")
        return json.loads(data)

    def get(self, path: str) -> requests.Response:
        r = self.http.get(self.base + path, timeout=120)
        r.raise_for_status()
        return r

    def stop(self) -> None:
        super().stop()
        self.http.close()


Row = tuple[str, str, str]


def trivial_call(base: str, chrome: ChromeProcess, bridge: Bridge, args: argparse.Namespace, **_: Any) -> list[Row]:
    """REST vs raw CDP, interleaved so both see the same machine state."""
    tab = bridge.post("/navigate", {"url": base + "/small.html"})["tabId"]
    raw = RawCDP(chrome.ws_url, tab)
    conn = http.client.HTTPConnection("127.0.0.1", bridge.port, timeout=30)
    path = f"/tabs/{tab}/evaluate"
    plain = {"expression": "1+1", "returnByValue": True}
    same = {**plain, "awaitPromise": False, "userGesture": True}  # what POST /evaluate sends
    for _ in range(100):  # warm both paths (the first hundred calls of either run slower)
        bridge.lean_post(conn, path, {"expression": "1+1"})
        raw.call("Runtime.evaluate", same)
    rest_t, raw_t, plain_t = [], [], []
    cpu_before = group_cpu_s(bridge.proc.pid)  # the bridge's own session: its gunicorn and every thread
    for _ in range(args.runs):
        rest_t.append(timed(lambda: bridge.lean_post(conn, path, {"expression": "1+1"}))[0])
        raw_t.append(timed(lambda: raw.call("Runtime.evaluate", same))[0])
        plain_t.append(timed(lambda: raw.call("Runtime.evaluate", plain))[0])
    cpu_after = group_cpu_s(bridge.proc.pid)
    conn.close()
    raw.close()
    # The same pair with minimal clients on both sides (see the module's note), interleaved likewise.
    lean_rest, lean_raw = LeanHTTP(bridge.port), RawCDP(chrome.ws_url, tab, lean=True)
    body = json.dumps({"expression": "1+1"}).encode()
    for _ in range(100):
        lean_rest.post(path, body)
        lean_raw.call("Runtime.evaluate", same)
    lean_rest_t, lean_raw_t = [], []
    for _ in range(args.runs):
        lean_rest_t.append(timed(lambda: lean_rest.post(path, body))[0])
        lean_raw_t.append(timed(lambda: lean_raw.call("Runtime.evaluate", same))[0])
    lean_rest.close()
    lean_raw.close()
    # Latency on a shared VM moves by tenths of a millisecond from one run to the next; the CPU
    # the bridge spends per call (the raw calls cost it nothing) is the steadier measure of ours.
    cpu = "" if cpu_before is None or cpu_after is None else \
        f"bridge CPU {(cpu_after - cpu_before) / args.runs * 1e6:.0f} us per call"
    return [
        ("trivial call, raw CDP Runtime.evaluate", f"median {med_ms(raw_t):.2f} ms", f"p90 {pct_ms(raw_t, .9):.2f} ms"),
        ("  the same without userGesture", f"median {med_ms(plain_t):.2f} ms", f"p90 {pct_ms(plain_t, .9):.2f} ms"),
        ("trivial call, REST POST /evaluate", f"median {med_ms(rest_t):.2f} ms", f"p90 {pct_ms(rest_t, .9):.2f} ms"),
        ("  REST overhead (median difference)", f"{med_ms(rest_t) - med_ms(raw_t):+.2f} ms", cpu),
        ("  the same, minimal clients on both sides", f"{med_ms(lean_rest_t) - med_ms(lean_raw_t):+.2f} ms",
         f"REST {med_ms(lean_rest_t):.2f} ms, raw {med_ms(lean_raw_t):.2f} ms"),
    ]


def big_snapshot(base: str, chrome: ChromeProcess, chromium: str, bridge: Bridge, args: argparse.Namespace,
                 **_: Any) -> list[Row]:
    """The 5,000-control page: ours, one raw getFullAXTree, and Playwright MCP's snapshot."""
    url = base + "/controls.html"
    tab = bridge.post("/navigate", {"url": url, "waitFor": "load"})["tabId"]
    q = f"/tabs/{tab}/snapshot?filter=interactive&format=compact"
    first, resp = timed(lambda: bridge.get(q))
    times = [timed(lambda: bridge.get(q))[0] for _ in range(args.snap_runs)]
    text = resp.text
    tokens = peers.count_tokens(text)
    rows = [
        ("5,000 controls: interactive compact snapshot", f"median {med_ms(times):.0f} ms",
         f"first {first * 1000:.0f} ms, {len(text.splitlines()) - 1:,} nodes"),
        ("  size", f"{len(text):,} chars", f"{tokens:,} tokens"),
    ]
    full_t, full = timed(lambda: bridge.get(f"/tabs/{tab}/snapshot"))
    rows.append(("  full JSON snapshot (for scale)", f"{full_t * 1000:.0f} ms",
                 f"{len(full.text):,} chars, {peers.count_tokens(full.text):,} tokens"))
    raw = RawCDP(chrome.ws_url, tab)
    raw.call("Accessibility.enable")
    ax_times, ax_bytes, ax_nodes = [], 0, 0
    for _ in range(3):
        t, res = timed(lambda: raw.call("Accessibility.getFullAXTree"))
        ax_times.append(t)
        ax_nodes = len(res["nodes"])
        ax_bytes = len(json.dumps(res))
    raw.call("Accessibility.disable")
    raw.close()
    rows.append(("  raw Accessibility.getFullAXTree", f"median {med_ms(ax_times):.0f} ms",
                 f"{ax_nodes:,} AX nodes, {ax_bytes / 1e6:.1f} MB"))
    if args.no_peers:
        return rows
    why = peers.playwright_available()
    if why:
        return rows + [("  Playwright MCP browser_snapshot", "skipped", why)]
    pw = peers.measure_playwright_snapshot(url, chromium, runs=args.snap_runs)
    return rows + [
        ("  Playwright MCP browser_snapshot", f"median {pw['median_s'] * 1000:.0f} ms",
         f"{pw['chars']:,} chars, {pw['tokens']:,} tokens (v{pw['version']})"),
        ("  ours / Playwright", f"time {med_ms(times) / (pw['median_s'] * 1000):.2f}x",
         f"tokens {tokens / pw['tokens']:.2f}x"),
    ]


def choices_form() -> str:
    """A small form of choices: the kind of page an agent snapshots many times while filling it in."""
    choices = "".join(f'<label><input type="radio" name="size" value="{s}"> {s}</label>' for s in ("S", "M", "L"))
    extras = "".join(f'<label><input type="checkbox" name="{x}"> {x}</label>' for x in ("Cheese", "Bacon", "Onions"))
    return pages._doc("Order", (
        "<h1>Order</h1><form>"
        f"<fieldset><legend>Size</legend>{choices}</fieldset><fieldset><legend>Extras</legend>{extras}</fieldset>"
        '<label for="crust">Crust</label><select id="crust"><option>Thin</option><option>Thick</option></select>'
        '<label for="notes">Notes</label><input id="notes" placeholder="Anything else?">'
        '<button type="submit">Order</button> <a href="/help">Help</a></form>'))


DEVTOOLS_MCP = "chrome-devtools-mcp@1"  # Chrome DevTools MCP: its take_snapshot is the peer here


async def _devtools_rounds(cdp_http: str, url: str, runs: int, ours: Callable[[], None]) -> tuple[list[float], str]:
    """``runs`` rounds of ``ours()`` then one take_snapshot of Chrome DevTools MCP, attached to the same
    browser: the two sides see the same machine load. (take_snapshot times, its version)."""
    from contextlib import AsyncExitStack

    from mcp import ClientSession, StdioServerParameters, stdio_client

    folder, why = npm.ensure_package(DEVTOOLS_MCP, "chrome-devtools-mcp")
    if folder is None:
        raise RuntimeError(why)
    cli = folder / "build" / "src" / "bin" / "chrome-devtools-mcp.js"
    params = StdioServerParameters(command=shutil.which("node") or "node", args=[
        str(cli), "--browserUrl", cdp_http, "--no-usage-statistics", "--no-performance-crux", "--no-page-id-routing"],
        env={**os.environ, "CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS": "1"})
    times: list[float] = []
    async with AsyncExitStack() as stack:
        errlog = stack.enter_context(tempfile.TemporaryFile("w+"))
        read, write = await stack.enter_async_context(stdio_client(params, errlog=errlog))
        session = await stack.enter_async_context(ClientSession(read, write))
        await asyncio.wait_for(session.initialize(), 60)
        await asyncio.wait_for(session.call_tool("new_page", {"url": url}), 60)
        await asyncio.wait_for(session.call_tool("take_snapshot", {}), 60)  # warm, as ours are
        for _ in range(runs):
            ours()
            t0 = time.perf_counter()
            res = await asyncio.wait_for(session.call_tool("take_snapshot", {}), 60)
            times.append(time.perf_counter() - t0)
            if res.is_error:
                raise RuntimeError(f"take_snapshot failed: {res.content}")
    return times, npm.installed_version(folder) or "?"


def in_page_ms(raw: RawCDP, batches: int = 10, n: int = 50) -> dict[str, float]:
    """The engine's own time per snapshot, page side only, by filter: batches of ``n`` calls in one
    evaluation, the filters taking turns (neither gets the warmer engine); the fastest batch, the
    one the machine's other load disturbed least."""
    frame = raw.call("Page.getFrameTree")["frameTree"]["frame"]["id"]
    ctx = raw.call("Page.createIsolatedWorld", {"frameId": frame, "worldName": "bench_engine"})["executionContextId"]
    raw.call("Runtime.evaluate", {"expression": world_scripts(), "contextId": ctx})
    best = {"interactive": float("inf"), "all": float("inf")}
    for _ in range(batches):
        for f in best:
            expr = (f"(() => {{ const o = {{filter: {json.dumps(f)}}}; const t0 = performance.now(); "
                    f"for (let i = 0; i < {n}; i++) JSON.stringify(__pinchtab.snapshot(o)); "
                    f"return (performance.now() - t0) / {n}; }})()")
            ms = raw.call("Runtime.evaluate", {"expression": expr, "contextId": ctx, "returnByValue": True})
            best[f] = min(best[f], float(ms["result"]["value"]))
    return best


def small_snapshot(base: str, chrome: ChromeProcess, bridge: Bridge, args: argparse.Namespace, **_: Any) -> list[Row]:
    """A small form: our interactive and whole-page compact snapshots, round by round with Chrome
    DevTools MCP's take_snapshot of the same page in the same browser; and the engine's page-side time."""
    url = base + "/choices.html"
    tab = bridge.post("/tab", {"action": "new", "url": url})["tabId"]
    queries = {"filter=interactive": f"/tabs/{tab}/snapshot?filter=interactive&format=compact",
               "whole page": f"/tabs/{tab}/snapshot?format=compact"}
    first: dict[str, float] = {}  # each filter's first call on a new document (where it sets up its world)
    for k, q in queries.items():
        bridge.post("/navigate", {"tabId": tab, "url": f"{url}?{len(first)}", "waitFor": "load"})
        first[k] = timed(lambda q=q: bridge.get(q))[0]
    times: dict[str, list[float]] = {k: [] for k in queries}

    def ours() -> None:
        # The two take turns at going first: the first call after the peer's pays for waking the
        # bridge's threads, which is no cost of either filter.
        order = list(queries.items())
        for k, q in order if len(times["whole page"]) % 2 else order[::-1]:
            times[k].append(timed(lambda q=q: bridge.get(q))[0])

    peer: list[float] = []
    version = ""
    why = "--no-peers" if args.no_peers else None
    if why is None:
        try:
            peer, version = asyncio.run(_devtools_rounds(f"http://127.0.0.1:{chrome.port}", url, args.small_runs, ours))
        except Exception as exc:  # no node, no npm, the server failed: ours are measured alone
            why = f"unavailable: {str(exc)[:120]}"
            for v in times.values():
                v.clear()
    if why is not None:
        for _ in range(args.small_runs):
            ours()
    raw = RawCDP(chrome.ws_url, tab)
    page = in_page_ms(raw)
    raw.close()
    rows = [(f"small form: compact snapshot, {k}", f"median {med_ms(v):.2f} ms",
             f"p90 {pct_ms(v, .9):.2f} ms, first call {first[k] * 1000:.1f} ms") for k, v in times.items()]
    rows.append(("  page side of each (the engine alone)", f"{page['interactive']:.3f} ms",
                 f"whole page {page['all']:.3f} ms"))
    if peer:
        rows.append(("  Chrome DevTools MCP take_snapshot", f"median {med_ms(peer):.2f} ms",
                     f"p90 {pct_ms(peer, .9):.2f} ms (v{version})"))
    else:
        rows.append(("  Chrome DevTools MCP take_snapshot", "skipped", str(why)))
    return rows


def parallel_tabs(base: str, chrome: ChromeProcess, bridge: Bridge, args: argparse.Namespace, **_: Any) -> list[Row]:
    """Four tabs driven at once against one after another, each an agent's step loop on a page
    of 500 controls: navigate, interactive snapshot, click by ref, read the text. Both ways are
    run ``--par-rounds`` times, alternating; the medians are compared. Beside them, the ceiling
    the machine allows: Chrome's own CPU time in the sequential run spread over every core."""
    url = base + "/mid.html"
    tabs = [bridge.post("/navigate", {"url": base + "/small.html"})["tabId"] for _ in range(4)]

    def work(tab_id: str) -> None:
        http_ = requests.Session()
        for _ in range(3):
            http_.post(bridge.base + "/navigate", json={"tabId": tab_id, "url": url}, timeout=120).raise_for_status()
            snap = http_.get(bridge.base + f"/tabs/{tab_id}/snapshot?filter=interactive&format=compact",
                             timeout=120)
            snap.raise_for_status()
            ref = next(line.split(" ")[0] for line in snap.text.splitlines() if " button " in line)
            http_.post(bridge.base + "/action", json={"tabId": tab_id, "kind": "click", "ref": ref},
                       timeout=120).raise_for_status()
            http_.get(bridge.base + f"/tabs/{tab_id}/text", timeout=120).raise_for_status()

    assert chrome.proc is not None
    seq_ts, par_ts, chrome_cpu = [], [], []
    with ThreadPoolExecutor(4) as pool:
        for _ in range(args.par_rounds):
            before = group_cpu_s(chrome.proc.pid)
            seq_ts.append(timed(lambda: [work(t) for t in tabs])[0])
            after = group_cpu_s(chrome.proc.pid)
            if before is not None and after is not None:
                chrome_cpu.append(after - before)
            par_ts.append(timed(lambda: list(pool.map(work, tabs)))[0])
    seq_t, par_t = statistics.median(seq_ts), statistics.median(par_ts)
    rows = [("4 tabs x 3 steps (navigate, snapshot, click, text), in turn", f"median {seq_t:.2f} s",
             f"{args.par_rounds} rounds: " + ", ".join(f"{t:.2f}" for t in seq_ts)),
            ("4 tabs, in parallel", f"median {par_t:.2f} s", f"speed-up {seq_t / par_t:.2f}x")]
    if chrome_cpu:
        cpu = statistics.median(chrome_cpu)
        ceiling = seq_t / max(cpu / (os.cpu_count() or 1), seq_t / 4)
        rows.append(("  Chrome's CPU in the sequential run", f"{cpu:.2f} s",
                     f"on {os.cpu_count()} cores: at most {ceiling:.2f}x in parallel"))
    return rows


def formats_and_tables(base: str, chromium: str, bridge: Bridge, args: argparse.Namespace, **_: Any) -> list[Row]:
    """Tokens of the interactive compact snapshot against the full JSON one, on each page; and the
    1,500-row product table against Playwright MCP's snapshot of it."""
    rows: list[Row] = []
    for page in ("/small.html", "/mid.html", "/products.html", "/controls.html"):
        tab = bridge.post("/navigate", {"url": base + page, "waitFor": "load"})["tabId"]
        compact = bridge.get(f"/tabs/{tab}/snapshot?filter=interactive&format=compact").text
        full = bridge.get(f"/tabs/{tab}/snapshot").text
        c, f = peers.count_tokens(compact), peers.count_tokens(full)
        rows.append((f"tokens {page}: interactive compact vs full JSON", f"{c:,} vs {f:,}", f"{c / f:.1%} of JSON"))
        bridge.post("/close", {"tabId": tab})
    if not args.no_peers and not peers.playwright_available():
        url = base + "/products.html"
        tab = bridge.post("/navigate", {"url": url, "waitFor": "load"})["tabId"]
        q = f"/tabs/{tab}/snapshot?filter=interactive&format=compact"
        t = [timed(lambda: bridge.get(q))[0] for _ in range(args.snap_runs)]
        ours = peers.count_tokens(bridge.get(q).text)
        pw = peers.measure_playwright_snapshot(url, chromium, runs=args.snap_runs)
        rows += [("1,500-row product table: ours", f"median {med_ms(t):.0f} ms", f"{ours:,} tokens"),
                 ("  Playwright MCP", f"median {pw['median_s'] * 1000:.0f} ms", f"{pw['tokens']:,} tokens"),
                 ("  ours / Playwright", f"tokens {ours / pw['tokens']:.2f}x", "")]
    return rows


def snap_diff_cost(base: str, bridge: Bridge, args: argparse.Namespace, **_: Any) -> list[Row]:
    """A click that changes one line: its diff in the same answer, against click + /snapshot."""
    tab = bridge.post("/navigate", {"url": base + "/small.html"})["tabId"]
    snap = bridge.get(f"/tabs/{tab}/snapshot?filter=interactive&format=compact").text
    ref = next(line.split(" ")[0] for line in snap.splitlines() if " button " in line)
    bridge.get(f"/tabs/{tab}/snapshot")  # the caller's view to diff against
    one, two = [], []
    for _ in range(args.snap_runs * 4):
        one.append(timed(lambda: bridge.post("/action", {"tabId": tab, "kind": "click", "ref": ref,
                                                         "snap": "diff"}))[0])

        def separate() -> None:
            bridge.post("/action", {"tabId": tab, "kind": "click", "ref": ref})
            bridge.get(f"/tabs/{tab}/snapshot?diff=true&format=compact")

        two.append(timed(separate)[0])
    diff = bridge.post("/action", {"tabId": tab, "kind": "click", "ref": ref, "snap": "diff"})["snapshot"]
    return [("click + snap:diff in one answer (small page)", f"median {med_ms(one):.0f} ms",
             f"{peers.count_tokens(diff)} tokens: {diff.splitlines()[0].split('|')[-1].strip()}"),
            ("click, then GET /snapshot?diff=true", f"median {med_ms(two):.0f} ms", "two round trips, no settle wait")]


def human_input(base: str, bridge: Bridge, args: argparse.Namespace, **_: Any) -> list[Row]:
    """A plain click against a humanized one (the plain path must not pay for the human one)."""
    tab = bridge.post("/navigate", {"url": base + "/small.html"})["tabId"]
    snap = bridge.get(f"/tabs/{tab}/snapshot?filter=interactive&format=compact").text
    ref = next(line.split(" ")[0] for line in snap.splitlines() if " button " in line)
    plain = [timed(lambda: bridge.post("/action", {"tabId": tab, "kind": "click", "ref": ref}))[0]
             for _ in range(args.snap_runs * 10)]
    human = [timed(lambda: bridge.post("/action", {"tabId": tab, "kind": "click", "ref": ref, "humanize": True}))[0]
             for _ in range(args.snap_runs)]
    return [("click by ref, plain", f"median {med_ms(plain):.1f} ms", ""),
            ("click by ref, humanize: true", f"median {med_ms(human):.0f} ms", "a Bezier path, pauses as a hand makes")]


SECTIONS: dict[str, Callable[..., list[Row]]] = {
    "trivial": trivial_call,
    "snapshot": big_snapshot,
    "smallsnap": small_snapshot,
    "parallel": parallel_tabs,
    "formats": formats_and_tables,
    "snapdiff": snap_diff_cost,
    "human": human_input,
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200, help="trivial calls per side (default 200)")
    ap.add_argument("--snap-runs", type=int, default=5, help="snapshots per side (default 5)")
    ap.add_argument("--small-runs", type=int, default=100, help="rounds on the small form (default 100)")
    ap.add_argument("--par-rounds", type=int, default=3, help="rounds of the parallel-tabs comparison (default 3)")
    ap.add_argument("--no-peers", action="store_true", help="skip Playwright MCP and Chrome DevTools MCP")
    ap.add_argument("--only", action="append", choices=list(SECTIONS), help="run only these sections")
    args = ap.parse_args()

    base, stop_site = pages.serve({"/controls.html": pages.controls_page(), "/small.html": pages.small_page(),
                                   "/mid.html": pages.controls_page(100), "/products.html": pages.products_table(),
                                   "/choices.html": choices_form()})
    chromium = find_browser()
    chrome = ChromeProcess(chromium)
    chrome.start()
    work = Path(tempfile.mkdtemp(prefix="pinchtab-bench-"))
    bridge = Bridge(f"http://127.0.0.1:{chrome.port}", work)
    rows: list[tuple[str, str, str]] = []
    ctx = {"base": base, "chrome": chrome, "chromium": chromium, "bridge": bridge, "args": args}
    try:
        for name, section in SECTIONS.items():
            if not args.only or name in args.only:
                rows += section(**ctx)
    finally:
        bridge.stop()
        chrome.stop()
        stop_site()
        shutil.rmtree(work, ignore_errors=True)

    width = max(len(r[0]) for r in rows)
    print(f"pinchtab bridge benchmarks ({os.path.basename(chromium)}, {os.cpu_count()} cores, "
          f"Python {platform.python_version()})")
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:<22} {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
