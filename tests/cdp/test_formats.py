"""Unit tests for cdp.formats: snapshot line formats, headers, YAML, token estimates, budgets, diffs."""
from __future__ import annotations

import json
import re
from typing import Any

import pytest

from cdp.formats import (
    FORMATS,
    MAX_INLINE,
    budget,
    compact_line,
    diff,
    estimate_tokens,
    page_after,
    render_compact,
    render_text,
    render_yaml,
    text_line,
)


def node(ref: str, role: str, name: str = "", depth: int = 0, **extra: Any) -> dict[str, Any]:
    n: dict[str, Any] = {"ref": ref, "role": role, "name": name, "depth": depth}
    n.update(extra)
    return n


# --- compact lines -------------------------------------------------------------------------------
def test_compact_line_is_ref_role_and_bare_name_then_quoted_value_and_markers() -> None:
    n = node("e1", "textbox", "Username:", value="x", focused=True)
    assert compact_line(n) == 'e1 textbox Username: val="x" *'


def test_compact_line_marks_disabled_with_a_dash() -> None:
    assert compact_line(node("e2", "button", "Submit", disabled=True)) == 'e2 button Submit -'


def test_compact_line_focused_and_disabled_markers_come_in_that_order() -> None:
    assert compact_line(node("e3", "button", "Go", focused=True, disabled=True)) == 'e3 button Go * -'


def test_compact_line_without_name_or_value_is_ref_and_role_only() -> None:
    assert compact_line(node("e4", "generic")) == "e4 generic"


def test_compact_line_omits_an_empty_value() -> None:
    assert compact_line(node("e5", "textbox", "Email", value="")) == 'e5 textbox Email'


def test_compact_line_prints_a_numeric_value() -> None:
    assert compact_line(node("e6", "slider", "Volume", value=7)) == 'e6 slider Volume val="7"'


def test_compact_line_does_not_indent_by_depth() -> None:
    assert compact_line(node("e7", "link", "Home", depth=5)) == 'e7 link Home'


def test_checked_box_is_marked_checked() -> None:
    assert compact_line(node("e8", "checkbox", "Remember me", checked=True)) == 'e8 checkbox Remember me [checked]'


def test_unchecked_box_has_no_marker() -> None:
    assert compact_line(node("e8", "checkbox", "Remember me", checked=False)) == 'e8 checkbox Remember me'


def test_mixed_checkbox_is_marked_mixed() -> None:
    assert compact_line(node("e9", "checkbox", "All", checked="mixed")) == 'e9 checkbox All [mixed]'


def test_expanded_and_collapsed_markers() -> None:
    assert compact_line(node("e10", "button", "Menu", expanded=True)) == 'e10 button Menu [expanded]'
    assert compact_line(node("e10", "button", "Menu", expanded=False)) == 'e10 button Menu [collapsed]'


def test_selected_option_is_marked_selected() -> None:
    assert compact_line(node("e11", "option", "Red", selected=True)) == 'e11 option Red [selected]'


def test_state_markers_follow_a_fixed_order() -> None:
    n = node("e12", "treeitem", "Docs", checked=True, selected=True, expanded=True, focused=True, disabled=True)
    assert compact_line(n) == 'e12 treeitem Docs [checked] [selected] [expanded] * -'


def test_names_are_bare_and_newlines_in_them_become_spaces() -> None:
    n = node("e13", "button", 'Say "hi"\nnow')
    assert compact_line(n) == 'e13 button Say "hi" now'



def test_backslashes_are_escaped_before_quotes() -> None:
    n = node("e14", "textbox", "Path", value='C:\\dir"')
    assert compact_line(n) == r'e14 textbox Path val="C:\\dir\""'


def test_escaped_line_never_spans_two_lines() -> None:
    n = node("e15", "textbox", "a\nb\nc", value="line1\nline2")
    assert "\n" not in compact_line(n)
    assert "\n" not in text_line(n)


def test_long_names_are_clipped_with_an_ellipsis() -> None:
    n = node("e16", "paragraph", "x" * 1000)
    line = compact_line(n)
    inner = line[len("e16 paragraph "):]
    assert len(inner) == MAX_INLINE
    assert inner.endswith("\u2026")
    assert inner[:-1] == "x" * (MAX_INLINE - 1)


def test_long_values_are_clipped_too() -> None:
    n = node("e17", "textbox", "Notes", value="y" * 5000)
    line = compact_line(n)
    assert line.startswith('e17 textbox Notes val="')
    assert len(line) < 300
    assert line.endswith('\u2026"')


def test_a_name_of_exactly_the_limit_is_not_clipped() -> None:
    name = "z" * MAX_INLINE
    assert compact_line(node("e18", "heading", name)) == f'e18 heading {name}'


# --- text lines ----------------------------------------------------------------------------------
def test_text_line_indents_two_spaces_per_depth_level() -> None:
    assert text_line(node("e1", "main", depth=0)) == "e1 main"
    assert text_line(node("e2", "list", depth=1)) == "  e2 list"
    assert text_line(node("e3", "link", "Docs", depth=3)) == '      e3 link "Docs"'


def test_text_line_spells_out_focused_and_disabled() -> None:
    n = node("e4", "textbox", "User", depth=1, value="bob", focused=True, disabled=True)
    assert text_line(n) == '  e4 textbox "User" val="bob" [focused] [disabled]'


def test_text_line_without_depth_is_not_indented() -> None:
    assert text_line({"ref": "e5", "role": "button", "name": "OK"}) == 'e5 button "OK"'


# --- headers -------------------------------------------------------------------------------------
def test_compact_render_has_one_header_line_then_one_line_per_node() -> None:
    nodes = [node("e1", "heading", "Login"), node("e2", "textbox", "Username:", value="x", focused=True)]
    out = render_compact(nodes, title="Login page", url="http://example.test/login", count=2)
    assert out == ('# Login page | http://example.test/login | 2 nodes\n'
                   'e1 heading Login\n'
                   'e2 textbox Username: val="x" *\n')


def test_compact_header_notes_truncation_and_the_next_cursor() -> None:
    nodes = [node("e1", "link", "A"), node("e2", "link", "B")]
    out = render_compact(nodes, title="T", url="u", count=2, truncated_at=50, next_cursor="e2")
    lines = out.splitlines()
    assert lines[0] == "# T | u | 2 nodes (truncated to ~50 tokens)"
    assert lines[-1] == "# next: after=e2"
    assert out.endswith("\n")


def test_compact_without_cursor_has_no_next_line() -> None:
    out = render_compact([node("e1", "link", "A")], title="T", url="u", count=1)
    assert "# next" not in out
    assert "truncated" not in out


def test_text_render_has_title_url_count_header_a_blank_line_then_nodes() -> None:
    nodes = [node("e1", "main", depth=0), node("e2", "button", "Go", depth=1)]
    out = render_text(nodes, title="Home", url="http://example.test/", count=2)
    assert out == ("# Home\n"
                   "# http://example.test/\n"
                   "# 2 nodes\n"
                   "\n"
                   "e1 main\n"
                   '  e2 button "Go"\n')


def test_text_header_notes_truncation_and_the_next_cursor() -> None:
    out = render_text([node("e7", "link", "A", depth=2)], title="T", url="u", count=1,
                      truncated_at=120, next_cursor="e7")
    lines = out.splitlines()
    assert lines[:5] == ["# T", "# u", "# 1 nodes", "# truncated to ~120 tokens", ""]
    assert lines[5] == '    e7 link "A"'
    assert lines[-1] == "# next: after=e7"


def test_empty_snapshot_renders_only_headers() -> None:
    assert render_compact([], title="Blank", url="about:blank", count=0) == "# Blank | about:blank | 0 nodes\n"
    assert render_text([], title="Blank", url="about:blank", count=0) == "# Blank\n# about:blank\n# 0 nodes\n\n"


# --- YAML ----------------------------------------------------------------------------------------
_TOP = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*): (.+)$")
_FIRST = re.compile(r"^  - ([A-Za-z_][A-Za-z0-9_]*): (.+)$")
_MORE = re.compile(r"^    ([A-Za-z_][A-Za-z0-9_]*): (.+)$")


def parse_flat_yaml(text: str) -> dict[str, Any]:
    """A parser for exactly the YAML subset render_yaml promises: fails on any other line."""
    assert text.endswith("\n")
    doc: dict[str, Any] = {}
    nodes: list[dict[str, Any]] | None = None
    for line in text[:-1].split("\n"):
        if line == "nodes: []":
            doc["nodes"] = []
            continue
        if line == "nodes:":
            nodes = doc["nodes"] = []
            continue
        if nodes is not None and (m := _FIRST.match(line)):
            nodes.append({m.group(1): json.loads(m.group(2))})
            continue
        if nodes is not None and nodes and (m := _MORE.match(line)):
            nodes[-1][m.group(1)] = json.loads(m.group(2))
            continue
        m = _TOP.match(line)
        assert m is not None and nodes is None, f"not a line of the promised YAML subset: {line!r}"
        doc[m.group(1)] = json.loads(m.group(2))
    return doc


def test_yaml_parses_back_to_the_same_document() -> None:
    doc = {
        "url": "http://example.test/a?b=1#c",
        "title": 'Quotes "and" colons: here',
        "count": 3,
        "truncated": True,
        "nodes": [
            node("e1", "heading", "Welcome: \u00e9t\u00e9 \U0001F600", level=1),
            node("e2", "textbox", "Notes", depth=1, value="line1\nline2\ttab \\ back", focused=True),
            node("e3", "checkbox", "- not a list item", depth=2, checked=False, disabled=True),
        ],
    }
    assert parse_flat_yaml(render_yaml(doc)) == doc


def test_yaml_node_lines_use_the_list_item_shape() -> None:
    out = render_yaml({"url": "u", "nodes": [node("e1", "link", "A"), node("e2", "link", "B")]})
    lines = out.splitlines()
    assert lines[0] == 'url: "u"'
    assert lines[1] == "nodes:"
    assert lines[2] == '  - ref: "e1"'
    assert lines[3] == '    role: "link"'
    assert lines.count('  - ref: "e2"') == 1


def test_yaml_booleans_and_numbers_are_plain_scalars() -> None:
    out = render_yaml({"count": 2, "truncated": False, "nodes": [node("e1", "button", "OK", depth=4, focused=True)]})
    assert "count: 2\n" in out
    assert "truncated: false\n" in out
    assert "    depth: 4\n" in out
    assert "    focused: true\n" in out


def test_yaml_strings_that_look_like_other_types_stay_strings() -> None:
    doc = {"title": "true", "url": "123", "nodes": [node("e1", "textbox", "null", value="1.5")]}
    back = parse_flat_yaml(render_yaml(doc))
    assert back["title"] == "true"
    assert back["url"] == "123"
    assert back["nodes"][0]["name"] == "null"
    assert back["nodes"][0]["value"] == "1.5"


# YAML 1.2's c-printable: a YAML reader rejects any other character in the stream, even inside quotes.
_YAML_UNPRINTABLE = re.compile("[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def test_yaml_escapes_characters_a_yaml_reader_would_reject() -> None:
    # Page text can hold DEL and C1 control characters; the output must still be readable YAML.
    doc = {"title": "bell\x07 del\x7f c1\x9b", "nodes": [node("e1", "textbox", "a\x7fb", value="\x80\x1b")]}
    out = render_yaml(doc)
    bad = sorted({hex(ord(c)) for c in _YAML_UNPRINTABLE.findall(out)})
    assert bad == [], f"characters YAML does not allow unescaped: {bad}"
    assert parse_flat_yaml(out) == doc


def test_yaml_without_nodes_says_empty_list() -> None:
    out = render_yaml({"url": "about:blank", "title": "", "count": 0, "nodes": []})
    assert out.splitlines()[-1] == "nodes: []"
    assert parse_flat_yaml(out)["nodes"] == []


# --- token estimates -----------------------------------------------------------------------------
@pytest.mark.parametrize("n", [
    node("e1", "button", "Submit"),
    node("e123", "textbox", "Username:", value="alice"),
    node("e9", "generic"),
    node("e42", "slider", "Volume", value=75),
    node("e5", "paragraph", "x" * 333, depth=7),
])
def test_estimate_tokens_uses_the_original_formulas(n: dict[str, Any]) -> None:
    ref, role, name, value, depth = n["ref"], n["role"], n["name"], str(n.get("value", "")), n["depth"]
    compact = (len(ref) + 1 + len(role) + len(name) + len(value) + 8) // 4
    text = (2 * depth + len(ref) + 1 + len(role) + len(name) + len(value) + 8) // 4
    as_json = (len(ref) + len(role) + len(name) + len(value) + 60) // 3
    assert estimate_tokens(n, "compact") == max(compact, 1)
    assert estimate_tokens(n, "text") == max(text, 1)
    assert estimate_tokens(n, "json") == max(as_json, 1)


def test_estimate_tokens_of_a_concrete_node() -> None:
    n = node("e1", "textbox", "Username:", value="x", depth=2)
    assert estimate_tokens(n, "compact") == (2 + 1 + 7 + 9 + 1 + 8) // 4 == 7
    assert estimate_tokens(n, "text") == (4 + 2 + 1 + 7 + 9 + 1 + 8) // 4 == 8
    assert estimate_tokens(n, "json") == (2 + 7 + 9 + 1 + 60) // 3 == 26


def test_text_estimate_grows_with_depth() -> None:
    shallow = node("e1", "link", "Home", depth=0)
    deep = node("e1", "link", "Home", depth=20)
    assert estimate_tokens(deep, "text") > estimate_tokens(shallow, "text")
    assert estimate_tokens(deep, "compact") == estimate_tokens(shallow, "compact")


def test_estimate_tokens_of_an_empty_node_still_costs_tokens() -> None:
    tiny = {"ref": "", "role": "", "name": "", "depth": 0}
    assert estimate_tokens(tiny, "compact") == (1 + 8) // 4 == 2
    assert estimate_tokens(tiny, "text") == 2
    assert estimate_tokens(tiny, "json") == 60 // 3 == 20
    for fmt in FORMATS:
        assert estimate_tokens(tiny, fmt) >= 1


def test_estimate_tokens_tolerates_missing_name_and_depth() -> None:
    n = {"ref": "e10", "role": "img"}
    assert estimate_tokens(n, "compact") == (3 + 1 + 3 + 8) // 4
    assert estimate_tokens(n, "text") == (3 + 1 + 3 + 8) // 4
    assert estimate_tokens(n, "json") == (3 + 3 + 60) // 3


# --- budget --------------------------------------------------------------------------------------
def _nodes(count: int) -> list[dict[str, Any]]:
    return [node(f"e{i}", "link", f"Link number {i}", depth=i % 4) for i in range(1, count + 1)]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("max_tokens", [1, 5, 9, 10, 37, 100, 250])
def test_budget_never_exceeds_and_cuts_at_the_last_node_that_fits(fmt: str, max_tokens: int) -> None:
    nodes = _nodes(40)
    kept, truncated = budget(nodes, max_tokens, fmt)
    assert kept == nodes[:len(kept)]  # whole nodes, a prefix
    used = sum(estimate_tokens(n, fmt) for n in kept)
    assert used <= max_tokens
    assert truncated
    # ... and not one node fewer than fits
    assert used + estimate_tokens(nodes[len(kept)], fmt) > max_tokens


def test_budget_keeps_everything_when_it_fits() -> None:
    nodes = _nodes(5)
    total = sum(estimate_tokens(n, "compact") for n in nodes)
    kept, truncated = budget(nodes, total, "compact")
    assert kept == nodes
    assert truncated is False


def test_budget_cuts_one_token_short_of_the_total() -> None:
    nodes = _nodes(5)
    total = sum(estimate_tokens(n, "compact") for n in nodes)
    kept, truncated = budget(nodes, total - 1, "compact")
    assert kept == nodes[:4]
    assert truncated is True


def test_budget_of_zero_means_no_limit() -> None:
    nodes = _nodes(50)
    assert budget(nodes, 0, "json") == (nodes, False)


def test_budget_smaller_than_the_first_node_keeps_nothing_and_says_truncated() -> None:
    nodes = [node("e1", "paragraph", "a long paragraph " * 10)]
    assert budget(nodes, 2, "compact") == ([], True)


def test_budget_uses_the_estimate_of_the_requested_format() -> None:
    nodes = _nodes(30)
    compact_kept, _ = budget(nodes, 100, "compact")
    json_kept, _ = budget(nodes, 100, "json")
    assert len(json_kept) < len(compact_kept)  # JSON costs more per node


# --- page_after ----------------------------------------------------------------------------------
def test_page_after_returns_the_nodes_following_the_cursor() -> None:
    nodes = _nodes(6)
    assert [n["ref"] for n in page_after(nodes, "e3")] == ["e4", "e5", "e6"]


def test_page_after_the_last_node_is_empty() -> None:
    nodes = _nodes(3)
    assert page_after(nodes, "e3") == []


def test_page_after_without_a_cursor_is_everything() -> None:
    nodes = _nodes(3)
    assert page_after(nodes, None) == nodes
    assert page_after(nodes, "") == nodes


def test_page_after_an_unknown_ref_raises_key_error() -> None:
    with pytest.raises(KeyError):
        page_after(_nodes(3), "e99")


def test_budget_then_cursor_pages_through_every_node_exactly_once() -> None:
    nodes = _nodes(25)
    seen: list[str] = []
    rest = nodes
    for _ in range(100):
        kept, truncated = budget(rest, 30, "compact")
        assert kept, "a page must make progress"
        seen += [n["ref"] for n in kept]
        if not truncated:
            break
        rest = page_after(nodes, kept[-1]["ref"])
    assert seen == [n["ref"] for n in nodes]


# --- diff ----------------------------------------------------------------------------------------
def test_diff_reports_added_changed_and_removed_by_ref() -> None:
    before = [node("e1", "textbox", "User", value=""), node("e2", "button", "Go"), node("e3", "link", "Old")]
    after = [node("e1", "textbox", "User", value="bob"), node("e2", "button", "Go"), node("e4", "link", "New")]
    d = diff(before, after)
    assert [n["ref"] for n in d["added"]] == ["e4"]
    assert [n["ref"] for n in d["changed"]] == ["e1"]
    assert d["changed"][0]["value"] == "bob"  # the current view of the node
    assert [n["ref"] for n in d["removed"]] == ["e3"]


def test_diff_of_identical_views_is_empty() -> None:
    nodes = _nodes(4)
    assert diff(nodes, [dict(n) for n in nodes]) == {"added": [], "changed": [], "removed": []}


@pytest.mark.parametrize("key,old,new", [
    ("name", "Save", "Saved"),
    ("checked", False, True),
    ("disabled", None, True),
    ("focused", True, None),
    ("expanded", False, True),
    ("selected", None, True),
    ("role", "button", "link"),
])
def test_diff_sees_a_change_of_name_or_state(key: str, old: Any, new: Any) -> None:
    a, b = node("e1", "button", "Save"), node("e1", "button", "Save")
    if old is not None:
        a[key] = old
    if new is not None:
        b[key] = new
    assert [n["ref"] for n in diff([a], [b])["changed"]] == ["e1"]


def test_diff_ignores_a_move_to_another_depth() -> None:
    d = diff([node("e1", "link", "Home", depth=1)], [node("e1", "link", "Home", depth=3)])
    assert d == {"added": [], "changed": [], "removed": []}


def test_diff_keys_by_ref_not_by_content() -> None:
    # The same content under a new ref is a different node: one removed, one added.
    d = diff([node("e1", "button", "OK")], [node("e2", "button", "OK")])
    assert [n["ref"] for n in d["added"]] == ["e2"]
    assert [n["ref"] for n in d["removed"]] == ["e1"]
    assert d["changed"] == []


def test_diff_keeps_document_order() -> None:
    before = [node("e1", "x")]
    after = [node("e5", "x"), node("e1", "x"), node("e3", "x"), node("e2", "x")]
    assert [n["ref"] for n in diff(before, after)["added"]] == ["e5", "e3", "e2"]
