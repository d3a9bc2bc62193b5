"""Declaring each setting once: a frozen dataclass per section, its fields carrying their loader.

:func:`setting` puts the marshmallow field that loads and checks a value (its type, validators and
default) in the dataclass field's metadata; :func:`schema_for` turns the dataclass into a schema
whose keys are the camelCase of the attribute names and whose ``post_load`` builds the dataclass.
A field typed as another section dataclass becomes a nested section. (marshmallow-dataclass does
this at large, but does not support marshmallow 4.)

Rules that span several fields of a section go in its ``__post_init__``, raising
``ValidationError(message, field_name=<key>)``: marshmallow files an error raised in ``post_load``
under that key, and the rule holds for every instance, loaded or built by hand.
"""
from __future__ import annotations

import dataclasses
import functools
import os
import typing
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from marshmallow import EXCLUDE, Schema, fields, post_load

from .location import expand_user

_LOADER = "loader"  # the dataclass field metadata key holding its marshmallow field
_DEFAULT = "default"  # ... and the default as declared (before loading: "~/x", a tuple)
_KEY = "key"  # ... and its config key, when not the camelCase of its name
# The HOME of the environment being loaded, so "~" follows an explicit env mapping
# rather than whatever process happens to run the load.
_home: ContextVar[str | None] = ContextVar("config_home", default=None)


def setting(loader: fields.Field, default: Any, *, secret: bool = False, key: str = "") -> Any:
    """A dataclass field loaded and checked by ``loader``; ``default`` when the input lacks it.

    The default is loaded through ``loader`` too (so ``"~/x"`` is expanded and a list becomes a
    tuple, as for any given value), afresh each time. ``secret`` keeps the value out of the
    dataclass repr, which lands in logs and tracebacks too easily. ``key``: the config key where the
    camelCase of the attribute's name is not it (the original spells some acronyms in capitals).
    """
    loader.load_default = lambda: loader.deserialize(default)
    meta = {_LOADER: loader, _DEFAULT: default, **({_KEY: key} if key else {})}
    return dataclasses.field(metadata=meta, repr=not secret)


def key_of(fld: dataclasses.Field[Any]) -> str:
    """The config key of a section's field: its declared ``key``, else the camelCase of its name."""
    return str(fld.metadata.get(_KEY) or camel(fld.name))


def settings_of(section: type, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """Every setting under ``section``, in declaration order: (its dotted camelCase key, its
    default as declared), e.g. ``("server.stateDir", "~/.pinchtab")``."""
    hints = typing.get_type_hints(section)
    for fld in dataclasses.fields(section):
        key = prefix + key_of(fld)
        if _LOADER in fld.metadata:
            yield key, fld.metadata[_DEFAULT]
        elif dataclasses.is_dataclass(hints[fld.name]):
            yield from settings_of(hints[fld.name], key + ".")


def camel(name: str) -> str:
    """``max_body_bytes`` -> ``maxBodyBytes``: the config file's key for an attribute."""
    head, *rest = name.split("_")
    return head + "".join(part.capitalize() for part in rest)


class _SectionSchema(Schema):
    section: type  # the dataclass this schema builds

    class Meta:
        # The loader logs unknown keys before loading (they are ignored, not rejected);
        # the schema itself must just drop them.
        unknown = EXCLUDE

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> Any:
        return self.section(**data)


@functools.cache
def schema_for(section: type) -> type[Schema]:
    """The marshmallow schema of a section dataclass; raises TypeError for an undeclared field."""
    hints = typing.get_type_hints(section)
    declared: dict[str, Any] = {"section": section}
    for fld in dataclasses.fields(section):
        key = key_of(fld)
        if _LOADER in fld.metadata:
            loader: fields.Field = fld.metadata[_LOADER]
            loader.data_key = key
            declared[fld.name] = loader
        elif dataclasses.is_dataclass(hints[fld.name]):
            nested = schema_for(hints[fld.name])
            # A Nested field's load_default is returned as it is, not loaded, so an absent
            # section loads {} instead: its dataclass with every default.
            declared[fld.name] = fields.Nested(nested, data_key=key, load_default=lambda s=nested: s().load({}))
        else:
            raise TypeError(f"{section.__name__}.{fld.name} is neither a setting() nor a section")
    return type(f"{section.__name__}Schema", (_SectionSchema,), declared)


# --------------------------------------------------------------------------- field kinds


class Int(fields.Integer):
    """An integer that also accepts numeric strings (env vars, CLI), never bools or 1.5.

    marshmallow's non-strict Integer would silently truncate 1.5 to 1; a
    silently different port or limit is worse than an error.
    """

    def _validated(self, value: Any) -> int:
        if isinstance(value, float) and not value.is_integer():
            raise self.make_error("invalid")
        result: int = super()._validated(value)
        return result


class Strings(fields.List):
    """A list of strings, loaded as a tuple so the setting stays immutable."""

    def __init__(self, item: fields.String | None = None, **kwargs: Any) -> None:
        super().__init__(item or fields.String(), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> tuple[str, ...]:
        return tuple(super()._deserialize(value, attr, data, **kwargs))


class Sections(fields.List):
    """A list of sections of one kind (``browsers.providers``), loaded as a tuple of its dataclass."""

    def __init__(self, section: type, **kwargs: Any) -> None:
        super().__init__(fields.Nested(schema_for(section)), **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> tuple[Any, ...]:
        return tuple(super()._deserialize(value, attr, data, **kwargs))


class HomePath(fields.String):
    """A filesystem path; ``~`` is the home of the environment being loaded (:func:`home_of`).

    Loaded absolute, so the path still means the same thing when written into a child instance's
    config file and read from another working directory. An empty string is an error, or loads as
    None with ``empty_means_unset`` (the section derives the path from another setting).
    """

    default_error_messages = {"empty": "Shorter than minimum length 1."}

    def __init__(self, *, empty_means_unset: bool = False, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.empty_means_unset = empty_means_unset

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Path | None:
        text = super()._deserialize(value, attr, data, **kwargs)
        if text:
            return Path(os.path.abspath(expand_user(text, _home.get())))
        if self.empty_means_unset:
            return None
        raise self.make_error("empty")


@contextmanager
def home_of(home: str | None) -> Iterator[None]:
    """Within the block, :class:`HomePath` expands ``~`` to ``home`` (None: the process's own)."""
    token = _home.set(home)
    try:
        yield
    finally:
        _home.reset(token)
