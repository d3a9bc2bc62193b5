"""How ``pinchtab mcp`` reads a tool call's arguments before any request (pure logic: no server)."""
from __future__ import annotations

import pytest

from app.clients import mcp_params, mcp_tools
from app.clients.mcp_toolkit import ToolError, check_args

BY_NAME = {s.name: s for s in mcp_tools.TOOLS}


def args(tool: str, **given: object) -> dict[str, object]:
    return check_args(BY_NAME[tool], given)


def test_the_originals_spellings_land_on_our_parameters():
    assert args("pinchtab_fill", selector="#a", text="x")["value"] == "x"  # our older spelling of value
    assert args("pinchtab_click", element="#a")["selector"] == "#a"
    assert args("pinchtab_hover", target="#a")["selector"] == "#a"
    assert args("pinchtab_screenshot", fullPage=True)["beyondViewport"] is True
    # Some clients send every parameter, unset ones as null: those count as absent.
    assert args("pinchtab_click", selector="#a", tabId=None, snap=None) == {"selector": "#a"}
    with pytest.raises(ToolError, match="'text' and 'value' name the same thing"):
        args("pinchtab_fill", selector="#a", text="x", value="y")


def test_unknown_arguments_are_each_named_with_the_likeliest_meant_one():
    with pytest.raises(ToolError) as info:
        args("pinchtab_click", selector="#a", tabid="T", snapp=True, zzz=1)
    message = str(info.value)
    assert "'tabid' (did you mean 'tabId'?)" in message and "'snapp' (did you mean 'snap'?)" in message
    assert "'zzz'" in message and "'zzz' (" not in message
    assert message.startswith("pinchtab_click does not take the arguments")


def test_types_enums_lists_and_ranges_are_checked():
    assert args("pinchtab_click", selector="#a", snap=True)["snap"] is True  # the original's boolean
    assert args("pinchtab_click", selector="#a", snap="diff")["snap"] == "diff"  # our mode
    with pytest.raises(ToolError, match='one of true, false, "compact", "diff"'):
        args("pinchtab_click", selector="#a", snap="full")
    with pytest.raises(ToolError, match="must be a boolean or string, not int"):
        args("pinchtab_click", selector="#a", snap=1)
    assert args("pinchtab_scrape", url="http://x/", include="/a/*")["include"] == "/a/*"
    assert args("pinchtab_scrape", url="http://x/", include=["/a/*"])["include"] == ["/a/*"]
    with pytest.raises(ToolError, match="list of strings"):
        args("pinchtab_scrape", url="http://x/", exclude=["/a/*", 2])
    assert args("pinchtab_network", status=404)["status"] == 404 and args("pinchtab_network", status="4xx")
    assert args("pinchtab_wait", ms=2.0)["ms"] == 2 and isinstance(args("pinchtab_wait", ms=2.0)["ms"], int)
    with pytest.raises(ToolError, match="url is required"):
        args("pinchtab_navigate", url="")


def test_an_element_is_named_once_and_words_become_a_find():
    target = mcp_params.target
    assert target({"ref": "e5"}) == {"ref": "e5"}
    assert target({"selector": "e5"}) == {"ref": "e5"}
    assert target({"selector": "#go"}) == {"selector": "#go"}
    assert target({"query": "the login button"}) == {"selector": "find:the login button"}
    for already in ("e7", "#id", ".cls", "//a", "role:button Save", "text:Next", "nth:2:li"):
        assert target({"query": already}) in ({"selector": already}, {"ref": already}), already
    assert target({"selector": "#a", "ref": "#a"}) == {"selector": "#a"}  # the same element twice is fine
    with pytest.raises(ToolError, match="name different elements"):
        target({"selector": "#a", "query": "b"})
    assert target({"x": 1, "y": 2}) == {"x": 1, "y": 2}
    with pytest.raises(ToolError, match="x and y go together"):
        target({"x": 1})
    assert target({}, required=False) == {}
    with pytest.raises(ToolError, match="give selector"):
        target({})


def test_snap_maps_the_originals_boolean_to_a_compact_snapshot():
    assert [mcp_params.snap_mode(v) for v in (True, False, None, "compact", "diff")] == [
        "compact", "", "", "compact", "diff"]
