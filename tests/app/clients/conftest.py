"""What the MCP tests share: a bridge and one ``pinchtab mcp`` session per test module."""
from __future__ import annotations

from typing import Any

import pytest
from support.mcp_client import shared_session
from support.servers import BridgeProcess


@pytest.fixture(scope="module")
def bridge(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One bridge per module, on defaults: no token, evaluate and cookies off (a module may override it)."""
    bp = BridgeProcess(tmp_path_factory.mktemp("mcp-bridge"))
    try:
        bp.wait_healthy()
        yield bp
    finally:
        bp.stop()


@pytest.fixture(scope="module")
def mcp(bridge: Any, tmp_path_factory: pytest.TempPathFactory) -> Any:
    """One ``pinchtab mcp`` session for the module's scenarios (the agent "mcp" keeps its current tab
    across them, as a host's session would)."""
    with shared_session(bridge.base, tmp_path_factory.mktemp("mcp-home")) as run:
        yield run
