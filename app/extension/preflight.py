"""The check before a click, a type or a query: does its selector match, is it valid CSS?

The original extension reports success for a click or type whose selector matches nothing or is
invalid, and ``data: null`` for a query whose selector is invalid (the error is thrown inside the
injected function, whose failure it swallows). So the daemon first sends a ``query`` in mode
``exists`` (invalid CSS answers ``data: null``; no match answers ``count: 0``) and answers the
failure itself, without sending the command. A query in mode ``exists`` is its own check: its
answer, when the selector is valid, is the command's.

The original's ``query`` always reads the active tab: a command naming a ``tabId`` is not checked,
since the active tab's answer would say nothing about the named one.
"""
from __future__ import annotations

from typing import Any

from .commands import Answer, failure

CHECKED_TYPES = frozenset({"click", "type", "query"})


def check_query(command: dict[str, Any], request_id: str) -> dict[str, Any] | None:
    """The ``query`` that checks ``command``'s selector, with ``request_id``; None: nothing to check."""
    if command.get("type") not in CHECKED_TYPES:
        return None
    data = command.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("selector"), str):
        return None  # malformed: the extension says what is wrong with it
    if data.get("tabId") is not None:
        return None
    if command["type"] == "query" and data.get("mode") == "page_text":
        return None  # reads the body; the selector is not used
    return {"type": "query", "data": {"selector": data["selector"], "mode": "exists", "options": {}},
            "requestId": request_id}


def verdict(command: dict[str, Any], check: Answer) -> Answer | None:
    """The failure to answer ``command`` with, given its check query's answer; None: go ahead."""
    request_id = command.get("requestId")
    data = command["data"]
    selector = data["selector"]
    if not check.get("success"):
        return {**check, "requestId": request_id}  # e.g. no active tab, a page scripts may not touch
    found = check.get("data")
    if not isinstance(found, dict):
        return failure(request_id, f"Invalid selector: {selector}")
    if command["type"] == "query":
        # A valid selector: no match is an answer, not a failure; mode exists has it already.
        return {**check, "requestId": request_id} if data.get("mode") == "exists" else None
    count = found.get("count")
    count = count if isinstance(count, int) and not isinstance(count, bool) else 0
    if command["type"] == "click":
        index = data.get("index")
        index = index if isinstance(index, int) and not isinstance(index, bool) else 0
        if not 0 <= index < count:
            return failure(request_id, f"Element not found: {selector} at index {index}")
    elif count < 1:
        return failure(request_id, f"Element not found: {selector}")
    return None
