"""What one ``pinchtab <verb>`` costs the agent or script that runs it, printed as one table.

    python -m bench.bench_cli [--runs 30]

Agents and the original's shell scripts run the command line as a process per call, so its start
is what they feel. Timed here, wall clock from spawn to exit, interleaved so every side sees the
same machine state (median and p90 of ``--runs`` each):

* ``pinchtab title`` against a running bridge, the server and token from the environment;
* the same with them from the config file instead (``server.port``, ``server.token``);
* ``curl`` of the same route (``GET /title``, the same bearer token): the floor of a process and
  one HTTP call;
* a bare interpreter importing what a lean client needs (json, http.client, argparse): the floor
  of a Python command.

The bridge runs as users run it (``pinchtab bridge`` under gunicorn), with a token, on a small
page. Not a test: numbers, not verdicts.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import pages  # noqa: E402
from bench.common import med_ms, pct_ms  # noqa: E402
from bench.processes import ServerExited, ServerSubprocess, free_port  # noqa: E402

START_TIMEOUT_S = 60.0
CALL_TIMEOUT_S = 30.0
TOKEN = "bench-cli-token"


def start_bridge(work: Path) -> ServerSubprocess:
    """``pinchtab bridge`` with a token, in a HOME of its own, healthy (SystemExit if it never is)."""
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_"))}
    env.update(PINCHTAB_PORT=str(port), PINCHTAB_TOKEN=TOKEN, HOME=str(work / "bridge-home"))
    (work / "bridge-home").mkdir()
    bridge = ServerSubprocess([sys.executable, "-m", "app.clients.cli", "bridge"], port=port, env=env, cwd=ROOT,
                              log_path=work / "bridge.log", name="bridge", stop_timeout_s=20)
    try:
        bridge.wait_healthy(START_TIMEOUT_S)
    except (TimeoutError, ServerExited) as exc:
        bridge.stop()
        raise SystemExit(f"bridge did not become healthy: {exc or START_TIMEOUT_S}") from None
    return bridge


def open_page(base: str, url: str) -> None:
    """Navigate the bridge's tab to ``url`` (straight through the API: the CLI remembers no tab)."""
    req = urllib.request.Request(base + "/navigate", data=json.dumps({"url": url}).encode(), method="POST",
                                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=CALL_TIMEOUT_S) as resp:
        resp.read()


def pinchtab_command() -> list[str]:
    """The ``pinchtab`` a user runs: the installed script beside this interpreter, else the module."""
    script = Path(sys.executable).parent / "pinchtab"
    return [str(script)] if script.exists() else [sys.executable, "-m", "app.clients.cli"]


def run_once(argv: list[str], env: dict[str, str], expect: str) -> float:
    """Seconds from spawn to exit of one command, which must succeed and print ``expect`` (if given)."""
    t0 = time.perf_counter()
    done = subprocess.run(argv, env=env, cwd=env["HOME"], capture_output=True, text=True, timeout=CALL_TIMEOUT_S)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0 or (expect and done.stdout.strip() != expect):
        raise SystemExit(f"{' '.join(argv)} exited {done.returncode}: {done.stdout!r} {done.stderr.strip()}")
    return elapsed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=30, help="runs per side (default 30)")
    args = ap.parse_args()

    site, stop_site = pages.serve({"/small.html": pages.small_page()})
    work = Path(tempfile.mkdtemp(prefix="pinchtab-bench-cli-"))
    bridge = start_bridge(work)
    try:
        open_page(bridge.base, site + "/small.html")
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("PINCHTAB_", "BRIDGE_", "XDG_"))}
        by_env = {**clean, "HOME": str(work / "env-home"), "PINCHTAB_SERVER": bridge.base, "PINCHTAB_TOKEN": TOKEN}
        by_file = {**clean, "HOME": str(work / "file-home")}
        for env in (by_env, by_file):
            Path(env["HOME"]).mkdir()
        (work / "file-home" / ".pinchtab").mkdir()
        (work / "file-home" / ".pinchtab" / "config.json").write_text(
            json.dumps({"server": {"port": bridge.port, "token": TOKEN}}))
        pinchtab = pinchtab_command()
        sides: list[tuple[str, list[str], dict[str, str], str]] = [
            ("pinchtab title (server, token from env)", [*pinchtab, "title"], by_env, "Counter"),
            ("pinchtab title (port, token from config file)", [*pinchtab, "title"], by_file, "Counter"),
            ("python -c 'import json, http.client, argparse'",
             [sys.executable, "-c", "import json, http.client, argparse"], by_env, ""),
        ]
        curl = shutil.which("curl")
        if curl:
            sides.append(("curl GET /title", [curl, "-sf", "-H", f"Authorization: Bearer {TOKEN}",
                                              bridge.base + "/title"], by_env, ""))
        times: dict[str, list[float]] = {name: [] for name, *_ in sides}
        for name, argv, env, expect in sides:  # a warm-up each: page cache, the bridge's first call
            run_once(argv, env, expect)
        for _ in range(args.runs):
            for name, argv, env, expect in sides:
                times[name].append(run_once(argv, env, expect))
    finally:
        bridge.stop()
        stop_site()
        shutil.rmtree(work, ignore_errors=True)

    width = max(len(name) for name in times)
    print(f"pinchtab CLI start-up ({args.runs} runs per side, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f}){'' if curl else '; curl not found'}")
    for name, xs in times.items():
        print(f"{name:<{width}}  median {med_ms(xs):7.1f} ms   p90 {pct_ms(xs, 0.9):7.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
