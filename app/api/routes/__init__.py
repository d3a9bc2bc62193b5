"""HTTP routes, one blueprint per family.

``tab_route`` registers a route and its ``/tabs/<id>`` twin; ``doc`` records what a view takes
(the marshmallow schema that validates its query or body) so ``GET /openapi.json`` describes
every route from the same schemas that check the requests.
"""
from __future__ import annotations

from typing import Any, Callable

from flask import Blueprint


def doc(summary: str, *, query: type | None = None, body: type | None = None,
        produces: str = "application/json") -> Callable:
    """Describe a view for the OpenAPI document (the schemas are the ones the view validates with)."""

    def mark(view: Callable) -> Callable:
        view.__api__ = {"summary": summary, "query": query, "body": body, "produces": produces}  # type: ignore[attr-defined]
        return view

    return mark


def tab_route(bp: Blueprint, rule: str, **options: Any) -> Callable:
    """Register ``rule`` and ``/tabs/<tab_id><rule>``; the view gets ``tab_id`` (None on the first)."""

    def wrap(view: Callable) -> Callable:
        bp.add_url_rule(rule, view_func=view, defaults={"tab_id": None}, **options)
        bp.add_url_rule(f"/tabs/<tab_id>{rule}", view_func=view, **options)
        return view

    return wrap
