"""The JSON both of our Flask apps answer with."""
from __future__ import annotations

from flask.json.provider import DefaultJSONProvider


class JSONProvider(DefaultJSONProvider):
    ensure_ascii = False  # names and values are often not ASCII; \u escapes cost tokens
    sort_keys = False  # keep the documented key order
