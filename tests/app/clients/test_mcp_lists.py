"""The tool lists ``pinchtab mcp`` shows: the default (core) one within the token budget of a peer's
default list, every tool named and answering by name whether listed or not, and ``--tools all``."""
from __future__ import annotations

import json

import pytest
from support.mcp_client import Session

from app.clients import mcp_server, mcp_tools
from app.clients.mcp_toolkit import check_tools

pytestmark = pytest.mark.e2e

# Playwright MCP's default list (25 tools) reads as 3,688 cl100k tokens (python -m bench.bench_mcp).
PEER_TOKENS = 3_688
# The same budget where no tokenizer is at hand: our lists' JSON runs at about 3.5 characters a token.
PEER_CHARS = 12_500


def as_model_sees(tools: list) -> str:
    return json.dumps([{"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                       for t in tools], ensure_ascii=False)


def tokens(listing: str) -> int | None:
    try:
        from bench.peers import count_tokens

        return count_tokens(listing)
    except ImportError:  # no tokenizer installed: the character bound alone
        return None


def test_the_default_list_is_core_within_the_peers_budget_and_every_tool_answers_by_name(mcp):
    async def scenario(s: Session) -> None:
        tools = (await s.session.list_tools()).tools
        assert [t.name for t in tools] == mcp_tools.listed("core") and len(tools) == len(mcp_tools.CORE)
        listing = as_model_sees(tools)
        assert len(listing) < PEER_CHARS, len(listing)
        counted = tokens(listing)
        assert counted is None or counted <= PEER_TOKENS, counted
        # Every tool, listed or not, is known by name: its own argument check answers, before any request.
        for spec in mcp_server.TOOLS:
            refused = await s.error(spec.name, zzz=1)
            assert refused.startswith(f"{spec.name} does not take the argument 'zzz'"), refused
        assert "unknown tool 'pinchtab_nope'" in await s.error("pinchtab_nope")
        assert json.loads(await s.ok("pinchtab_health"))["status"] == "ok"  # not listed, and it runs

    mcp(scenario)


def test_each_set_lists_its_tools_with_every_argument_and_the_cli_offers_each() -> None:
    from app.clients.cli import build_parser

    assert mcp_tools.listed("all") == [s.name for s in mcp_server.TOOLS]
    assert set(mcp_tools.CORE) < set(mcp_tools.listed("all"))
    with pytest.raises(ValueError, match="one of core, all"):
        mcp_tools.listed("most")
    # A listed tool shows every argument it takes (its aliases aside): nothing callable goes unnamed.
    tools, _ = check_tools(mcp_server.TOOLS)
    for tool, spec in zip(tools, mcp_server.TOOLS, strict=True):
        assert list(tool.input_schema["properties"]) == list(spec.properties), spec.name
    parser, _ = build_parser()
    sub = next(a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction")
    flag = sub.choices["mcp"]._option_string_actions["--tools"]
    assert tuple(flag.choices) == mcp_tools.TOOL_SETS
    assert "--tools all" not in mcp_tools.instructions("all")
    assert "--tools all" in mcp_tools.instructions("core")
