"""JSON from others nested past the parser's depth is bad JSON, wherever it comes in."""
from __future__ import annotations

import pytest

from app.debug import protocol
from app.extension.socket_server import parse_line
from app.web import untrusted_json

DEEP = "[" * 200_000 + "]" * 200_000


def test_nesting_past_the_parsers_depth_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="nested too deeply"):
        untrusted_json.loads(DEEP)
    assert untrusted_json.loads('{"a": [1, {"b": null}]}') == {"a": [1, {"b": None}]}


def test_a_debug_frame_and_a_socket_line_so_nested_are_refused_as_bad_json() -> None:
    with pytest.raises(protocol.FrameError, match="not JSON"):
        protocol.parse_app_frame(DEEP)
    with pytest.raises(protocol.FrameError, match="not JSON"):
        protocol.parse_agent_frame(DEEP)
    with pytest.raises(ValueError):
        parse_line(DEEP.encode())
