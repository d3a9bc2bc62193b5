"""``pinchtab mcp``: the browser API as MCP tools over stdio, a thin client of the REST API.

Every tool (``mcp_tools``) is one or two REST calls made by :class:`app.clients.rest.Client` as
the agent ``mcp``, so MCP calls keep their own current tab on the server. Built on the official
MCP SDK's low-level server; arguments are checked by ``mcp_toolkit`` before any request. The tool
list shows a set of the tools (``--tools``: core by default, or all); any tool answers by name.

stdout is the protocol: this module logs to stderr only. The process ends when stdin closes.
"""
from __future__ import annotations

import logging
import os
import sys
import threading
import time
from functools import partial
from typing import Any

import anyio
import anyio.to_thread
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server

from .mcp_page_tools import navigate
from .mcp_toolkit import ToolError, ToolSpec, check_args, check_tools, error_result, no_such_route
from .mcp_tools import INSTRUCTIONS, TOOLS, instructions, listed
from .rest import Client, ClientError, connect

__all__ = ["TOOLS", "ToolError", "ToolSpec", "build_server", "check_tools", "navigate", "run", "serve"]

log = logging.getLogger(__name__)

AGENT_ID = "mcp"
SOURCE = "mcp"


# --------------------------------------------------------------------------
# The server


def build_server(client: Client, specs: list[ToolSpec] | None = None, *, shown: list[str] | None = None,
                 about: str = INSTRUCTIONS) -> Server[Any]:
    """The MCP server for ``specs`` (default: every tool), calling the REST API through ``client``.

    ``shown``: the names the tool list shows (default: every spec); the others answer all the same
    when called by name. ``about``: the instructions the session starts with.
    """
    specs = TOOLS if specs is None else specs
    tools, handlers = check_tools(specs)
    by_name = {s.name: s for s in specs}
    if shown is not None:
        assert set(shown) <= set(by_name), f"listed tools without a spec: {set(shown) - set(by_name)}"
        tools = [t for t in tools if t.name in shown]

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        spec = by_name.get(params.name)
        if spec is None:
            return error_result(f"unknown tool {params.name!r}")
        started = time.monotonic()
        try:
            args = check_args(spec, params.arguments)
            # Blocking HTTP on a worker thread; a cancelled call returns at once, its request
            # finishes (bounded by the client timeout) in the background.
            content = await anyio.to_thread.run_sync(partial(handlers[spec.name], client, args),
                                                     abandon_on_cancel=True)
        except ClientError as exc:
            log.info("%s failed: %s (%s)", spec.name, exc.code, exc.status)
            if no_such_route(exc):
                return error_result(f"{spec.name} needs {spec.route}, which the Pinchtab server at {client.base_url} "
                                    f"does not have (an older server, or a bridge without that feature)")
            return error_result(exc.describe())
        except ToolError as exc:
            log.info("%s refused: %s", spec.name, exc)
            return error_result(str(exc))
        except Exception as exc:  # a bug here must not end the session: report it to the caller
            log.exception("%s raised", spec.name)
            return error_result(f"internal error in {spec.name}: {type(exc).__name__}")
        log.info("%s ok in %.0f ms", spec.name, (time.monotonic() - started) * 1000)
        return types.CallToolResult(content=content)

    return Server("pinchtab", version=_version(), instructions=about,
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("pinchtab")
    except PackageNotFoundError:
        return "0"


async def serve(server: Server[Any]) -> None:
    """Serve MCP on stdin/stdout until stdin closes."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def run(server_url: str | None, tools: str | None = None) -> int:
    """``pinchtab mcp``: resolve the server and token, then serve until stdin closes.

    ``tools``: the set the tool list shows (TOOL_SETS), else ``$PINCHTAB_MCP_TOOLS``, else core.
    """
    which = tools or os.environ.get("PINCHTAB_MCP_TOOLS") or "core"
    try:
        shown = listed(which)
    except ValueError as exc:
        raise SystemExit(f"pinchtab mcp: PINCHTAB_MCP_TOOLS: {exc}") from None
    client = connect(server_url, agent_id=AGENT_ID, source=SOURCE)
    # A tool table that does not add up stops here, before serving.
    server = build_server(client, shown=shown, about=instructions(which))
    logging.getLogger("mcp").setLevel(logging.WARNING)  # the SDK logs every request at INFO
    log.info("pinchtab mcp: %d tools (%d listed: %s), REST API at %s", len(TOOLS), len(shown), which,
             client.base_url)
    anyio.run(serve, server)
    in_flight = [t for t in threading.enumerate() if t is not threading.main_thread() and not t.daemon]
    log.info("stdin closed; exiting")
    if in_flight:
        # Calls the host gave up on still wait for the server (up to the HTTP timeout) on worker
        # threads the interpreter would join; their answers have nowhere to go, so do not wait.
        logging.shutdown()
        sys.stdout.flush()
        os._exit(0)
    return 0
