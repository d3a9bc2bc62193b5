"""The Flask app class all of ours are: the JSON they answer with, and views called cheaply."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask
from flask.json.provider import DefaultJSONProvider


class JSONProvider(DefaultJSONProvider):
    ensure_ascii = False  # names and values are often not ASCII; \u escapes cost tokens
    sort_keys = False  # keep the documented key order


class App(Flask):
    json_provider_class = JSONProvider

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._callable: dict[Callable[..., Any], Callable[..., Any]] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        # Flask asks this of every view, hook and flask-smorest layer on every request (fourteen
        # times for a plain call), and each answer inspects the function anew. The functions are
        # the app's own, registered once: their answers are kept (a coroutine is still wrapped).
        try:
            return self._callable[func]
        except KeyError:
            callable_ = self._callable[func] = super().ensure_sync(func)
            return callable_
