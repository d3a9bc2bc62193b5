"""The contract of the browser-wide routes: GET /cache/status's answer (the rest answer a status)."""
from __future__ import annotations

from marshmallow import fields

from ..contract import Answer


# --- what they answer ------------------------------------------------------------------------------------------------
class CacheStatusResponse(Answer):
    canClear = fields.Boolean(required=True)
