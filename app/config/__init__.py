"""Pinchtab configuration: every setting declared once, loaded from defaults, file, environment and
command line into an immutable :class:`Config`.

- :mod:`.settings`: the sections and their settings (frozen dataclasses, snake_case attributes);
- :mod:`.declare`: how a section dataclass becomes a marshmallow schema (camelCase keys);
- :mod:`.sources`: reading the file, the environment and overrides, merging, :func:`load_config`;
- :mod:`.checks`: validators for values; :mod:`.errors`: :class:`ConfigError`.
"""
from __future__ import annotations

from .errors import ConfigError
from .settings import (ActivityConfig, AttachConfig, BrowserConfig, Config, InstanceDefaultsConfig, MultiInstanceConfig,
                       ObservabilityConfig, ProfilesConfig, RestartConfig, SecurityConfig, ServerConfig, TimeoutsConfig,
                       is_loopback)
from .sources import DEFAULT_CONFIG_PATH, load_config

__all__ = [
    "DEFAULT_CONFIG_PATH", "ActivityConfig", "AttachConfig", "BrowserConfig", "Config", "ConfigError",
    "InstanceDefaultsConfig", "MultiInstanceConfig", "ObservabilityConfig", "ProfilesConfig", "RestartConfig",
    "SecurityConfig", "ServerConfig", "TimeoutsConfig", "is_loopback", "load_config",
]
