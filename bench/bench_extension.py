"""Extension mode's figures, measured side by side in one run, printed as one table.

    python -m bench.bench_extension [--runs 200] [--snap-runs 20]

* A trivial command (``query body exists``) as the original CLI sends it (one line on the Unix
  socket of ``pinchtab ext daemon``), answered by our extension over its command channel: median,
  p95 and the longest (the original extension's gaps come from its 100 ms polls and dropped alarms).
* Snapshots of a small page and of a page with 1,000 controls through the relay (``pinchtab bridge
  --extension``, CDP over ``chrome.debugger``) against a bridge on the same Chromium over direct
  CDP (``--cdp-url``), the same tab for both.

Chromium runs headless with our extension (``bench.extension_browser``); its debugging port serves
the harness and the direct bridge only.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import pages  # noqa: E402
from bench.bench_bridge import Bridge  # noqa: E402
from bench.common import med_ms, pct_ms, wait_for  # noqa: E402
from bench.extension_browser import ExtensionBrowser  # noqa: E402
from bench.processes import ServerSubprocess, free_port  # noqa: E402

Row = tuple[str, str, str]


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home), **extra}
    env.pop("PINCHTAB_TOKEN", None)
    env.pop("PINCHTAB_CONFIG", None)
    return env


def pinchtab(*args: str) -> list[str]:
    return [sys.executable, "-m", "app.clients.cli", *args]


def socket_command(path: Path, command: dict[str, Any]) -> dict[str, Any]:
    """One command as the original CLI sends it: a line, the end of its side, the answer line."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(30)
        s.connect(str(path))
        s.sendall(json.dumps(command).encode() + b"\n")
        s.shutdown(socket.SHUT_WR)
        data = b""
        while not data.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    return json.loads(data)


def daemon_round_trips(chrome: ExtensionBrowser, base: str, work: Path, args: argparse.Namespace) -> list[Row]:
    port, sock = free_port(), work / "sak" / "browser.sock"
    daemon = ServerSubprocess(pinchtab("ext", "daemon", "--port", str(port), "--socket", str(sock)), port=port,
                              env=env_for(work), cwd=ROOT, log_path=work / "daemon.log", name="ext daemon")
    try:
        daemon.wait_healthy(30)
        chrome.configure(daemon.base, "")
        wait_for(lambda: requests.get(daemon.base + "/health", timeout=2).json().get("extensionSeenAt"), 20)
        opened = socket_command(sock, {"type": "open_tab", "data": {"url": base + "/small.html"}, "requestId": "open"})
        assert opened.get("success") is True, opened
        times = []
        for n in range(args.runs + 10):
            t0 = time.perf_counter()
            answer = socket_command(sock, {"type": "query", "data": {"selector": "body", "mode": "exists"},
                                           "requestId": n})
            if n >= 10:
                times.append(time.perf_counter() - t0)
            assert answer.get("success") is True, answer
    finally:
        daemon.stop()
    return [("query via pinchtab ext daemon + our extension",
             f"median {med_ms(times):.2f} ms", f"p95 {pct_ms(times, 0.95):.2f} ms, max {max(times) * 1000:.1f} ms "
                                               f"(n={len(times)})")]


def relay_snapshots(chrome: ExtensionBrowser, base: str, work: Path, args: argparse.Namespace) -> list[Row]:
    home = work / "relay"
    home.mkdir()
    api_port, ext_port = free_port(), free_port()
    pairing = json.loads(subprocess.run(pinchtab("extension", "pair", "--json"), env=env_for(home), cwd=ROOT,
                                        capture_output=True, text=True, timeout=60, check=True).stdout)["pairingToken"]
    relay = ServerSubprocess(pinchtab("bridge", "--extension", "--extension-port", str(ext_port)), port=api_port,
                             env=env_for(home, PINCHTAB_PORT=str(api_port)), cwd=ROOT, log_path=home / "bridge.log",
                             name="relay bridge")
    direct = None
    rows: list[Row] = []
    try:
        chrome.configure(f"http://127.0.0.1:{ext_port}", pairing)
        relay.wait_healthy(60)
        direct = Bridge(chrome.http, work)
        http = requests.Session()
        for name, path in (("small page", "/small.html"), ("1,000 controls", "/controls.html")):
            tab = http.post(relay.base + "/tab", json={"action": "new", "url": base + path}, timeout=60).json()
            tab_id = tab["tabId"]
            # The direct bridge sees the same tab by its CDP target id (the relay names it tab-<n>).
            def listed(url: str = base + path) -> str | None:
                return next((t["id"] for t in requests.get(chrome.http + "/json/list", timeout=5).json()
                             if t.get("url") == url), None)

            target = wait_for(listed, 10)
            sides = {}
            for side, url in (("relay", f"{relay.base}/tabs/{tab_id}/snapshot"),
                              ("direct", f"{direct.base}/tabs/{target}/snapshot")):
                times = []
                for n in range(args.snap_runs + 2):
                    t0 = time.perf_counter()
                    r = http.get(url, params={"filter": "interactive", "format": "compact"}, timeout=120)
                    if n >= 2:
                        times.append(time.perf_counter() - t0)
                    r.raise_for_status()
                sides[side] = times
            ratio = med_ms(sides["relay"]) / med_ms(sides["direct"])
            rows.append((f"snapshot, {name}: relay vs direct CDP",
                         f"{med_ms(sides['relay']):.1f} ms vs {med_ms(sides['direct']):.1f} ms",
                         f"{ratio:.2f}x (median of {args.snap_runs}; p95 {pct_ms(sides['relay'], 0.95):.1f} vs "
                         f"{pct_ms(sides['direct'], 0.95):.1f} ms)"))
    finally:
        if direct is not None:
            direct.stop()
        relay.stop()
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=200, help="commands through the daemon (default 200)")
    ap.add_argument("--snap-runs", type=int, default=20, help="snapshots per side and page (default 20)")
    args = ap.parse_args()
    base, stop_site = pages.serve({"/small.html": pages.small_page(), "/controls.html": pages.controls_page(200)})
    chrome = ExtensionBrowser().start()
    work = Path(tempfile.mkdtemp(prefix="pinchtab-bench-"))
    rows: list[Row] = []
    try:
        rows += daemon_round_trips(chrome, base, work, args)
        rows += relay_snapshots(chrome, base, work, args)
    finally:
        chrome.stop()
        stop_site()
        shutil.rmtree(work, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    print(f"pinchtab extension-mode benchmarks ({os.cpu_count()} cores)")
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:<24} {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
