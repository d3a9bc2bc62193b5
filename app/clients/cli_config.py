"""``pinchtab config show|init|path|validate|schema|token|get|set|patch`` and ``security [up|down]``.

Every write goes through :func:`write_config`: the new document is written to a temp file beside
the config, loaded and validated as the server would load it, and only then renamed over the old
one, so a bad value never lands in the file (and a crash never leaves half a file).
"""
from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
from pathlib import Path
from typing import Any

from marshmallow import Schema, fields

from ..config import DEFAULT_CONFIG_PATH, Config, ConfigError, load_config
from ..config.declare import expand_user, schema_for
from ..files import write_atomic

__all__ = ["config_path", "register", "write_config"]

# The gates `security down` opens (the original's main ones); `security up` closes every gate.
_GATES_DOWN = ("allowEvaluate", "allowCookies", "allowDownload", "allowUpload", "allowStateExport",
               "allowClipboard", "allowNetworkIntercept", "allowMacro", "allowScreencast")
_GATES_ALL = (*_GATES_DOWN, "allowFileScheme")


def config_path(env: dict[str, str] | None = None) -> Path:
    """The config file: ``$PINCHTAB_CONFIG``, else ``~/.pinchtab/config.json``."""
    env = dict(os.environ) if env is None else env
    return Path(expand_user(env.get("PINCHTAB_CONFIG") or DEFAULT_CONFIG_PATH, env.get("HOME") or None))


def _read_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise ConfigError(str(path), f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), "the top level must be a JSON object")
    return data


def write_config(path: Path, data: dict[str, Any]) -> Config:
    """Validate ``data`` as the server would load it, then replace the file atomically."""
    probe = path.with_name(f".{path.name}.check")
    write_atomic(probe, (json.dumps(data, indent=2) + "\n").encode(), what="config")
    try:
        config = load_config(env={**os.environ, "PINCHTAB_CONFIG": str(probe)})
    finally:
        probe.unlink(missing_ok=True)
    write_atomic(path, (json.dumps(data, indent=2) + "\n").encode(), what="config")
    return config


def _parse_value(raw: str) -> Any:
    """JSON when it parses (``true``, ``9867``, ``["a"]``), the plain string otherwise."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _dig(data: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        if not isinstance(data, dict) or part not in data:
            raise ConfigError(dotted, "no such key")
        data = data[part]
    return data


def _set(data: dict[str, Any], dotted: str, value: Any) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        child = data.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(dotted, f"{part} is not an object")
        data = child
    data[last] = value


def _merge(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value
    return base


def _known_key(dotted: str) -> None:
    _dig(load_config().to_dict(), dotted)  # a typo fails here rather than being ignored by the loader


_TYPES: dict[type, str] = {fields.Boolean: "boolean", fields.Integer: "integer", fields.Float: "number",
                           fields.String: "string", fields.List: "array", fields.Dict: "object"}


def json_schema(schema: Schema) -> dict[str, Any]:
    """A JSON Schema of the config file, from the same marshmallow schema that loads it."""
    props: dict[str, Any] = {}
    for name, field in schema.fields.items():
        key = field.data_key or name
        if isinstance(field, fields.Nested):
            nested = field.schema
            props[key] = json_schema(nested)
            continue
        kind = next((t for cls, t in _TYPES.items() if isinstance(field, cls)), None)
        props[key] = {"type": kind} if kind else {}
    return {"type": "object", "properties": props}


def config(args: argparse.Namespace) -> int:
    """Run one ``config`` subcommand."""
    what, rest = args.what, list(args.args)
    path = config_path()
    if what == "path":
        print(path)
    elif what == "show":
        print(json.dumps(load_config().public_dict(), indent=2))
    elif what == "validate":
        load_config()
        print(f"OK: {path}" + ("" if path.exists() else " (not present: the defaults)"))
    elif what == "schema":
        print(json.dumps({"$schema": "https://json-schema.org/draft/2020-12/schema", "title": "pinchtab config",
                          **json_schema(schema_for(Config)())}, indent=2))
    elif what == "init":
        if path.exists() and not args.force:
            print(f"Error: {path} exists (use --force to replace it)", file=sys.stderr)
            return 1
        data = load_config(env={k: v for k, v in os.environ.items() if k == "HOME"}).to_dict()
        data["server"]["token"] = secrets.token_urlsafe(24)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_config(path, data)
        print(f"Wrote {path}")
    elif what == "token":
        token = load_config().server.token
        if not token:
            print("Error: no token configured; create one with: pinchtab config init", file=sys.stderr)
            return 1
        print(token)
    elif what == "get":
        if len(rest) != 1:
            raise ConfigError("config get", "usage: pinchtab config get <section.key>")
        value = _dig(load_config().to_dict(), rest[0])
        print(value if isinstance(value, str) else json.dumps(value, indent=2))
    elif what == "set":
        if len(rest) != 2:
            raise ConfigError("config set", "usage: pinchtab config set <section.key> <value>")
        _known_key(rest[0])
        data = _read_file(path)
        _set(data, rest[0], _parse_value(rest[1]))
        write_config(path, data)
        print(f"{rest[0]} = {json.dumps(_parse_value(rest[1]))}")
    elif what == "patch":
        if len(rest) != 1 or not isinstance(patch := _parse_value(rest[0]), dict):
            raise ConfigError("config patch", "usage: pinchtab config patch '<JSON object>'")
        write_config(path, _merge(_read_file(path), patch))
        print(f"Patched {path}")
    return 0


def security(args: argparse.Namespace) -> int:
    """``security`` shows the capability gates; ``up`` closes them all, ``down`` opens the main ones."""
    path = config_path()
    if args.how:
        data = _read_file(path)
        gates = {g: args.how == "down" and g in _GATES_DOWN for g in _GATES_ALL}
        write_config(path, _merge(data, {"security": gates}))
        effect = "the main capabilities are ON" if args.how == "down" else "every capability is OFF"
        print(f"security {args.how}: {effect} (restart the server to apply)")
    current = load_config().to_dict()["security"]
    for gate in _GATES_ALL:
        print(f"{gate:<22} {'on' if current.get(gate) else 'off'}")
    return 0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("config", help="the config file: show|init|path|validate|schema|token|get|set|patch",
                       description="Read and change the config file (writes are validated, then atomic).")
    p.add_argument("what", choices=("show", "init", "path", "validate", "schema", "token", "get", "set", "patch"),
                   nargs="?", default="show")
    p.add_argument("args", nargs="*", metavar="ARG")
    p.add_argument("--force", action="store_true", help="init: replace an existing file")
    p.set_defaults(run=config, command="config")
    p = sub.add_parser("security", help="show the capability gates; security up (all off) | down (main ones on)",
                       description="Show or flip the security.allow* capability gates in the config file.")
    p.add_argument("how", nargs="?", choices=("up", "down"))
    p.set_defaults(run=security, command="security")
