"""``PUT /api/config``'s rules, apart from HTTP: check a change, tell which keys apply live.

A change is a partial config in the file's nested camelCase shape. Unknown keys and bad values
are refused (naming the key); secrets are never set this way (they stay in the file or the
environment, and never travel through an API a browser can reach). The server's own process
can switch a few settings at once (:data:`LIVE`); every other key is saved to the config file
and takes effect when the server restarts.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from marshmallow import ValidationError

from profiles.redact import MASK

from ..config import Config
from ..config.declare import home_of, schema_for
from ..config.sources import from_legacy, is_legacy
from ..web.errors import BadRequest
from ..web.files import write_atomic

# Read by the server's own process on each use: multiInstance.allocationPolicy by the proxy,
# scheduler limits by the task queue, the proxy and cookie settings by auth and the login, the
# elevation switch by this route.
LIVE = frozenset({"multiInstance.allocationPolicy", "scheduler.maxQueueSize", "scheduler.maxPerAgent",
                  "server.trustProxyHeaders", "server.cookieSecure", "sessions.dashboard.requireElevation"})
SECRETS = frozenset({"server.token", "security.stateEncryptionKey", "browser.cdpUrl"})
# What a dashboard login may change without typing the token again (unless
# sessions.dashboard.requireElevation): how the server runs, not who may do what or what the
# browser may reach. Every other key (security.*, browser.*, profiles.*, sessions.*, the access
# lists of server.*, ...) needs an elevated login, as the original asks for its security keys.
ROUTINE_PREFIXES = ("multiInstance.", "timeouts.", "instanceDefaults.", "scheduler.", "observability.")
ROUTINE_KEYS = frozenset({"server.trustProxyHeaders", "server.cookieSecure", "server.networkBufferSize"})


def needs_elevation(keys: list[str]) -> list[str]:
    """The keys among ``keys`` a dashboard login may change only after typing the token again."""
    return [k for k in keys if k not in ROUTINE_KEYS and not k.startswith(ROUTINE_PREFIXES)]


def leaves(data: Mapping[str, Any], prefix: str = "") -> Iterator[tuple[str, Any]]:
    """(dotted key, value) for every non-object value of a nested dict."""
    for key, value in data.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            yield from leaves(value, dotted)
        else:
            yield dotted, value


def merge(base: dict[str, Any], change: Mapping[str, Any]) -> dict[str, Any]:
    """``base`` with ``change`` laid over it, object by object (a new dict; lists are replaced)."""
    out = dict(base)
    for key, value in change.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), dict):
            out[key] = merge(out[key], value)
        else:
            out[key] = value
    return out


def check(current: Config, change: Mapping[str, Any]) -> tuple[Config, list[str]]:
    """Validate ``change`` against the running config: (the config it makes, the dotted keys it
    changes). Raises BadRequest naming the first unknown key, secret or bad value."""
    known = dict(leaves(current.to_dict()))
    sections = {k.rsplit(".", 1)[0] for k in known}
    for dotted, value in leaves(change):
        if dotted not in known:
            if dotted in sections:
                raise BadRequest(f"{dotted} is a section: give its keys", code="bad_config",
                                 details={"field": dotted})
            raise BadRequest(f"unknown config key {dotted}", code="unknown_config_key", details={"field": dotted})
        if dotted in SECRETS and value != MASK:  # not even its own value: no oracle for guessing it
            # The token has the original's code (its clients look for it); the other secrets ours.
            raise BadRequest(f"{dotted} is a secret: set it in the config file or the environment, not here",
                             code="token_write_only" if dotted == "server.token" else "secret_not_settable",
                             details={"field": dotted})
    clean = _without_masks(change, known)
    merged = merge(current.to_dict(), clean)
    try:
        with home_of(os.environ.get("HOME")):
            made: Config = schema_for(Config)().load(merged)
    except ValidationError as exc:
        field, message = _first(exc.messages)
        raise BadRequest(f"{field}: {message}", code="bad_config", details={"field": field}) from None
    before, after = known, dict(leaves(made.to_dict()))
    return made, sorted(k for k in after if after[k] != before.get(k))


def live_config(current: Config, made: Config, keys: list[str]) -> Config:
    """``current`` with only the live keys among ``keys`` taken from ``made``."""
    live = [k for k in keys if k in LIVE]
    if not live:
        return current
    values = dict(leaves(made.to_dict()))
    change: dict[str, Any] = {}
    for key in live:
        node = change
        *parents, last = key.split(".")
        for part in parents:
            node = node.setdefault(part, {})
        node[last] = values[key]
    with home_of(os.environ.get("HOME")):
        out: Config = schema_for(Config)().load(merge(current.to_dict(), change))
    return out


def save(change: Mapping[str, Any], keys: list[str], path: Path) -> None:
    """Write the changed keys into the config file (atomically), leaving the rest of it as it is."""
    try:
        raw = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        raw = {}
    if not isinstance(raw, dict):
        raise BadRequest(f"the config file {path.name} does not hold a JSON object", code="bad_config_file")
    if is_legacy(raw):   # edited as the nested config it stands for (see app.config.sources)
        raw = from_legacy(raw)
    wanted = dict(leaves(change))
    for key in keys:
        if key not in wanted:
            continue
        node = raw
        *parents, last = key.split(".")
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[last] = wanted[key]
    write_atomic(path, (json.dumps(raw, indent=2) + "\n").encode(), what="the config file")


def _without_masks(change: Mapping[str, Any], known: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in change.items():
        dotted = f"{prefix}.{key}" if prefix else key
        if isinstance(value, Mapping):
            out[key] = _without_masks(value, known, dotted)
        elif not (dotted in SECRETS and value == MASK):
            out[key] = value
    return out


def _first(messages: Any, path: str = "") -> tuple[str, str]:
    if isinstance(messages, dict) and messages:
        key = next(iter(messages))
        return _first(messages[key], f"{path}.{key}" if path and key != "_schema" else (path or str(key)))
    if isinstance(messages, list) and messages:
        return (path, str(messages[0])) if not isinstance(messages[0], (dict, list)) else _first(messages[0], path)
    return path, str(messages)
