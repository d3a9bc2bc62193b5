"""The two settings a client of the REST API needs, ``server.port`` and ``server.token``, read as
:func:`app.config.load_config` resolves them but without building the config.

A CLI verb runs as a process per call, and loading the whole config (its schemas, every section
checked) cost more than the call itself. So a client reads the environment
(``PINCHTAB_PORT``/``BRIDGE_PORT``, ``PINCHTAB_TOKEN``/``BRIDGE_TOKEN``), else the config file
(:func:`app.config.location.config_path`), else the defaults, and checks just these two values as
the config would. The rest of the file is the server's to check when it starts. Whatever this
reader cannot vouch for (a flat pre-0.8 file, a file that cannot be read, is not JSON or not an
object, a port or a token that is not plainly valid) goes to :func:`load_config`, which gives the
answer, or the :class:`~app.config.ConfigError`, it always gave.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ..config.location import CONFIG_ENV, config_path

__all__ = ["DEFAULT_PORT", "server_settings"]

#: ``server.port``'s default (the config declares it; a test keeps the two equal).
DEFAULT_PORT = 9867
_PORT_ENV = ("PINCHTAB_PORT", "BRIDGE_PORT")
_TOKEN_ENV = ("PINCHTAB_TOKEN", "BRIDGE_TOKEN")


class _Unsure(Exception):
    """This reader cannot vouch for the answer: the full loader decides."""


def server_settings(env: Mapping[str, str]) -> tuple[int, str]:
    """``(server.port, server.token)`` for ``env`` (its HOME, PINCHTAB_CONFIG and overrides)."""
    try:
        return _read(env)
    except _Unsure:
        from ..config import load_config

        server = load_config(env=env).server
        return server.port, server.token


def _read(env: Mapping[str, str]) -> tuple[int, str]:
    server = _file_section(env)
    port = _first(env, _PORT_ENV)
    token = _first(env, _TOKEN_ENV)
    return (_port(port if port is not None else server.get("port", DEFAULT_PORT)),
            _token(token if token is not None else server.get("token", "")))


def _first(env: Mapping[str, str], names: tuple[str, ...]) -> str | None:
    # An empty variable counts as unset, as it does for the config.
    return next((env[name] for name in names if env.get(name)), None)


def _file_section(env: Mapping[str, str]) -> Mapping[str, Any]:
    """The config file's ``server`` object ({} without a file at the default place)."""
    try:
        text = config_path(env).read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        if env.get(CONFIG_ENV):
            raise _Unsure from None  # a named file that is missing: the loader's error
        return {}
    except (OSError, UnicodeDecodeError):
        raise _Unsure from None
    try:
        data = json.loads(text)
    except ValueError:
        raise _Unsure from None
    # No section at all: possibly the flat form of before 0.8, which the loader converts.
    if not isinstance(data, dict) or "server" not in data:
        if isinstance(data, dict) and not any(key in data for key in ("port", "headless", "token")):
            return {}
        raise _Unsure
    server = data["server"]
    if not isinstance(server, dict):
        raise _Unsure
    return server


def _port(value: Any) -> int:
    """A port as the config's integer field takes it: an int, or a string of digits, 1-65535."""
    if isinstance(value, str) and value.isascii() and value.isdigit():
        value = int(value)
    if type(value) is not int or not 1 <= value <= 65535:
        raise _Unsure
    return value


def _token(value: Any) -> str:
    if not isinstance(value, str):
        raise _Unsure
    return value
