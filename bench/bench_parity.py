"""The figures of the routes that came with the original's surface, each beside the raw CDP calls
it stands for, in one run, printed as one table.

    python -m bench.bench_parity [--runs 30]

* GET /capture (a screenshot and an interactive snapshot from one DOM epoch) against
  GET /screenshot then GET /snapshot, and against raw Page.captureScreenshot +
  Accessibility.getFullAXTree on the same tab.
* GET /network of a page that made 100 requests, and GET /timing against one raw Runtime.evaluate.
* POST /audit/page of a small page, and POST /scrape of a 20-page site: rendered against
  fetched without rendering (noBrowser).
* The command line: ``pinchtab title --tab ID`` (a process per call, as scripts run it) against
  the same GET /title over HTTP.
* Opening a tab: POST /tab {"action": "new"} against raw Target.createTarget + attachToTarget
  on a browser-level websocket; and a popup a click opens, until the bridge answers its network
  log with the popup's own document (the popup is set up before its first request).
* The prompt-injection scanner (IDPI) on page text of 3 KB (a typical /text), 100 KB and 1 MB:
  what it adds to every read it scans.

The bridge runs as users run it (``pinchtab bridge`` under gunicorn, over HTTP with keep-alive),
attached to a Chromium this script launches, so the raw client shares the browser.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import pages  # noqa: E402
from bench.bench_bridge import RawCDP  # noqa: E402
from bench.common import med_ms, pct_ms, timed  # noqa: E402
from bench.processes import ServerExited, ServerSubprocess, free_port  # noqa: E402
from cdp.launcher import ChromeProcess, find_browser  # noqa: E402

Row = tuple[str, str, str]
SITE_PAGES = 20


def site_pages() -> dict[str, str]:
    """The small page, a page that makes 100 requests, and a 20-page site that links in a ring."""
    out = {"/small.html": pages.small_page()}
    out["/popup.html"] = pages._doc("Opener", "<button id=open onclick=\"window.open('/small.html')\">open</button>")
    out["/requests.html"] = pages._doc("Requests", "<p>fetching</p><script>"
                                       "for (let i = 0; i < 100; i++) fetch('/small.html?i=' + i);</script>")
    for i in range(SITE_PAGES):
        links = " ".join(f'<a href="/site/{j}.html">page {j}</a>' for j in ((i + 1) % SITE_PAGES, (i + 2) % SITE_PAGES))
        out[f"/site/{i}.html"] = pages._doc(f"Page {i}", f"<main><h1>Page {i}</h1><p>{'Some text. ' * 50}</p>"
                                                         f"<ul><li>{links}</li></ul></main>")
    return out


class Bridge(ServerSubprocess):
    """``pinchtab bridge --cdp-url`` in a subprocess."""

    def __init__(self, cdp_http: str, workdir: Path) -> None:
        port = free_port()
        cfg = workdir / "config.json"
        cfg.write_text(json.dumps({"instanceDefaults": {"maxTabs": 50}}))
        env = {**os.environ, "PINCHTAB_CONFIG": str(cfg), "PINCHTAB_PORT": str(port), "HOME": str(workdir)}
        env.pop("PINCHTAB_TOKEN", None)
        super().__init__([sys.executable, "-m", "app.clients.cli", "bridge", "--cdp-url", cdp_http], port=port,
                         env=env, cwd=ROOT, log_path=workdir / "bridge.log", name="bridge", stop_timeout_s=20)
        self.http = requests.Session()
        try:
            self.wait_healthy(60)
        except (TimeoutError, ServerExited) as exc:
            self.stop()
            raise SystemExit(f"bridge did not start: {exc}; see {self.log_path}") from None

    def call(self, method: str, path: str, **kw: Any) -> requests.Response:
        r = self.http.request(method, self.base + path, timeout=300, **kw)
        r.raise_for_status()
        return r

    def stop(self) -> None:
        super().stop()
        self.http.close()


def capture(base: str, chrome: ChromeProcess, bridge: Bridge, runs: int) -> list[Row]:
    tab = bridge.call("POST", "/navigate", json={"url": base + "/small.html"}).json()["tabId"]
    raw = RawCDP(chrome.ws_url, tab)
    raw.call("Accessibility.enable")
    paired, apart, bare = [], [], []
    for _ in range(runs):
        paired.append(timed(lambda: bridge.call("GET", f"/tabs/{tab}/capture?output=inline&wait=none"))[0])
        apart.append(timed(lambda: (bridge.call("GET", f"/tabs/{tab}/screenshot"),
                                    bridge.call("GET", f"/tabs/{tab}/snapshot?filter=interactive")))[0])
        bare.append(timed(lambda: (raw.call("Page.captureScreenshot", {"format": "jpeg", "quality": 80}),
                                   raw.call("Accessibility.getFullAXTree")))[0])
    raw.close()
    return [
        ("capture: raw captureScreenshot + getFullAXTree", f"median {med_ms(bare):.1f} ms", f"p90 {pct_ms(bare, .9):.1f} ms"),
        ("capture: GET /capture (one DOM epoch)", f"median {med_ms(paired):.1f} ms", f"p90 {pct_ms(paired, .9):.1f} ms"),
        ("capture: GET /screenshot + GET /snapshot", f"median {med_ms(apart):.1f} ms", f"p90 {pct_ms(apart, .9):.1f} ms"),
    ]


def reads(base: str, chrome: ChromeProcess, bridge: Bridge, runs: int) -> list[Row]:
    tab = bridge.call("POST", "/navigate", json={"url": base + "/requests.html", "waitFor": "load"}).json()["tabId"]
    raw = RawCDP(chrome.ws_url, tab)
    expr = "JSON.stringify(performance.getEntriesByType('navigation')[0])"
    net, timing, bare = [], [], []
    count = 0
    for _ in range(runs):
        t, r = timed(lambda: bridge.call("GET", f"/tabs/{tab}/network?bufferSize=200"))
        net.append(t)
        count = r.json()["count"]
        timing.append(timed(lambda: bridge.call("GET", f"/tabs/{tab}/timing"))[0])
        bare.append(timed(lambda: raw.call("Runtime.evaluate", {"expression": expr, "returnByValue": True}))[0])
    raw.close()
    return [
        (f"GET /network ({count} entries)", f"median {med_ms(net):.1f} ms", f"p90 {pct_ms(net, .9):.1f} ms"),
        ("raw Runtime.evaluate (navigation entry)", f"median {med_ms(bare):.2f} ms", f"p90 {pct_ms(bare, .9):.2f} ms"),
        ("GET /timing (Web Vitals, awaits buffered entries)", f"median {med_ms(timing):.1f} ms",
         f"p90 {pct_ms(timing, .9):.1f} ms"),
    ]


def site_tools(base: str, bridge: Bridge) -> list[Row]:
    audit = [timed(lambda: bridge.call("POST", "/audit/page", json={"url": base + "/small.html"}))[0]
             for _ in range(5)]
    rows: list[Row] = [("POST /audit/page (small page, all collectors)", f"median {med_ms(audit):.0f} ms", "5 runs")]
    for no_browser in (False, True):
        t, r = timed(lambda: bridge.call("POST", "/scrape", json={"url": base + "/site/0.html", "maxPages": SITE_PAGES,
                                                                  "concurrency": 2, "noBrowser": no_browser}))
        n = len(r.json()["pages"])
        how = "fetched, not rendered" if no_browser else "rendered"
        rows.append((f"POST /scrape {n} pages, {how}", f"{t:.2f} s", f"{n / t:.1f} pages/s"))
    return rows


def cli(base: str, bridge: Bridge) -> list[Row]:
    import subprocess

    tab = bridge.call("POST", "/navigate", json={"url": base + "/small.html"}).json()["tabId"]
    env = {**os.environ, "PINCHTAB_SERVER": bridge.base, "HOME": str(bridge.log_path.parent)}
    env.pop("PINCHTAB_TOKEN", None)
    command = [sys.executable, "-m", "app.clients.cli", "title", "--tab", tab]
    runs = [timed(lambda: subprocess.run(command, env=env, cwd=ROOT, capture_output=True, check=True))[0]
            for _ in range(5)]
    http = [timed(lambda: bridge.call("GET", f"/title?tabId={tab}"))[0] for _ in range(30)]
    return [("CLI: pinchtab title --tab ID (a process per call)", f"median {med_ms(runs):.0f} ms", "5 runs"),
            ("  the same GET /title over HTTP", f"median {med_ms(http):.1f} ms", "")]


def tabs(base: str, chrome: ChromeProcess, bridge: Bridge, runs: int) -> list[Row]:
    # Two moments of a new tab: its answer (the tab is ours, its setup sent), and its first call
    # answered (the page's renderer up and set up): raw, the same two after createTarget + attach.
    opened, bare, ready, bare_ready = [], [], [], []
    for _ in range(runs):
        t, r = timed(lambda: bridge.call("POST", "/tab", json={"action": "new"}))
        opened.append(t)
        bridge.call("POST", "/close", json={"tabId": r.json()["tabId"]})

        def open_and_use() -> str:
            tab = bridge.call("POST", "/tab", json={"action": "new"}).json()["tabId"]
            bridge.call("GET", f"/tabs/{tab}/title")  # read from the page (Runtime.evaluate)
            return tab

        t, tab = timed(open_and_use)
        ready.append(t)
        bridge.call("POST", "/close", json={"tabId": tab})
    raw = RawCDP(chrome.ws_url)  # the browser itself: no tab attached
    for _ in range(runs):
        def open_raw(use: bool = False) -> str:
            target = raw.call("Target.createTarget", {"url": "about:blank", "newWindow": True})["targetId"]
            raw.session = raw.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
            if use:
                raw.call("Runtime.evaluate", {"expression": "1"})
            raw.session = ""
            return target

        for use, times in ((False, bare), (True, bare_ready)):
            t, target = timed(lambda use=use: open_raw(use))
            times.append(t)
            raw.call("Target.closeTarget", {"targetId": target})
    raw.close()
    opener = bridge.call("POST", "/navigate", json={"url": base + "/popup.html"}).json()["tabId"]
    popups = []
    for _ in range(max(5, runs // 3)):
        def popup_logged() -> str:
            # (autoSwitch: a popup the caller does not switch to is closed, as the original's guard does)
            res = bridge.call("POST", "/action", json={"tabId": opener, "kind": "click", "selector": "#open",
                                                       "autoSwitch": True}).json()["result"]
            popup = res["openedTab"]
            deadline = time.monotonic() + 10
            while not bridge.call("GET", f"/tabs/{popup}/network?filter=small.html").json()["count"]:
                if time.monotonic() > deadline:
                    raise SystemExit("the popup's document never reached its network log")
            return popup

        t, popup = timed(popup_logged)
        popups.append(t)
        bridge.call("POST", "/close", json={"tabId": popup})
    return [
        ("raw createTarget + attachToTarget", f"median {med_ms(bare):.1f} ms", f"p90 {pct_ms(bare, .9):.1f} ms"),
        ("POST /tab new (attached, its setup sent)", f"median {med_ms(opened):.1f} ms",
         f"p90 {pct_ms(opened, .9):.1f} ms"),
        ("raw createTarget + attach + a first evaluate", f"median {med_ms(bare_ready):.1f} ms",
         f"p90 {pct_ms(bare_ready, .9):.1f} ms"),
        ("POST /tab new + a first GET /title", f"median {med_ms(ready):.1f} ms",
         f"p90 {pct_ms(ready, .9):.1f} ms"),
        ("a click's popup, until its document is in its log", f"median {med_ms(popups):.1f} ms",
         f"p90 {pct_ms(popups, .9):.1f} ms"),
    ]


def idpi_scan() -> list[Row]:
    import random

    from app.policy.idpi import Policy, scan

    rng = random.Random(1)
    words = "the quick brown fox jumps over lazy dog product price cart checkout shipping review".split()
    rows: list[Row] = []
    for size in (3_000, 100_000, 1_000_000):
        text = " ".join(rng.choice(words) for _ in range(size // 5))[:size]
        times = []
        for _ in range(5 if size > 100_000 else 30):
            started = time.perf_counter()
            scan(text, Policy())
            times.append(time.perf_counter() - started)
        rows.append((f"IDPI scan of {size:,} characters of page text", f"median {med_ms(times):.2f} ms", ""))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--only", action="append", choices=["capture", "reads", "tabs", "site", "cli", "idpi"],
                    help="run only these sections")
    args = ap.parse_args()
    only = set(args.only or ["capture", "reads", "tabs", "site", "cli", "idpi"])
    chromium = find_browser()
    workdir = Path(tempfile.mkdtemp(prefix="pinchtab-bench-"))
    base, stop_site = pages.serve(site_pages())
    chrome = ChromeProcess(chromium)
    chrome.start()
    bridge = Bridge(f"http://127.0.0.1:{chrome.port}", workdir)
    try:
        sections: dict[str, Callable[[], list[Row]]] = {
            "capture": lambda: capture(base, chrome, bridge, args.runs),
            "reads": lambda: reads(base, chrome, bridge, args.runs),
            "tabs": lambda: tabs(base, chrome, bridge, args.runs),
            "site": lambda: site_tools(base, bridge), "cli": lambda: cli(base, bridge), "idpi": idpi_scan}
        rows = [row for name, section in sections.items() if name in only for row in section()]
    finally:
        bridge.stop()
        chrome.stop()
        stop_site()
        shutil.rmtree(workdir, ignore_errors=True)
    width = max(len(r[0]) for r in rows)
    print(f"pinchtab parity-route benchmarks ({os.path.basename(chromium)}, {os.cpu_count()} cores)")
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:>18}  {b}")


if __name__ == "__main__":
    main()
