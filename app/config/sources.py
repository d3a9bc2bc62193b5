"""Where settings come from, and merging them into one validated :class:`Config`.

Sources, in increasing precedence:

1. built-in defaults (declared with each setting in :mod:`app.config.settings`);
2. the JSON file named by ``$PINCHTAB_CONFIG``, or ``~/.pinchtab/config.json``;
3. environment overrides (``PINCHTAB_TOKEN``, ``PINCHTAB_PORT``, ...);
4. command-line overrides, given as dotted keys (``{"server.port": 9999}``).

Everything is merged into one raw, camelCase nested dict (the shape of PinchTab's
``config.json``) and validated once, so a value from the environment or the command line passes
exactly the same checks as one from the file.

Config files written for PinchTab carry many keys we do not use yet; unknown
keys and sections are therefore logged and ignored, never rejected.
"""
from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from marshmallow import Schema, ValidationError, fields

from .declare import home_of, schema_for
from .errors import ConfigError
from .location import CONFIG_ENV, config_path
from .settings import Config

logger = logging.getLogger(__name__)


_Path = tuple[str, ...]

# (config key path, environment variables in priority order)
_ENV_OVERRIDES: tuple[tuple[_Path, tuple[str, ...]], ...] = (
    (("server", "token"), ("PINCHTAB_TOKEN", "BRIDGE_TOKEN")),
    (("server", "port"), ("PINCHTAB_PORT", "BRIDGE_PORT")),
    (("server", "bind"), ("PINCHTAB_BIND", "BRIDGE_BIND")),
    (("server", "stateDir"), ("PINCHTAB_STATE_DIR", "BRIDGE_STATE_DIR")),
    (("browser", "binary"), ("CHROME_BIN", "CHROME_BINARY")),
    (("browser", "cdpUrl"), ("CDP_URL",)),
    (("security", "stateEncryptionKey"), ("PINCHTAB_STATE_KEY",)),
)
_HEADLESS_ENV = "BRIDGE_HEADLESS"
_TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
_FALSE_WORDS = frozenset({"0", "false", "no", "off"})


def load_config(
    env: Mapping[str, str] | None = None,
    overrides: Mapping[str, object] | None = None,
) -> Config:
    """Load, merge and validate the configuration.

    :param env: the environment to read (``PINCHTAB_CONFIG``, the overrides,
        ``HOME`` for ``~``); defaults to ``os.environ``.
    :param overrides: command-line values as dotted camelCase keys, e.g.
        ``{"server.port": 9999}``; a ``None`` value means "option not given".
    :raises ConfigError: for the first problem found.
    """
    env = os.environ if env is None else env
    home = env.get("HOME") or None

    raw = _read_config_file(env)
    # Who supplied each overridden value, so a bad one is reported under the
    # name the user actually typed (PINCHTAB_PORT rather than server.port).
    sources: dict[_Path, str] = {}

    for path, var, value in _env_values(env):
        _set_path(raw, path, value)
        sources[path] = var

    for dotted, value in (overrides or {}).items():
        if value is None:
            continue
        path = _override_path(dotted)
        _set_path(raw, path, value)
        sources.pop(path, None)  # reported under its own dotted key

    try:
        with home_of(home):
            config: Config = schema_for(Config)().load(raw)
    except ValidationError as exc:
        where, message = _first_error(exc.messages)
        dotted = _format_path(where)
        var = _source_of(where, sources)
        if var is not None:
            raise ConfigError(var, f"{message} (sets {dotted})") from None
        raise ConfigError(dotted, message) from None
    return config


def _read_config_file(env: Mapping[str, str]) -> dict[str, Any]:
    """Return the config file's top-level object, or {} when the default file is absent."""
    named = env.get(CONFIG_ENV)
    path = config_path(env)
    try:
        # utf-8-sig: editors on Windows like to prepend a BOM, which json rejects.
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        if named:
            # Naming a file explicitly and silently getting defaults would hide typos.
            raise ConfigError(CONFIG_ENV, f"config file not found: {path}") from None
        return {}
    except UnicodeDecodeError as exc:
        raise ConfigError(str(path), f"not valid UTF-8 (byte {exc.start})") from None
    except OSError as exc:
        raise ConfigError(str(path), f"cannot read config file: {exc.strerror or exc}") from None

    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            str(path), f"invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), "the top level must be a JSON object")
    if is_legacy(data):
        logger.info("%s: a flat (pre-0.8) config, read as the nested one; `pinchtab config init` writes "
                    "the nested form", path)
        data = from_legacy(data)
    _warn_unknown(schema_for(Config)(), data, (), str(path))
    return data


# The original's flat config of before 0.8 (still read by it): key -> where it lives now.
_LEGACY_KEYS: dict[str, _Path] = {
    "port": ("server", "port"), "token": ("server", "token"), "stateDir": ("server", "stateDir"),
    "maxTabs": ("instanceDefaults", "maxTabs"), "timeoutSec": ("timeouts", "actionSec"),
    "navigateSec": ("timeouts", "navigateSec"), "instancePortStart": ("multiInstance", "instancePortStart"),
    "instancePortEnd": ("multiInstance", "instancePortEnd"),
    **{f"allow{cap}": ("security", f"allow{cap}")
       for cap in ("Evaluate", "Macro", "Screencast", "Download", "Cookies", "Upload", "Clipboard")},
}
_SECTIONS = ("server", "browser", "instanceDefaults", "profiles", "multiInstance", "security", "attach",
             "timeouts", "sessions")


def is_legacy(data: Mapping[str, Any]) -> bool:
    """A flat config, as the original wrote before 0.8: no section, and a ``port`` or ``headless``."""
    return not any(key in data for key in _SECTIONS) and ("port" in data or "headless" in data)


def from_legacy(data: Mapping[str, Any]) -> dict[str, Any]:
    """The nested config a flat one stands for (the original's own conversion); what it does not
    know is kept at the top, where the unknown-key warning names it."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if key in _LEGACY_KEYS:
            section, name = _LEGACY_KEYS[key]
            out.setdefault(section, {})[name] = value
        elif key == "headless":
            if isinstance(value, bool):
                out.setdefault("instanceDefaults", {})["mode"] = "headless" if value else "headed"
        elif key == "noRestore":
            if value is True:
                out.setdefault("instanceDefaults", {})["noRestore"] = True
        elif key == "profileDir":
            if isinstance(value, str) and value:
                where = Path(value)
                out.setdefault("profiles", {}).update(baseDir=str(where.parent), defaultProfile=where.name)
        else:
            out[key] = value
    return out


def _env_values(env: Mapping[str, str]) -> Iterator[tuple[_Path, str, object]]:
    """Yield (config path, variable name, value) for each environment override set."""
    for path, names in _ENV_OVERRIDES:
        for name in names:
            # An empty variable counts as unset: shells and compose files often
            # export VAR= meaning "nothing", not "the empty token".
            value = env.get(name)
            if value:
                yield path, name, value
                break

    headless = env.get(_HEADLESS_ENV, "").strip().lower()
    if headless:
        if headless in _FALSE_WORDS:
            yield ("instanceDefaults", "mode"), _HEADLESS_ENV, "headed"
        elif headless in _TRUE_WORDS:
            yield ("instanceDefaults", "mode"), _HEADLESS_ENV, "headless"
        else:
            raise ConfigError(_HEADLESS_ENV, "must be true/false (or 1/0, yes/no, on/off)")


def _override_path(dotted: str) -> _Path:
    """Check a command-line key against the schema and split it."""
    if not isinstance(dotted, str) or not dotted:
        raise ConfigError(str(dotted), "override keys must be dotted config keys like 'server.port'")
    parts = tuple(dotted.split("."))
    schema: Schema = schema_for(Config)()
    for i, part in enumerate(parts):
        fld = _field_for_key(schema, part)
        last = i == len(parts) - 1
        if fld is None:
            # Unlike a file key, a command-line key is ours: a typo must not be ignored.
            raise ConfigError(dotted, "unknown configuration key")
        if isinstance(fld, fields.Nested):
            if last:
                raise ConfigError(dotted, "is a section; override its keys one by one")
            schema = fld.schema
        elif not last:
            raise ConfigError(dotted, "unknown configuration key")
    return parts


def _set_path(raw: dict[str, Any], path: _Path, value: object) -> None:
    node: Any = raw
    for part in path[:-1]:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            # The file's section is not an object; validation reports that
            # under the file's key, which is the real problem to fix first.
            return
    node[path[-1]] = value


def _field_for_key(schema: Schema, key: str) -> fields.Field | None:
    return next((fld for fld in schema.fields.values() if fld.data_key == key), None)


def _warn_unknown(schema: Schema, data: Mapping[str, Any], prefix: _Path, origin: str) -> None:
    """Log each key the schema does not know (they are ignored, not rejected)."""
    for key, value in data.items():
        fld = _field_for_key(schema, key)
        if fld is None:
            logger.warning("%s: unknown config key %r ignored", origin, _format_path((*prefix, key)))
        elif isinstance(fld, fields.Nested) and isinstance(value, Mapping):
            _warn_unknown(fld.schema, value, (*prefix, key), origin)


def _first_error(messages: Any) -> tuple[list[str | int], str]:
    """Follow marshmallow's error tree to its first leaf: (path, message).

    Error dicts keep the schema's field declaration order, so the first key is
    the first field; list errors are keyed by index, so take the lowest.
    """
    path: list[str | int] = []
    node = messages
    while True:
        if isinstance(node, dict) and node:
            keys = list(node)
            key = min(keys) if all(isinstance(k, int) for k in keys) else keys[0]
            if key != "_schema":  # a schema-level error belongs to the enclosing key
                path.append(key)
            node = node[key]
        elif isinstance(node, list) and node and isinstance(node[0], (dict, list)):
            node = node[0]
        else:
            break
    if isinstance(node, list):
        node = node[0] if node else "invalid value"
    return path, str(node)


def _format_path(path: tuple[str | int, ...] | list[str | int]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else part
    return out


def _source_of(path: list[str | int], sources: Mapping[_Path, str]) -> str | None:
    keys = tuple(p for p in path if isinstance(p, str))
    for end in range(len(keys), 0, -1):
        if keys[:end] in sources:
            return sources[keys[:end]]
    return None
