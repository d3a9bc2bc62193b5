"""Pinchtab configuration: every setting declared once, loaded from defaults, file, environment and
command line into an immutable :class:`Config`.

- :mod:`.settings`: the sections and their settings (frozen dataclasses, snake_case attributes);
- :mod:`.declare`: how a section dataclass becomes a marshmallow schema (camelCase keys);
- :mod:`.sources`: reading the file, the environment and overrides, merging, :func:`load_config`;
- :mod:`.checks`: validators for values; :mod:`.errors`: :class:`ConfigError`.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .errors import ConfigError
from .location import CONFIG_ENV, DEFAULT_CONFIG_PATH, config_path

if TYPE_CHECKING:
    from .settings import (
        ActivityConfig,
        AttachConfig,
        BrowserConfig,
        Config,
        InstanceDefaultsConfig,
        MultiInstanceConfig,
        ObservabilityConfig,
        ProfilesConfig,
        RestartConfig,
        SecurityConfig,
        ServerConfig,
        TimeoutsConfig,
        is_loopback,
    )
    from .sources import load_config

__all__ = [
    "CONFIG_ENV", "DEFAULT_CONFIG_PATH", "ActivityConfig", "AttachConfig", "BrowserConfig", "Config", "ConfigError",
    "InstanceDefaultsConfig", "MultiInstanceConfig", "ObservabilityConfig", "ProfilesConfig", "RestartConfig",
    "SecurityConfig", "ServerConfig", "TimeoutsConfig", "config_path", "is_loopback",
    "load_config",
]


def __getattr__(name: str) -> Any:
    """The schemas' names (settings, :func:`load_config`), imported on first use: marshmallow and
    every section cost a client that needs only :class:`ConfigError` or the file's place more than
    its whole call."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import settings, sources

    value = getattr(settings, name) if hasattr(settings, name) else getattr(sources, name)
    globals()[name] = value
    return value
