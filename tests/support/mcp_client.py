"""``pinchtab mcp`` as an agent host runs it: a real MCP client (the SDK's stdio_client and
ClientSession) starts the command, which calls a real server over HTTP."""
from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal
from mcp import ClientSession, StdioServerParameters, stdio_client, types

from support import ROOT

CALL_TIMEOUT_S = 60.0


class Session:
    """A ClientSession with the helpers the tests need."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session

    async def call(self, name: str, **args: Any) -> types.CallToolResult:
        return await self.session.call_tool(name, args, read_timeout_seconds=CALL_TIMEOUT_S)

    async def ok(self, name: str, **args: Any) -> str:
        """The tool's text, insisting it succeeded."""
        res = await self.call(name, **args)
        body = "\n".join(getattr(c, "text", "") for c in res.content)
        assert not res.is_error, f"{name} failed: {body}"
        return body

    async def error(self, name: str, **args: Any) -> str:
        """The tool's error text, insisting it is a tool error (not a protocol failure)."""
        res = await self.call(name, **args)
        body = "\n".join(getattr(c, "text", "") for c in res.content)
        assert res.is_error, f"{name} should have failed: {body}"
        return body


@asynccontextmanager
async def mcp_session(base: str, home: Path, env: dict[str, str] | None = None) -> AsyncIterator[Session]:
    """An initialised session with ``pinchtab mcp --server base`` (HOME ``home``, its stderr kept there;
    ``env`` on top, e.g. PINCHTAB_TOKEN)."""
    params = StdioServerParameters(command=sys.executable, args=["-m", "app.clients.cli", "mcp", "--server", base],
                                   cwd=str(ROOT), env={"HOME": str(home), **(env or {})})
    with open(home / "mcp-stderr.log", "a", encoding="utf-8") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, read_timeout_seconds=CALL_TIMEOUT_S) as session:
                with anyio.fail_after(CALL_TIMEOUT_S):
                    await session.initialize()
                yield Session(session)


def run_session(base: str, home: Path, scenario: Callable[[Session], Awaitable[None]],
                env: dict[str, str] | None = None) -> None:
    """Run ``scenario`` in one MCP session against the server at ``base``."""
    async def main() -> None:
        async with mcp_session(base, home, env) as s:
            await scenario(s)

    anyio.run(main)


Scenario = Callable[[Session], Awaitable[None]]


@contextmanager
def shared_session(base: str, home: Path, env: dict[str, str] | None = None) -> Iterator[Callable[[Scenario], None]]:
    """One session for many tests (a module's): an event loop in a thread keeps it open, and the
    function this yields runs a scenario in it. Spawning ``pinchtab mcp`` once, not per test."""
    with start_blocking_portal() as portal:
        with portal.wrap_async_context_manager(mcp_session(base, home, env)) as session:
            def run(scenario: Scenario) -> None:
                portal.call(scenario, session)

            yield run
