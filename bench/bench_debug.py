"""The debug bridge's figures, measured side by side in one run, printed as one table.

    python -m bench.bench_debug [--runs 200] [--messages 1000000] [--only SECTION ...]

* ``console.log`` in a page to the agent's JSON line on stdout, median and p95 over ``--runs``:
  the npm SDK (``debug-bridge-browser``, from ``tests/js``) through the original's Node relay
  (``bench/debug_relay.mjs``, the baseline) and through ``pinchtab debug connect --json``; our SDK
  through ``pinchtab debug connect --json``; the CDP side (``POST /tabs/{id}/debug``, no SDK in the
  page) through ``pinchtab debug attach --json`` on a bridge.
* A DOM mutation to the agent's line (the CDP side batches every 100 ms, as the SDK does).
* A page mutating 1,000 nodes a second on a debugged tab: the bridge's CPU, and snapshots of
  another tab before and during it.
* Memory of ``pinchtab debug connect`` after an app sent ``--messages`` console messages.

Latency is the page's clock (``performance.timeOrigin + performance.now()``, written into the
logged line) against this process's wall clock when the line arrives: the same machine's clock.
The npm packages come from ``npm ci --prefix tests/js`` (``scripts/dev.sh test`` does it); ``ws``
for the baseline is installed once into the bench cache.
"""
from __future__ import annotations

import argparse
import json
import os
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests
import websocket

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import npm, pages  # noqa: E402
from bench.bench_bridge import Bridge, RawCDP  # noqa: E402
from bench.common import group_cpu_s, med_ms, pct_ms, rss_mb, wait_for  # noqa: E402
from bench.processes import free_port  # noqa: E402
from cdp.launcher import ChromeProcess, find_browser  # noqa: E402

NPM_DIR = ROOT / "tests" / "js" / "node_modules"
SESSION = "bench-debug-session-0001"
Row = tuple[str, str, str]

FIRE = ("<script>window.fire = n =>"
        " console.log('bench', String(n), String(performance.timeOrigin + performance.now()));"
        "window.mutate = n => { const i = document.createElement('i');"
        " i.textContent = n + ':' + (performance.timeOrigin + performance.now()); document.body.appendChild(i); };"
        "</script>")
NPM_PAGE = f"""<!doctype html><title>npm sdk</title>
<script type="importmap">{{"imports": {{"debug-bridge-types": "/npm/debug-bridge-types/dist/index.js",
  "html2canvas-pro": "/npm/html2canvas-pro/dist/html2canvas-pro.esm.js"}}}}</script>
<script type="module">
import {{ createDebugBridge }} from "/npm/debug-bridge-browser/dist/index.js";
const q = new URLSearchParams(location.search);
createDebugBridge({{ url: q.get("url"), sessionId: q.get("session"), appName: "bench" }}).connect();
</script>{FIRE}<p>npm SDK</p>"""
PLAIN_PAGE = f"<!doctype html><title>plain</title>{FIRE}<p>no SDK</p>"
FLOOD_PAGE = """<!doctype html><title>flood</title><div id=box></div><script>
// 1,000 nodes a second: ten every 10 ms, the oldest removed so the page stays the same size.
const box = document.getElementById('box');
setInterval(() => { for (let i = 0; i < 10; i++) { const d = document.createElement('div');
  d.textContent = 'row ' + Math.random(); box.appendChild(d);
  if (box.childElementCount > 200) box.firstChild.remove(); } }, 10);
</script>"""


class Lines:
    """A subprocess whose stdout lines (JSON) are read on a thread and stamped as they arrive."""

    def __init__(self, argv: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     env=env, cwd=cwd, start_new_session=True)
        self.lines: queue.Queue[tuple[float, dict[str, Any]]] = queue.Queue()
        threading.Thread(target=self._read_loop, name="bench-lines", daemon=True).start()

    def _read_loop(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            stamp = time.time()
            try:
                self.lines.put((stamp, json.loads(raw)))
            except ValueError:
                continue

    def wait(self, match: Callable[[dict[str, Any]], bool], timeout_s: float = 20.0) -> tuple[float, dict[str, Any]]:
        deadline = time.monotonic() + timeout_s
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("the expected line did not arrive")
            stamp, line = self.lines.get(timeout=left)
            if match(line):
                return stamp, line

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


def pinchtab(*args: str) -> list[str]:
    return [sys.executable, "-m", "app.clients.cli", *args]


def bench_env(work: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(work)}   # no config of the user's: the defaults
    env.pop("PINCHTAB_TOKEN", None)
    env.pop("PINCHTAB_CONFIG", None)
    return env


def console_latencies(cdp: RawCDP, out: Lines, runs: int) -> list[float]:
    """Seconds from console.log in the page to its line on the agent's stdout, ``runs`` times."""
    def is_fire(n: int) -> Callable[[dict[str, Any]], bool]:
        return lambda line: line.get("type") == "console" and line.get("args", [None, None])[1:2] == [str(n)]

    samples = []
    for n in range(runs + 10):
        cdp.call("Runtime.evaluate", {"expression": f"fire({n})"})
        stamp, line = out.wait(is_fire(n))
        if n >= 10:  # the first few warm up the path
            samples.append(stamp - float(line["args"][2]) / 1000)
    return samples


def open_page(chrome: ChromeProcess, url: str) -> tuple[RawCDP, str]:
    # A blank tab, then Page.navigate: /json/new would cut the URL at its first "&".
    target = requests.put(f"http://127.0.0.1:{chrome.port}/json/new?about:blank", timeout=30).json()
    cdp = RawCDP(browser_ws(chrome), target["id"])
    cdp.call("Page.navigate", {"url": url})
    return cdp, target["id"]


def browser_ws(chrome: ChromeProcess) -> str:
    return requests.get(f"http://127.0.0.1:{chrome.port}/json/version", timeout=30).json()["webSocketDebuggerUrl"]


def close_page(chrome: ChromeProcess, cdp: RawCDP, target_id: str) -> None:
    cdp.close()
    requests.get(f"http://127.0.0.1:{chrome.port}/json/close/{target_id}", timeout=30)


def row(name: str, xs: list[float]) -> Row:
    return (name, f"median {med_ms(xs):.2f} ms", f"p95 {pct_ms(xs, 0.95):.2f} ms (n={len(xs)})")


def sdk_paths(base: str, chrome: ChromeProcess, work: Path, args: argparse.Namespace, **_: Any) -> list[Row]:
    ws_dir, why = npm.ensure_package("ws@8", "ws")
    sides: list[tuple[str, list[str], str]] = []
    if ws_dir is not None:
        relay = ["node", str(ROOT / "bench" / "debug_relay.mjs"), str(ws_dir)]
        sides.append(("npm SDK -> Node relay (baseline)", relay, "npm"))
    connect = pinchtab("debug", "connect", "--json", "--session", SESSION)
    sides.append(("npm SDK -> pinchtab debug connect", connect, "npm"))
    sides.append(("our SDK -> pinchtab debug connect", connect, "ours"))
    rows: list[Row] = [] if ws_dir is not None else [("baseline (Node relay)", "skipped", why or "")]
    for name, argv, sdk in sides:
        port = free_port()
        argv = [*argv, str(port), SESSION] if argv[0] == "node" else [*argv, "--port", str(port)]
        out = Lines(argv, env=bench_env(work), cwd=ROOT)
        try:
            out.wait(lambda line: line.get("event") == "server_started", 30)
            ws = f"ws://127.0.0.1:{port}/debug?role=app&sessionId={SESSION}"
            url = (f"{base}/npm.html?session={SESSION}&url={requests.utils.quote(ws, safe='')}" if sdk == "npm"
                   else f"{base}/ours.html?port={port}")
            cdp, target = open_page(chrome, url)
            try:
                out.wait(lambda line: line.get("event") == "app_connected", 30)
                rows.append(row(f"console.log -> line: {name}", console_latencies(cdp, out, args.runs)))
            finally:
                close_page(chrome, cdp, target)
        finally:
            out.stop()
    return rows


def cdp_side(base: str, chrome: ChromeProcess, work: Path, args: argparse.Namespace, **_: Any) -> list[Row]:
    bridge = Bridge(f"http://127.0.0.1:{chrome.port}", work)
    try:
        tab = bridge.post("/tab", {"action": "new", "url": f"{base}/plain.html"})["tabId"]
        other = bridge.post("/tab", {"action": "new", "url": f"{base}/plain.html"})["tabId"]
        session = bridge.post(f"/tabs/{tab}/debug", {})["sessionId"]
        out = Lines(pinchtab("debug", "attach", "--json", "--session", session, "--server", bridge.base),
                    env=bench_env(work), cwd=ROOT)
        cdp = RawCDP(browser_ws(chrome), tab)
        rows: list[Row] = []
        try:
            out.wait(lambda line: line.get("event") == "app_connected", 30)
            rows.append(row("console.log -> line: CDP side -> pinchtab debug attach",
                            console_latencies(cdp, out, args.runs)))
            rows.append(row("DOM mutation -> line: CDP side (100 ms batches)", mutation_latencies(cdp, out, 40)))
        finally:
            cdp.close()
            out.stop()
        rows += flood(base, bridge, other, work)
        return rows
    finally:
        bridge.stop()


def mutation_latencies(cdp: RawCDP, out: Lines, runs: int) -> list[float]:
    samples = []
    for n in range(runs):
        cdp.call("Runtime.evaluate", {"expression": f"mutate({n})"})
        pattern = re.compile(rf"\b{n}:(\d+(?:\.\d+)?)")

        def has(line: dict[str, Any], pattern: re.Pattern[str] = pattern) -> bool:
            return line.get("type") == "dom_mutations" and bool(pattern.search(json.dumps(line.get("mutations"))))

        stamp, line = out.wait(has)
        match = pattern.search(json.dumps(line["mutations"]))
        assert match is not None
        samples.append(stamp - float(match.group(1)) / 1000)
    return samples


def flood(base: str, bridge: Bridge, other: str, work: Path) -> list[Row]:
    """A debugged page mutating 1,000 nodes a second: the bridge's CPU, snapshots of another tab."""
    def snapshots(n: int) -> list[float]:
        xs = []
        for _ in range(n):
            t0 = time.perf_counter()
            bridge.get(f"/tabs/{other}/snapshot?filter=interactive")
            xs.append(time.perf_counter() - t0)
        return xs

    quiet = snapshots(30)
    tab = bridge.post("/tab", {"action": "new", "url": f"{base}/flood.html"})["tabId"]
    undebugged = snapshots(30)   # the flood's own cost to Chrome, before we watch it
    session = bridge.post(f"/tabs/{tab}/debug", {})["sessionId"]
    out = Lines(pinchtab("debug", "attach", "--json", "--session", session, "--server", bridge.base),
                env=bench_env(work), cwd=ROOT)
    try:
        out.wait(lambda line: line.get("type") == "dom_mutations", 30)
        pgid = os.getpgid(bridge.proc.pid)
        cpu0, t0 = group_cpu_s(pgid), time.monotonic()
        busy = snapshots(30)
        wait_for(lambda: time.monotonic() - t0 >= 10, 15, 0.2)
        cpu1, t1 = group_cpu_s(pgid), time.monotonic()
        agent_lines = out.lines.qsize()
    finally:
        out.stop()
        bridge.http.delete(f"{bridge.base}/tabs/{tab}/debug", timeout=30)
    cpu = "n/a" if cpu0 is None or cpu1 is None else f"{100 * (cpu1 - cpu0) / (t1 - t0):.0f}% of one core"
    def spread(xs: list[float]) -> tuple[str, str]:
        return f"median {med_ms(xs):.1f} ms", f"p95 {pct_ms(xs, 0.95):.1f} ms"

    return [("flood (1,000 nodes/s, debugged): bridge CPU", cpu, f"{agent_lines} agent lines in {t1 - t0:.0f} s"),
            ("snapshot of another tab: quiet", *spread(quiet)),
            ("snapshot of another tab: flood, not debugged", *spread(undebugged)),
            ("snapshot of another tab: flood, debugged", *spread(busy))]


def memory(work: Path, args: argparse.Namespace, **_: Any) -> list[Row]:
    """RSS of ``pinchtab debug connect`` as an app sends console messages as fast as it can."""
    port = free_port()
    out = Lines(pinchtab("debug", "connect", "--json", "--session", SESSION, "--port", str(port)),
                env=bench_env(work), cwd=ROOT)
    try:
        out.wait(lambda line: line.get("event") == "server_started", 30)
        app = websocket.create_connection(f"ws://127.0.0.1:{port}/debug?role=app&sessionId={SESSION}",
                                          skip_utf8_validation=True, timeout=60)
        env = {"protocolVersion": 1, "sessionId": SESSION}
        app.send(json.dumps({**env, "type": "hello", "timestamp": 0, "url": "http://bench/",
                             "userAgent": "bench", "viewport": {"width": 1, "height": 1}}))
        out.wait(lambda line: line.get("event") == "app_connected", 30)
        drained = threading.Event()

        def drain() -> None:  # the agent reads what it is given; its lines are not kept
            while not drained.is_set():
                try:
                    out.lines.get(timeout=0.5)
                except queue.Empty:
                    continue

        threading.Thread(target=drain, daemon=True).start()
        start = rss_mb(out.proc.pid)
        marks = []
        t0 = time.monotonic()
        for n in range(args.messages):
            app.send(f'{{"protocolVersion":1,"sessionId":"{SESSION}","timestamp":{n},"type":"console",'
                     f'"level":"log","args":["message {n}"]}}')
            if (n + 1) % (args.messages // 4) == 0:
                marks.append(f"{rss_mb(out.proc.pid):.0f}")
        elapsed = time.monotonic() - t0
        app.close()
        drained.set()
        return [("memory of pinchtab debug connect", f"{start:.0f} MiB at start",
                 f"{' / '.join(marks)} MiB after each quarter of {args.messages:,} messages "
                 f"({args.messages / elapsed:,.0f} msg/s)")]
    finally:
        out.stop()


SECTIONS: dict[str, Callable[..., list[Row]]] = {"sdk": sdk_paths, "cdp": cdp_side, "memory": memory}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200, help="console lines per side (default 200)")
    ap.add_argument("--messages", type=int, default=1_000_000, help="messages for the memory figure")
    ap.add_argument("--only", action="append", choices=list(SECTIONS), help="run only these sections")
    args = ap.parse_args()
    if not (NPM_DIR / "debug-bridge-browser").is_dir():
        raise SystemExit("the npm SDK is not installed: run npm ci --prefix tests/js (scripts/dev.sh test does)")

    served = {"/npm.html": NPM_PAGE, "/plain.html": PLAIN_PAGE, "/flood.html": FLOOD_PAGE,
              "/ours.html": OURS_PAGE}
    for rel in ("debug-bridge-browser/dist/index.js", "debug-bridge-types/dist/index.js",
                "html2canvas-pro/dist/html2canvas-pro.esm.js"):
        served[f"/npm/{rel}"] = (NPM_DIR / rel).read_text(encoding="utf-8")
    base, stop_site = pages.serve(served)
    chromium = find_browser()
    chrome = ChromeProcess(chromium)
    chrome.start()
    work = Path(tempfile.mkdtemp(prefix="pinchtab-bench-"))
    rows: list[Row] = []
    ctx = {"base": base, "chrome": chrome, "work": work, "args": args}
    try:
        for name, section in SECTIONS.items():
            if not args.only or name in args.only:
                rows += section(**ctx)
    finally:
        chrome.stop()
        stop_site()
        shutil.rmtree(work, ignore_errors=True)

    width = max(len(r[0]) for r in rows)
    print(f"pinchtab debug bridge benchmarks ({os.path.basename(chromium)}, {os.cpu_count()} cores)")
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:<24} {b}")
    return 0


# Our SDK, loaded the way a page loads it: a script tag from the server it joins.
OURS_PAGE = f"""<!doctype html><title>our sdk</title>
<script>document.write('<script src="http://127.0.0.1:' + new URLSearchParams(location.search).get('port')
  + '/debug/sdk.js?sessionId={SESSION}"><' + '/script>');</script>{FIRE}<p>our SDK</p>"""


if __name__ == "__main__":
    sys.exit(main())
