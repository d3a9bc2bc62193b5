"""Snapshot formats, token budgets and diffs: pure functions of a node list, tested without a browser.

A node is a dict with at least ``ref``, ``role``, ``name`` and ``depth``; optional keys are present
only when they say something (``value``, ``checked``, ``disabled``, ``focused``, ...).
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable

FORMATS = ("json", "compact", "text", "yaml")
PASSWORD_MASK = "\u2022" * 8
_YAML_FORBIDDEN = re.compile("[\x7f-\x84\x86-\x9f]")
MAX_INLINE = 200  # compact/text lines cut long names and values: a textarea must not eat the budget


def _clip(s: str) -> str:
    return s if len(s) <= MAX_INLINE else s[: MAX_INLINE - 1] + "\u2026"


def _q(s: str) -> str:
    """A double-quoted string with the few escapes a reader needs."""
    return '"' + _clip(s).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _states(node: dict[str, Any], compact: bool) -> str:
    out = []
    checked = node.get("checked")
    if checked is True:
        out.append(" [checked]")
    elif checked == "mixed":
        out.append(" [mixed]")
    if node.get("selected"):
        out.append(" [selected]")
    if "expanded" in node:
        out.append(" [expanded]" if node["expanded"] else " [collapsed]")
    if node.get("focused"):
        out.append(" *" if compact else " [focused]")
    if node.get("disabled"):
        out.append(" -" if compact else " [disabled]")
    if node.get("hidden"):
        out.append(" [hidden]")
    return "".join(out)


def compact_line(node: dict[str, Any]) -> str:
    """``e5 button Add to cart [checked] *``: one node of the compact format.

    PinchTab's compact form is ``e5:button "Add to cart"``; the colon and the quotes cost two tokens a
    line (a fifth of a big page's snapshot) and tell a reader nothing the spaces do not. The
    name runs to the end of the line, or to `` val="`` and the state markers.
    """
    line = f"{node['ref']} {node['role']}"
    if node.get("name"):
        line += " " + _clip(node["name"]).replace("\n", " ")
    if node.get("value"):
        line += " val=" + _q(str(node["value"]))
    return line + _states(node, compact=True)


def text_line(node: dict[str, Any]) -> str:
    line = "  " * node.get("depth", 0) + f"{node['ref']} {node['role']}"
    if node.get("name"):
        line += " " + _q(node["name"])
    if node.get("value"):
        line += " val=" + _q(str(node["value"]))
    return line + _states(node, compact=False)


def estimate_tokens(node: dict[str, Any], fmt: str) -> int:
    """A per-node token estimate: about four characters a token, at least 1 (what PinchTab clients budget with)."""
    base = len(node["ref"]) + len(node["role"]) + len(node.get("name", "")) + len(str(node.get("value", "")))
    if fmt == "compact":
        est = (base + 1 + 8) // 4
    elif fmt == "text":
        est = (2 * node.get("depth", 0) + base + 1 + 8) // 4
    else:
        est = (base + 60) // 3
    return max(est, 1)


def page_after(nodes: list[dict[str, Any]], after: str | None) -> list[dict[str, Any]]:
    """The nodes that follow the node with ref ``after`` (the cursor of a cut snapshot)."""
    if not after:
        return nodes
    for i, node in enumerate(nodes):
        if node["ref"] == after:
            return nodes[i + 1:]
    raise KeyError(after)


def budget(nodes: list[dict[str, Any]], max_tokens: int, fmt: str) -> tuple[list[dict[str, Any]], bool]:
    """Cut ``nodes`` at a node boundary so their estimated tokens stay within ``max_tokens``."""
    if max_tokens <= 0:
        return nodes, False
    total = 0
    for i, node in enumerate(nodes):
        total += estimate_tokens(node, fmt)
        if total > max_tokens:
            return nodes[:i], True
    return nodes, False


# Roles an interactive snapshot shows only as context: no one acts on them, so their lines carry
# no ref (the JSON format keeps every ref), and a table row's cells share one line.
CONTEXT_ROLES = frozenset({"heading", "cell", "columnheader", "rowheader", "caption", "figure", "row"})
CELL_ROLES = frozenset({"cell", "columnheader", "rowheader"})


def context_lines(nodes: list[dict[str, Any]]) -> list[str]:
    """Compact lines for an interactive snapshot: actionable nodes with refs, context as text.

    ``row Sturdy Umbrella | $42.78 | 37`` then the row's controls, each with its ref, so an agent
    sees which button belongs to which product at a few tokens a row. A cell that only holds a
    control with the same name (an "Add to cart" cell around its button) is not repeated.
    """
    out: list[str] = []
    i, n = 0, len(nodes)
    while i < n:
        node = nodes[i]
        role = node["role"]
        if role not in CONTEXT_ROLES:
            out.append(compact_line(node))
            i += 1
            continue
        if role != "row":
            out.append(f"{role} {_clip(node.get('name', ''))}".rstrip() + _states(node, compact=True))
            i += 1
            continue
        end = i + 1
        while end < n and nodes[end]["depth"] > node["depth"]:
            end += 1
        cells, rest = [], []
        for j in range(i + 1, end):
            child = nodes[j]
            if child["depth"] == node["depth"] + 1 and child["role"] in CELL_ROLES:
                inner = nodes[j + 1] if j + 1 < end else None
                repeated = (inner is not None and inner["depth"] > child["depth"] and inner["role"] not in CONTEXT_ROLES
                            and inner.get("name", "") == child.get("name", ""))
                if not repeated:
                    cells.append(_clip(child.get("name", "")))
            else:
                rest.append(child)
        out.append(("row " + " | ".join(cells)).rstrip())
        out += context_lines(rest)
        i = end
    return out


def render_compact(nodes: list[dict[str, Any]], *, title: str, url: str, count: int,
                   truncated_at: int | None = None, next_cursor: str | None = None,
                   interactive: bool = False) -> str:
    head = f"# {title} | {url} | {count} nodes"
    if truncated_at is not None:
        head += f" (truncated to ~{truncated_at} tokens)"
    lines = [head, *(context_lines(nodes) if interactive else map(compact_line, nodes))]
    if next_cursor:
        lines.append(f"# next: after={next_cursor}")
    return "\n".join(lines) + "\n"


def render_text(nodes: Iterable[dict[str, Any]], *, title: str, url: str, count: int,
                truncated_at: int | None = None, next_cursor: str | None = None) -> str:
    head = [f"# {title}", f"# {url}", f"# {count} nodes"]
    if truncated_at is not None:
        head.append(f"# truncated to ~{truncated_at} tokens")
    lines = [*head, "", *map(text_line, nodes)]
    if next_cursor:
        lines.append(f"# next: after={next_cursor}")
    return "\n".join(lines) + "\n"


def _yaml_scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return str(v)
    # A JSON string is a YAML double-quoted scalar, once DEL and the C1 controls (which YAML
    # forbids even in quotes, and JSON leaves alone) are escaped too.
    return _YAML_FORBIDDEN.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(str(v), ensure_ascii=False))


def render_yaml(doc: dict[str, Any]) -> str:
    """The snapshot document as YAML (a flat mapping plus a list of flat node mappings)."""
    lines = []
    for key, value in doc.items():
        if key == "nodes":
            continue
        lines.append(f"{key}: {_yaml_scalar(value)}")
    nodes = doc.get("nodes") or []
    lines.append("nodes:" if nodes else "nodes: []")
    for node in nodes:
        first = True
        for key, value in node.items():
            lines.append(("  - " if first else "    ") + f"{key}: {_yaml_scalar(value)}")
            first = False
    return "\n".join(lines) + "\n"


def diff_key(node: dict[str, Any]) -> str:
    return node["ref"]


def diff(previous: list[dict[str, Any]], current: list[dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """What changed between two views of the same document, keyed by ref (a ref is one node).

    ``changed`` lists nodes whose name, value or state differ.
    """
    prev = {diff_key(n): n for n in previous}
    cur_keys = set()
    added, changed = [], []
    for node in current:
        key = diff_key(node)
        cur_keys.add(key)
        old = prev.get(key)
        if old is None:
            added.append(node)
        elif _observable(old) != _observable(node):
            changed.append(node)
    removed = [n for n in previous if diff_key(n) not in cur_keys]
    return {"added": added, "changed": changed, "removed": removed}


_STATE_KEYS = ("name", "value", "checked", "disabled", "focused", "expanded", "selected", "role")


def _observable(node: dict[str, Any]) -> tuple:
    return tuple(node.get(k) for k in _STATE_KEYS)


def render_diff_compact(changes: dict[str, list[dict[str, Any]]], *, title: str, url: str, count: int) -> str:
    """Only what changed: ``+`` added, ``~`` changed (as it is now), ``-`` removed (as it was)."""
    a, c, r = (len(changes[k]) for k in ("added", "changed", "removed"))
    lines = [f"# {title} | {url} | {count} nodes | +{a} ~{c} -{r}"]
    lines += ["+ " + compact_line(n) for n in changes["added"]]
    lines += ["~ " + compact_line(n) for n in changes["changed"]]
    lines += ["- " + compact_line(n) for n in changes["removed"]]
    return "\n".join(lines) + "\n"
