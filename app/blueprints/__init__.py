"""HTTP routes, one blueprint per family. ``tab_route`` registers a route and its /tabs/{id} twin."""
from __future__ import annotations

from typing import Any, Callable

from flask import Blueprint


def tab_route(bp: Blueprint, rule: str, **options: Any) -> Callable:
    """Register ``rule`` and ``/tabs/<tab_id><rule>``; the view gets ``tab_id`` (None on the first)."""

    def wrap(view: Callable) -> Callable:
        bp.add_url_rule(rule, view_func=view, defaults={"tab_id": None}, **options)
        bp.add_url_rule(f"/tabs/<tab_id>{rule}", view_func=view, **options)
        return view

    return wrap
