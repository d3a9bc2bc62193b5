"""Where the config file is, and ``~`` against a given HOME: standard library only, so a client that
needs just the file's place (a CLI verb, reading the server's port) does not load the schemas."""
from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = ["CONFIG_ENV", "DEFAULT_CONFIG_PATH", "config_path", "expand_user"]

#: The environment variable that names the config file.
CONFIG_ENV = "PINCHTAB_CONFIG"
#: Where the config file is looked for when ``$PINCHTAB_CONFIG`` is not set.
DEFAULT_CONFIG_PATH = "~/.pinchtab/config.json"


def config_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the config file is: the one ``$PINCHTAB_CONFIG`` names, else ``~/.pinchtab/config.json``
    (``~`` is ``env``'s HOME; ``env`` defaults to ``os.environ``). The one place that says so: the
    loader, the server's config editor and the command line all ask here."""
    env = os.environ if env is None else env
    return Path(expand_user(env.get(CONFIG_ENV) or DEFAULT_CONFIG_PATH, env.get("HOME") or None))


def expand_user(value: str, home: str | None) -> str:
    """``os.path.expanduser`` against ``home`` when given, else against the process's HOME."""
    if home and (value == "~" or value.startswith("~/") or value.startswith("~" + os.sep)):
        return home + value[1:]
    return os.path.expanduser(value)
