"""Server mode's figures, measured in one run and printed as one table.

    python -m bench.bench_server [--launches 5] [--runs 200] [--duration 60] [--instances 4] [--tabs 2]

* Instance launch: ``POST /instances/start`` until the instance is ``running`` (median of
  ``--launches``; target under 2 s).
* Proxy overhead: ``GET /tabs`` through the server against the same bridge directly, interleaved,
  over keep-alive connections (median of ``--runs`` each; target under 2 ms).
* Load: ``--instances`` instances x ``--tabs`` tabs driven at once for ``--duration`` seconds, each
  tab looping navigate (a local page), interactive snapshot, click; errors counted, and the RSS of
  the server's worker and of the manager at the start and the end.

The server runs as users run it (``pinchtab server`` under gunicorn, real HTTP), in a temporary
HOME, with a token; everything it starts is stopped at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import pages  # noqa: E402
from bench.common import med_ms, pct_ms, rss_mb, wait_for  # noqa: E402
from bench.processes import ServerExited, ServerSubprocess, free_port  # noqa: E402

TOKEN = "bench-token"


def children_matching(parent: int, needle: bytes) -> list[int]:
    from app.orchestrator.procfs import children_of

    return children_of(parent, needle)


class Server(ServerSubprocess):
    """``pinchtab server`` in a subprocess (strategy explicit: the bench starts every instance)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        port = free_port()
        start = 30000 + (os.getpid() % 200) * 100
        cfg = home / "config.json"
        cfg.write_text(json.dumps({"multiInstance": {"strategy": "explicit", "instancePortStart": start,
                                                     "instancePortEnd": start + 99}}))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_"))}
        env.update(HOME=str(home), PINCHTAB_PORT=str(port), PINCHTAB_CONFIG=str(cfg), PINCHTAB_TOKEN=TOKEN)
        super().__init__([sys.executable, "-m", "app.clients.cli", "server"], port=port, env=env, cwd=ROOT,
                         log_path=home / "server.log", name="server", stop_timeout_s=60)
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {TOKEN}"
        try:
            self.wait_healthy(60)
        except (ServerExited, TimeoutError):
            self.stop()
            raise

    def call(self, method: str, path: str, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", 90)
        return self.http.request(method, self.base + path, **kw)

    def worker_pid(self) -> int | None:
        found = children_matching(self.proc.pid, b"app.clients.cli")
        return found[0] if found else None

    def manager_pid(self) -> int | None:
        found = children_matching(self.proc.pid, b"app.orchestrator.manager")
        return found[0] if found else None

    def start_instance(self) -> tuple[str, float]:
        t0 = time.perf_counter()
        r = self.call("POST", "/instances/start", json={})
        r.raise_for_status()
        iid = r.json()["id"]

        def running() -> bool:
            status = self.call("GET", f"/instances/{iid}").json()["status"]
            if status == "error":
                raise RuntimeError(f"instance {iid} failed: {self.call('GET', f'/instances/{iid}').json()}")
            return status == "running"

        wait_for(running, 60)
        return iid, time.perf_counter() - t0

    def stop(self) -> None:
        super().stop()
        self.http.close()


Row = tuple[str, str, str]


def launches(server: Server, args: argparse.Namespace) -> list[Row]:
    times = []
    for _ in range(args.launches):
        iid, took = server.start_instance()
        times.append(took)
        server.call("POST", f"/instances/{iid}/stop").raise_for_status()
    return [("instance launch -> running", f"median {statistics.median(times):.2f} s",
             f"n={len(times)}, min {min(times):.2f} s, max {max(times):.2f} s (target < 2 s)")]


def bridge_token(server: Server, iid: str) -> str:
    """The instance's internal token, from its bridge's environment (a bench of our own processes)."""
    pid = json.loads((server.home / ".pinchtab" / "run" / "pids" / f"{iid}.json").read_text())["pid"]
    with open(f"/proc/{pid}/environ", "rb") as fh:
        env = dict(item.split(b"=", 1) for item in fh.read().split(b"\0") if b"=" in item)
    return env[b"PINCHTAB_TOKEN"].decode()


def overhead(server: Server, args: argparse.Namespace, base: str) -> list[Row]:
    iid, _ = server.start_instance()
    try:
        record = server.call("GET", f"/instances/{iid}").json()
        server.call("POST", f"/instances/{iid}/tabs/open", json={"url": base + "/small.html"}).raise_for_status()
        direct = requests.Session()
        direct.headers["Authorization"] = f"Bearer {bridge_token(server, iid)}"
        proxied = server.http
        # Shorthand GET /tabs goes to the default instance: with strategy explicit that is the oldest
        # running one, which is this one (the launches above are stopped).
        urls = {"direct": record["url"] + "/tabs", "proxied": server.base + "/tabs"}
        sessions = {"direct": direct, "proxied": proxied}
        for name in urls:
            for _ in range(20):  # warm both connection pools
                sessions[name].get(urls[name], timeout=10).raise_for_status()
        times: dict[str, list[float]] = {"direct": [], "proxied": []}
        for _ in range(args.runs):
            for name in ("direct", "proxied"):
                t0 = time.perf_counter()
                r = sessions[name].get(urls[name], timeout=10)
                times[name].append(time.perf_counter() - t0)
                assert r.status_code == 200 and r.json()["tabs"], r.text
        d, p = med_ms(times["direct"]), med_ms(times["proxied"])
        direct.close()
        return [("GET /tabs direct to the bridge", f"median {d:.2f} ms", f"p90 {pct_ms(times['direct'], 0.9):.2f} ms"),
                ("GET /tabs through the server", f"median {p:.2f} ms", f"p90 {pct_ms(times['proxied'], 0.9):.2f} ms"),
                ("proxy overhead per request", f"{p - d:.2f} ms", f"median difference, n={args.runs} each "
                                                                  "(target < 2 ms)")]
    finally:
        server.call("POST", f"/instances/{iid}/stop")


def load(server: Server, args: argparse.Namespace, base: str) -> list[Row]:
    worker, manager = server.worker_pid(), server.manager_pid()
    rss_start = (rss_mb(worker), rss_mb(manager))
    instances = [server.start_instance()[0] for _ in range(args.instances)]
    tabs = []
    for iid in instances:
        for _ in range(args.tabs):
            r = server.call("POST", f"/instances/{iid}/tabs/open", json={"url": base + "/small.html"})
            r.raise_for_status()
            tabs.append(r.json()["tabId"])
    counts = {"ops": 0, "loops": 0, "errors": 0}
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + args.duration

    def drive(tab: str) -> None:
        http = requests.Session()
        http.headers["Authorization"] = f"Bearer {TOKEN}"
        steps: list[tuple[str, str, dict[str, Any]]] = [
            ("POST", f"/tabs/{tab}/navigate", {"json": {"url": base + "/small.html"}}),
            ("GET", f"/tabs/{tab}/snapshot?filter=interactive&format=compact", {}),
            ("POST", f"/tabs/{tab}/action", {"json": {"kind": "click", "selector": "#inc"}}),
        ]
        while time.monotonic() < deadline:
            for method, path, kw in steps:
                t0 = time.perf_counter()
                try:
                    r = http.request(method, server.base + path, timeout=60, **kw)
                    ok = r.status_code == 200
                    detail = f"{method} {path.split('?')[0]}: {r.status_code} {r.text[:120]}"
                except requests.RequestException as exc:
                    ok, detail = False, f"{method} {path}: {exc}"
                took = time.perf_counter() - t0
                with lock:
                    counts["ops"] += 1
                    latencies.append(took)
                    if not ok:
                        counts["errors"] += 1
                        errors.append(detail)
            with lock:
                counts["loops"] += 1
        http.close()

    threads = [threading.Thread(target=drive, args=(t,), name=f"drive:{t[:8]}") for t in tabs]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(args.duration + 120)
    elapsed = time.perf_counter() - t0
    rss_end = (rss_mb(worker), rss_mb(manager))
    for iid in instances:
        server.call("POST", f"/instances/{iid}/stop")
    rows = [(f"load: {args.instances} instances x {args.tabs} tabs, {args.duration:.0f} s",
             f"{counts['loops']} loops, {counts['ops']} calls",
             f"{counts['ops'] / elapsed:.1f} calls/s, errors {counts['errors']}"),
            ("load: call latency", f"median {med_ms(latencies):.0f} ms",
             f"p90 {pct_ms(latencies, 0.9):.0f} ms, p99 {pct_ms(latencies, 0.99):.0f} ms"),
            ("RSS server worker", f"{rss_start[0]:.1f} -> {rss_end[0]:.1f} MB", "start of load -> end"),
            ("RSS manager", f"{rss_start[1]:.1f} -> {rss_end[1]:.1f} MB", "start of load -> end")]
    if errors:
        rows.append(("load: first error", errors[0][:60], ""))
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--launches", type=int, default=5, help="instance launches to time (default 5)")
    ap.add_argument("--runs", type=int, default=200, help="trivial calls per side (default 200)")
    ap.add_argument("--duration", type=float, default=60.0, help="seconds of load (default 60)")
    ap.add_argument("--instances", type=int, default=4, help="instances under load (default 4)")
    ap.add_argument("--tabs", type=int, default=2, help="tabs per instance under load (default 2)")
    args = ap.parse_args()

    base, stop_site = pages.serve({"/small.html": pages.small_page()})
    home = Path(tempfile.mkdtemp(prefix="pinchtab-bench-server-"))
    server = Server(home)
    rows: list[Row] = []
    try:
        rows += launches(server, args)
        rows += overhead(server, args, base)
        rows += load(server, args, base)
    finally:
        server.stop()
        stop_site()
        shutil.rmtree(home, ignore_errors=True)

    width = max(len(r[0]) for r in rows)
    load_avg = os.getloadavg()
    print(f"pinchtab server benchmarks ({os.cpu_count()} cores, load average {load_avg[0]:.1f} at the end)")
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:<26} {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
