"""``pinchtab config show|init|path|validate|schema|token|get|set|patch`` and ``security [up|down]``.

Every write goes through :func:`write_config`: the new document is first loaded and validated as
the server would load it (from a temp file of its own), and only then written over the old one,
atomically, so a bad value never lands in the file (and a crash never leaves half a file).

The token is a secret: ``show`` and ``get`` mask it, and ``config token`` puts it on the desktop's
clipboard rather than on the screen (as the original does).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from marshmallow import Schema, fields

from ..config import Config, ConfigError, config_path, load_config
from ..config.declare import schema_for
from ..config.sources import from_legacy, is_legacy
from ..web.files import write_atomic

__all__ = ["SCHEMA_URL", "config_path", "copy_to_clipboard", "load_current", "register", "write_config"]

# Where the config file format's JSON Schema is published: config files written for the original
# name it in "$schema", and `config schema` prints it (`--print`: ours, generated from our loader).
SCHEMA_URL = "https://raw.githubusercontent.com/pinchtab/pinchtab/main/schema/config.json"
# The desktop clipboard tools tried in turn (Wayland, X11, macOS, Windows).
_CLIPBOARD_TOOLS = (("wl-copy",), ("xclip", "-selection", "clipboard"), ("xsel", "--clipboard", "--input"),
                    ("pbcopy",), ("clip",))
_CLIPBOARD_TIMEOUT_S = 5.0

# The gates `security down` opens (the original's main ones); `security up` closes every gate.
_GATES_DOWN = ("allowEvaluate", "allowCookies", "allowDownload", "allowUpload", "allowStateExport",
               "allowClipboard", "allowNetworkIntercept", "allowMacro", "allowScreencast")
_GATES_ALL = (*_GATES_DOWN, "allowFileScheme")


def _read_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise ConfigError(str(path), f"invalid JSON: {exc}") from None
    if not isinstance(data, dict):
        raise ConfigError(str(path), "the top level must be a JSON object")
    # A flat (pre-0.8) file is edited as the nested one it stands for: a nested key written into the
    # flat form would make the loader stop reading its flat keys.
    return from_legacy(data) if is_legacy(data) else data


def _load_from(data: dict[str, Any], env: Mapping[str, str]) -> Config:
    """``data`` loaded and validated as the server would load it as its config file (with ``env``'s
    overrides), from a temp file that is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="pinchtab-config-") as tmp:
        probe = Path(tmp) / "config.json"
        probe.write_text(json.dumps(data), encoding="utf-8")
        return load_config(env={**env, "PINCHTAB_CONFIG": str(probe)})


def write_config(path: Path, data: dict[str, Any]) -> Config:
    """Validate ``data`` as the server would load it, then replace the file atomically."""
    config = _load_from(data, os.environ)
    write_atomic(path, (json.dumps(data, indent=2) + "\n").encode(), what="config")
    return config


def load_current() -> tuple[Config, bool]:
    """The config as it stands, and whether its file exists. A missing file is the defaults (and the
    environment's overrides) here, even when PINCHTAB_CONFIG names it: these commands are how one
    looks at and writes that file (the server itself refuses a named file that is missing)."""
    if config_path().exists():
        return load_config(), True
    return _load_from({}, os.environ), False


def copy_to_clipboard(text: str) -> bool:
    """Put ``text`` on the desktop's clipboard with the first tool that takes it; False when none does
    (none installed, no display). The text goes on the tool's stdin, never on a command line."""
    for tool, *options in _CLIPBOARD_TOOLS:
        exe = shutil.which(tool)
        if not exe:
            continue
        try:
            # No pipes for its output: wl-copy and xclip fork a child that serves the clipboard and
            # would hold them open (and this call) for as long as it does.
            done = subprocess.run([exe, *options], input=text.encode(), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL, timeout=_CLIPBOARD_TIMEOUT_S, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if done.returncode == 0:
            return True
    return False


def _parse_value(raw: str) -> Any:
    """JSON when it parses (``true``, ``9867``, ``["a"]``), the plain string otherwise."""
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _field_at(dotted: str) -> fields.Field | None:
    """The loader's field of a dotted key (None for a section or an unknown key)."""
    schema: Schema | None = schema_for(Config)()
    field: fields.Field | None = None
    for part in dotted.split("."):
        if schema is None:
            return None
        field = next((f for f in schema.fields.values() if (f.data_key or f.name) == part), None)
        if field is None:
            return None
        schema = field.schema if isinstance(field, fields.Nested) else None
    return None if isinstance(field, fields.Nested) else field


def _value_for(dotted: str, raw: str) -> Any:
    """``raw`` as ``config set`` stores it: text as it is for a string setting (a token of digits stays
    a string), a JSON array or a comma-separated list for a list setting, JSON or text otherwise."""
    field = _field_at(dotted)
    if isinstance(field, fields.String):
        return raw
    if isinstance(field, fields.List):
        parsed = _parse_value(raw)
        return parsed if isinstance(parsed, list) else [part.strip() for part in raw.split(",") if part.strip()]
    return _parse_value(raw)


def _display(value: Any) -> str:
    """A setting's value as ``get`` prints it: text as it is, a list comma-separated, JSON otherwise."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return ",".join(str(v) for v in value)
    return json.dumps(value, indent=2) if isinstance(value, dict) else json.dumps(value)


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
    _dig(load_current()[0].to_dict(), dotted)  # a typo fails here rather than being ignored by the loader


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
        # A setting whose null means "decide for me" (server.cookieSecure) takes null as well.
        props[key] = ({"type": [kind, "null"] if field.allow_none else kind}) if kind else {}
    return {"type": "object", "properties": props}


_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def _title(key: str) -> str:
    """``instanceDefaults`` -> ``Instance Defaults``."""
    return " ".join(w[:1].upper() + w[1:] for w in _WORDS.findall(key))


def _leaves(section: Mapping[str, Any], prefix: str = "") -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for key, value in section.items():
        if isinstance(value, Mapping) and value:
            out += _leaves(value, f"{prefix}{key}.")
        else:
            out.append((prefix + key, value))
    return out


def overview(config: Config, path: Path, present: bool) -> str:
    """Every setting, under its section's heading, secrets masked: what ``config show`` prints."""
    lines = [f"Current configuration (env > file > defaults): {path}"
             + ("" if present else " (not present: the defaults)")]
    for name, section in config.public_dict().items():
        leaves = _leaves(section) if isinstance(section, Mapping) else [(name, section)]
        width = max(len(k) for k, _ in leaves) + 1
        lines += ["", _title(name)]
        lines += [f"  {k + ':':<{width}} {_display(v) if v not in ('', []) else '(none)'}" for k, v in leaves]
    return "\n".join(lines)


def config(args: argparse.Namespace) -> int:
    """Run one ``config`` subcommand."""
    what, rest = args.what, list(args.args)
    path = config_path()
    if what == "path":
        print(path)
    elif what == "show":
        current, present = load_current()
        as_json = getattr(args, "json", False)
        print(json.dumps(current.public_dict(), indent=2) if as_json else overview(current, path, present))
    elif what == "validate":
        # As the server loads it: a file PINCHTAB_CONFIG names must exist. The verdict is this
        # command's output (stdout); a bad file is exit 2, as every config error.
        try:
            load_config()
        except ConfigError as exc:
            print(f"Config file has an error: {path}\n  - {exc}")
            return 2
        print(f"Config file is valid: {path}" + ("" if path.exists() else " (not present: the defaults)"))
    elif what == "schema":
        if not args.print:
            print(SCHEMA_URL)
            return 0
        print(json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "$id": SCHEMA_URL,
                          "title": "pinchtab config", **json_schema(schema_for(Config)())}, indent=2))
    elif what == "init":
        if path.exists() and not args.force:
            print(f"Error: {path} exists (use --force to replace it)", file=sys.stderr)
            return 1
        # The defaults, not whatever config file HOME has: only HOME, for "~" in them.
        data = _load_from({}, {k: v for k, v in os.environ.items() if k == "HOME"}).to_dict()
        data["server"]["token"] = secrets.token_urlsafe(24)
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        write_config(path, data)
        print(f"Wrote {path}")
    elif what == "token":
        token = load_current()[0].server.token
        if not token:
            print("Error: server token is empty; create one with: pinchtab config init", file=sys.stderr)
            return 1
        print("Token copied to clipboard." if copy_to_clipboard(token) else
              "Clipboard unavailable; token not shown for safety (it is server.token in the config file).")
    elif what == "get":
        if len(rest) != 1:
            raise ConfigError("config get", "usage: pinchtab config get <section.key>")
        print(_display(_dig(load_current()[0].public_dict(), rest[0])))
    elif what == "set":
        if len(rest) != 2:
            raise ConfigError("config set", "usage: pinchtab config set <section.key> <value>")
        _known_key(rest[0])
        data = _read_file(path)
        _set(data, rest[0], _value_for(rest[0], rest[1]))
        written = write_config(path, data)
        print(f"Set {rest[0]} = {_display(_dig(written.public_dict(), rest[0]))}")
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
    current = load_current()[0].to_dict()["security"]
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
    # SUPPRESS, as the global --json: `pinchtab --json config show` must not be overwritten here.
    p.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                   help="show: the settings as JSON (secrets masked)")
    p.add_argument("--print", action="store_true", help="schema: print the JSON Schema, not its URL")
    p.set_defaults(run=config, command="config")
    p = sub.add_parser("security", help="show the capability gates; security up (all off) | down (main ones on)",
                       description="Show or flip the security.allow* capability gates in the config file.")
    p.add_argument("how", nargs="?", choices=("up", "down"))
    p.set_defaults(run=security, command="security")
