"""Server mode on a fleet's browsers, measured in one run against a local launch and raw CDP.

    python -m bench.bench_fleet [--launches 4] [--runs 200]

* Instance start and first snapshot: ``POST /instances/start`` until ``running``, then a tab on a
  local page and its first snapshot, on a Browserless provider and on this machine (medians).
* Per-call overhead: ``POST /evaluate 1+1`` through the server on a remote instance, against raw
  ``Runtime.evaluate`` on a browser from the same Browserless and against the same call on a local
  instance of the same server, interleaved (medians of ``--runs``).
* Memory on the server's host per instance: the bridge child's processes (a remote instance has no
  browser here), from ``GET /instances/metrics``.

Browserless runs from tests/fleet (``npm ci --prefix tests/fleet``); the server, the engine and a
page server are started here and stopped at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import requests
import websocket

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import pages  # noqa: E402
from bench.bench_server import TOKEN  # noqa: E402
from bench.common import med_ms, pct_ms, timed, wait_for  # noqa: E402
from bench.engines import BrowserlessProcess  # noqa: E402
from bench.processes import ServerSubprocess, free_port  # noqa: E402


class FleetServer(ServerSubprocess):
    """``pinchtab server`` with two providers: Browserless (``bl``) and this machine (``here``)."""

    def __init__(self, home: Path, engine: BrowserlessProcess) -> None:
        port = free_port()
        start = 30000 + (os.getpid() % 200) * 100
        cfg = home / "config.json"
        cfg.write_text(json.dumps({
            "multiInstance": {"strategy": "explicit", "instancePortStart": start, "instancePortEnd": start + 99},
            "security": {"allowEvaluate": True}, "instanceDefaults": {"stealthLevel": "off"},
            "browsers": {"providers": [{"name": "bl", "kind": "cdp", "capacity": 8, "url": engine.ws_url},
                                       {"name": "here", "kind": "local", "capacity": 8}]}}))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_"))}
        env.update(HOME=str(home), PINCHTAB_PORT=str(port), PINCHTAB_CONFIG=str(cfg), PINCHTAB_TOKEN=TOKEN)
        super().__init__([sys.executable, "-m", "app.clients.cli", "server"], port=port, env=env, cwd=ROOT,
                         log_path=home / "server.log", name="server", stop_timeout_s=60)
        self.http = requests.Session()
        self.http.headers["Authorization"] = f"Bearer {TOKEN}"
        self.wait_healthy(60)

    def call(self, method: str, path: str, **kw: Any) -> requests.Response:
        kw.setdefault("timeout", 90)
        r = self.http.request(method, self.base + path, **kw)
        r.raise_for_status()
        return r

    def start_and_snapshot(self, provider: str, url: str) -> tuple[str, str, float, float]:
        """(instance, tab, seconds to running, seconds to the first snapshot after that)."""
        t0 = time.perf_counter()
        iid = self.call("POST", "/instances/start", json={"provider": provider}).json()["id"]
        wait_for(lambda: self.call("GET", f"/instances/{iid}").json()["status"] == "running", 60, 0.02)
        up = time.perf_counter() - t0
        t1 = time.perf_counter()
        tab = self.call("POST", f"/instances/{iid}/tabs/open", json={"url": url}).json()["tabId"]
        self.call("GET", f"/snapshot?tabId={tab}&format=compact")
        return iid, tab, up, time.perf_counter() - t1


def raw_evaluate_session(engine: BrowserlessProcess) -> tuple[websocket.WebSocket, str]:
    ws = websocket.create_connection(engine.ws_url, skip_utf8_validation=True, suppress_origin=True, timeout=60)
    n = 0

    def call(method: str, params: dict[str, Any], session: str = "") -> dict[str, Any]:
        nonlocal n
        n += 1
        routed = {"sessionId": session} if session else {}
        ws.send(json.dumps({"id": n, "method": method, "params": params, **routed}))
        while True:
            reply = json.loads(ws.recv())
            if reply.get("id") == n:
                return reply["result"]

    target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    ws.call = call  # type: ignore[attr-defined]
    return ws, session


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--launches", type=int, default=4)
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-fleet-"))
    base_url, stop_site = pages.serve({"/small": pages.small_page()})
    engine = BrowserlessProcess(work / "engine", concurrent=8)
    server = None
    try:
        engine.wait_healthy(60)
        server = FleetServer(work, engine)
        url = base_url + "/small"
        rows = []
        for provider in ("here", "bl"):
            ups, snaps = [], []
            for _ in range(args.launches):
                iid, _tab, up, snap = server.start_and_snapshot(provider, url)
                ups.append(up)
                snaps.append(snap)
                server.call("POST", f"/instances/{iid}/stop")
            rows.append((f"start -> running ({provider})", f"median {statistics.median(ups):.2f} s",
                         f"first tab + snapshot: median {statistics.median(snaps) * 1000:.0f} ms"))
        iid, tab, _, _ = server.start_and_snapshot("bl", url)
        local_iid, local_tab, _, _ = server.start_and_snapshot("here", url)
        ws, session = raw_evaluate_session(engine)
        ours, local, raw = [], [], []
        body = {"tabId": tab, "expression": "1+1"}
        local_body = {"tabId": local_tab, "expression": "1+1"}
        for _ in range(args.runs):
            ours.append(timed(lambda: server.call("POST", "/evaluate", json=body))[0])
            local.append(timed(lambda: server.call("POST", "/evaluate", json=local_body))[0])
            raw.append(timed(lambda: ws.call("Runtime.evaluate", {"expression": "1+1"}, session))[0])  # type: ignore
        ws.close()
        rows.append(("evaluate 1+1, remote instance via the server", f"median {med_ms(ours):.2f} ms",
                     f"p90 {pct_ms(ours, .9):.2f} ms"))
        rows.append(("evaluate 1+1, local instance via the server", f"median {med_ms(local):.2f} ms",
                     f"remote - local: {med_ms(ours) - med_ms(local):+.2f} ms"))
        rows.append(("raw Runtime.evaluate, same engine", f"median {med_ms(raw):.2f} ms",
                     f"overhead +{med_ms(ours) - med_ms(raw):.2f} ms"))
        metrics = {m["id"]: m for m in server.call("GET", "/instances/metrics").json()}
        # The bridge child's process group: a local instance's Chromium runs in a group of its own.
        for name, i in (("remote", iid), ("local", local_iid)):
            rows.append((f"host memory per bridge child, {name}", f"{metrics[i]['rssBytes'] / 2**20:.0f} MiB",
                         f"{metrics[i]['processes']} processes"))
        width = max(len(r[0]) for r in rows)
        for label, value, extra in rows:
            print(f"{label:<{width}}  {value:<16}  {extra}")
        return 0
    finally:
        if server is not None:
            server.stop()
        engine.stop()
        stop_site()


if __name__ == "__main__":
    sys.exit(main())
