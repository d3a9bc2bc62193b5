"""The Flask app class all of ours are: the JSON they answer with, and views called cheaply."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from flask import Flask, Response
from flask.json.provider import DefaultJSONProvider
from flask.sessions import NullSession, SessionInterface
from werkzeug.sansio.response import Response as AnyResponse


class JSONProvider(DefaultJSONProvider):
    ensure_ascii = False  # names and values are often not ASCII; \u escapes cost tokens
    sort_keys = False  # keep the documented key order

    def __init__(self, app: Flask) -> None:
        super().__init__(app)
        # One encoder for every compact answer: json.dumps with options of its own builds a new one per call.
        self._compact = json.JSONEncoder(default=self.default, ensure_ascii=self.ensure_ascii,
                                         sort_keys=self.sort_keys, separators=(",", ":"))

    def response(self, *args: Any, **kwargs: Any) -> AnyResponse:
        if len(args) != 1 or kwargs or self.compact is False or (self.compact is None and self._app.debug):
            return super().response(*args, **kwargs)  # Flask's own: several values, or indented
        return self._app.response_class(self._compact.encode(args[0]) + "\n", mimetype=self.mimetype)


class _NoSessions(SessionInterface):
    """Flask's cookie session is not used (logins have their own cookie: app.access): each request
    gets the one empty session that refuses writes, instead of Flask asking for a signing key and
    building a new empty one on every request."""

    _null = NullSession()

    def open_session(self, app: Flask, request: Any) -> NullSession:
        return self._null

    def save_session(self, app: Flask, session: Any, response: Response) -> None:
        return None


class App(Flask):
    json_provider_class = JSONProvider
    session_interface = _NoSessions()

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
