"""What ``pinchtab mcp`` costs an agent, printed as one table.

    python -m bench.bench_mcp [--runs 100] [--no-peers]

* The tool list as the model reads it on every turn (name, description and input schema of each
  tool, as JSON, cl100k tokens via ``bench.peers.count_tokens``), beside Playwright MCP's
  (``bench.peers.measure_playwright_tool_list``, when npm is present).
* The per-call overhead of an MCP tool call over the REST call it wraps: ``pinchtab_health``
  against ``GET /health`` and ``pinchtab_get_text`` against ``GET /text`` on the same tab,
  interleaved so both see the same machine state; median of ``--runs`` each.
* How long ``pinchtab mcp`` takes from spawn to an initialised session.

The bridge runs as users run it (``pinchtab bridge`` under gunicorn); the MCP server is the real
``pinchtab mcp`` subprocess driven by the SDK's stdio client. Not a test: numbers, not verdicts.
"""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import requests

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench import pages, peers  # noqa: E402
from bench.common import med_ms, pct_ms  # noqa: E402
from bench.processes import ServerExited, ServerSubprocess, free_port  # noqa: E402

START_TIMEOUT_S = 60.0
CALL_TIMEOUT_S = 60.0


class Bridge(ServerSubprocess):
    """``pinchtab bridge`` in a subprocess with its own HOME (default config: no token)."""

    def __init__(self, workdir: Path) -> None:
        port = free_port()
        env = {**os.environ, "PINCHTAB_PORT": str(port), "HOME": str(workdir)}
        for name in ("PINCHTAB_TOKEN", "PINCHTAB_CONFIG", "PINCHTAB_SERVER"):
            env.pop(name, None)
        super().__init__([sys.executable, "-m", "app.clients.cli", "bridge"], port=port, env=env, cwd=ROOT,
                         log_path=workdir / "bridge.log", name="bridge", stop_timeout_s=20)
        try:
            self.wait_healthy(START_TIMEOUT_S)
        except TimeoutError:
            self.stop()
            raise SystemExit(f"bridge did not become healthy within {START_TIMEOUT_S:.0f} s") from None
        except ServerExited as exc:
            self.stop()
            raise SystemExit(str(exc)) from None


def p90_ms(xs: list[float]) -> float:
    return pct_ms(xs, 0.9)


async def measure(bridge: Bridge, page_url: str, home: Path, runs: int) -> dict[str, Any]:
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "app.clients.cli", "mcp", "--server", bridge.base],
                                   cwd=str(ROOT), env={"HOME": str(home)})
    # The REST side as a lean client would call it: a kept-alive session, the same agent (and tab).
    http = requests.Session()
    http.headers["X-Agent-Id"] = "mcp"
    out: dict[str, Any] = {}
    with open(home / "mcp-stderr.log", "w", encoding="utf-8") as errlog:
        t0 = time.perf_counter()
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                with anyio.fail_after(START_TIMEOUT_S):
                    await session.initialize()
                out["start_ms"] = (time.perf_counter() - t0) * 1000
                tools = (await session.list_tools()).tools
                out["tools"] = len(tools)
                out["tokens"] = peers.count_tokens(peers._tools_as_model_sees(tools))

                async def call(name: str, args: dict[str, Any]) -> None:
                    res = await session.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT_S)
                    if res.is_error:
                        raise SystemExit(f"{name} failed: {res.content}")

                await call("pinchtab_navigate", {"url": page_url})

                def rest(path: str) -> Callable[[], Any]:
                    def get() -> None:
                        requests_reply = http.get(bridge.base + path, timeout=CALL_TIMEOUT_S)
                        requests_reply.raise_for_status()
                        requests_reply.content  # noqa: B018 (read the body, as the MCP side does)

                    return get

                for label, tool, path in (("health", "pinchtab_health", "/health"),
                                          ("text", "pinchtab_get_text", "/text")):
                    mcp_s: list[float] = []
                    rest_s: list[float] = []
                    get = rest(path)
                    for i in range(runs + 5):  # the first five warm both sides up
                        t = time.perf_counter()
                        await call(tool, {})
                        dt_mcp = time.perf_counter() - t
                        t = time.perf_counter()
                        get()
                        dt_rest = time.perf_counter() - t
                        if i >= 5:
                            mcp_s.append(dt_mcp)
                            rest_s.append(dt_rest)
                    out[label] = {"mcp": mcp_s, "rest": rest_s}
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=100, help="calls per side (default 100)")
    ap.add_argument("--no-peers", action="store_true", help="skip Playwright MCP")
    args = ap.parse_args()

    base, stop_site = pages.serve({"/small.html": pages.small_page()})
    work = Path(tempfile.mkdtemp(prefix="pinchtab-bench-mcp-"))
    bridge = Bridge(work)
    try:
        ours = anyio.run(measure, bridge, base + "/small.html", work, args.runs)
    finally:
        bridge.stop()
        stop_site()
        shutil.rmtree(work, ignore_errors=True)

    theirs: dict[str, Any] | None = None
    reason = None if not args.no_peers else "skipped (--no-peers)"
    if reason is None:
        reason = peers.playwright_available()
        if reason is None:
            theirs = peers.measure_playwright_tool_list()

    rows: list[tuple[str, str, str]] = [
        ("tool list, pinchtab mcp", f"{ours['tools']} tools", f"{ours['tokens']:,} tokens"),
    ]
    if theirs is not None:
        rows.append((f"tool list, Playwright MCP {theirs['version']}", f"{theirs['tools']} tools",
                     f"{theirs['tokens']:,} tokens ({ours['tokens'] / theirs['tokens']:.0%} for ours)"))
    else:
        rows.append(("tool list, Playwright MCP", "-", f"unavailable: {reason}"))
    for label, tool, path in (("health", "pinchtab_health", "GET /health"), ("text", "pinchtab_get_text", "GET /text")):
        m, r = ours[label]["mcp"], ours[label]["rest"]
        rows.append((f"{path} (REST, requests)", f"median {med_ms(r):.2f} ms", f"p90 {p90_ms(r):.2f} ms"))
        rows.append((f"{tool} (MCP stdio)", f"median {med_ms(m):.2f} ms", f"p90 {p90_ms(m):.2f} ms"))
        rows.append((f"  MCP overhead over {path}", f"{med_ms(m) - med_ms(r):+.2f} ms",
                     f"x{med_ms(m) / med_ms(r):.1f}"))
    rows.append(("pinchtab mcp start (spawn to initialised)", f"{ours['start_ms']:.0f} ms", ""))

    width = max(len(r[0]) for r in rows)
    print(f"pinchtab mcp benchmarks ({args.runs} calls per side, {os.cpu_count()} cores, "
          f"load {os.getloadavg()[0]:.1f})")
    for name, a, b in rows:
        print(f"{name:<{width}}  {a:<20} {b}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
