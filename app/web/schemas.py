"""The two kinds of request schema every app of ours builds on: Loose (the original's clients send
options we do not have yet) and Strict (our own routes, where a typo should not silently do nothing)."""
from __future__ import annotations

from marshmallow import EXCLUDE, Schema


class Loose(Schema):
    """Unknown fields are ignored: PinchTab clients send options we do not have yet."""

    class Meta:
        unknown = EXCLUDE


class Strict(Schema):
    """Unknown fields are an error: a typo should not silently do nothing."""
