"""Pinchtab configuration: defaults, JSON file, environment and command line.

Sources, in increasing precedence:

1. built-in defaults (the ``load_default`` of every schema field below);
2. the JSON file named by ``$PINCHTAB_CONFIG``, or ``~/.pinchtab/config.json``;
3. environment overrides (``PINCHTAB_TOKEN``, ``PINCHTAB_PORT``, ...);
4. command-line overrides, given as dotted keys (``{"server.port": 9999}``).

Everything is merged into one raw, camelCase nested dict (the shape of the
original PinchTab's ``config.json``) and validated once by marshmallow, so a
value from the environment or the command line passes exactly the same checks
as one from the file. The result is an immutable :class:`Config` made of frozen
dataclasses with snake_case attributes.

Config files written for the original PinchTab carry many keys this port does
not use yet; unknown keys and sections are therefore logged and ignored, never
rejected.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from profiles.errors import InvalidProfileName
from profiles.names import validate_name

from marshmallow import (
    EXCLUDE,
    Schema,
    ValidationError,
    fields,
    post_load,
    pre_load,
    validate,
    validates_schema,
)

__all__ = [
    "DEFAULT_CONFIG_PATH",
    "ActivityConfig",
    "AttachConfig",
    "BrowserConfig",
    "Config",
    "ConfigError",
    "InstanceDefaultsConfig",
    "MultiInstanceConfig",
    "ObservabilityConfig",
    "ProfilesConfig",
    "RestartConfig",
    "SecurityConfig",
    "ServerConfig",
    "TimeoutsConfig",
    "is_loopback",
    "load_config",
]

logger = logging.getLogger(__name__)

#: Where the config file is looked for when ``$PINCHTAB_CONFIG`` is not set.
DEFAULT_CONFIG_PATH = "~/.pinchtab/config.json"

_MIB = 1024 * 1024
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_REDACTED = "***"


# --------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------


class ConfigError(Exception):
    """A configuration problem, pointing at where it came from.

    ``key`` is the dotted config key (``server.port``), the environment
    variable that supplied the bad value (``PINCHTAB_PORT``), or the path of a
    config file that could not be read or parsed. ``reason`` says what is
    wrong. ``str(error)`` is ``"<key>: <reason>"``.
    """

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(f"{key}: {reason}")
        self.key = key
        self.reason = reason

    def __str__(self) -> str:
        return f"{self.key}: {self.reason}"

    def __reduce__(self) -> tuple[type[ConfigError], tuple[str, str]]:
        # The default reduce would call ConfigError(message) and fail; keep the
        # error picklable so it survives a trip through multiprocessing.
        return (type(self), (self.key, self.reason))


# --------------------------------------------------------------------------
# The immutable result
# --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """``server``: the HTTP listener and where state lives."""

    port: int
    bind: str
    # repr=False: a dataclass repr lands in logs and tracebacks too easily.
    token: str = field(repr=False)
    state_dir: Path
    max_body_bytes: int


@dataclass(frozen=True, slots=True, kw_only=True)
class BrowserConfig:
    """``browser``: which Chromium to launch, or which one to attach to."""

    binary: str
    extra_flags: tuple[str, ...]
    # repr=False: remote CDP endpoints often carry an access token in the URL.
    cdp_url: str = field(repr=False)
    version: str


@dataclass(frozen=True, slots=True, kw_only=True)
class InstanceDefaultsConfig:
    """``instanceDefaults``: settings a new browser instance starts with."""

    mode: str
    max_tabs: int
    humanize: bool
    stealth_level: str
    dialog_auto_accept: bool
    user_agent: str
    profile: str

    @property
    def headless(self) -> bool:
        """True when instances run without a visible window."""
        return self.mode == "headless"


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachConfig:
    """``security.attach``: whether and where an external browser may be attached."""

    enabled: bool
    allow_hosts: tuple[str, ...]
    allow_schemes: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SecurityConfig:
    """``security``: the capability switches and size limits."""

    allow_evaluate: bool
    allow_cookies: bool
    allow_download: bool
    allow_upload: bool
    allow_state_export: bool
    allow_file_scheme: bool
    allowed_domains: tuple[str, ...]
    download_allowed_domains: tuple[str, ...]
    download_max_bytes: int
    upload_max_request_bytes: int
    upload_max_files: int
    upload_max_file_bytes: int
    upload_max_total_bytes: int
    enable_action_guards: bool
    attach: AttachConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfilesConfig:
    """``profiles``: where browser profiles live (always resolved to a path)."""

    base_dir: Path
    default_profile: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RestartConfig:
    """``multiInstance.restart``: crash-restart backoff for child instances."""

    max_restarts: int
    init_backoff_sec: int
    max_backoff_sec: int
    stable_after_sec: int


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiInstanceConfig:
    """``multiInstance``: how child instances are started and which ports they get."""

    strategy: str
    instance_port_start: int
    instance_port_end: int
    restart: RestartConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeoutsConfig:
    """``timeouts``: per-operation time limits."""

    action_sec: int
    navigate_sec: int
    shutdown_sec: int
    wait_nav_ms: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ActivityConfig:
    """``observability.activity``: the activity log."""

    enabled: bool
    retention_days: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ObservabilityConfig:
    """``observability``: logging of what agents did."""

    activity: ActivityConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The whole validated configuration; build it with :func:`load_config`."""

    server: ServerConfig
    browser: BrowserConfig
    instance_defaults: InstanceDefaultsConfig
    security: SecurityConfig
    profiles: ProfilesConfig
    multi_instance: MultiInstanceConfig
    timeouts: TimeoutsConfig
    observability: ObservabilityConfig

    def to_dict(self) -> dict[str, Any]:
        """Return the camelCase nested dict, token included.

        The output is plain JSON data and loads back into an equal Config,
        so it can be written out as a child instance's config file.
        """
        dumped: dict[str, Any] = _ConfigSchema().dump(self)
        return dumped

    def public_dict(self) -> dict[str, Any]:
        """Return :meth:`to_dict` with secrets masked, safe for logs and diagnostics."""
        data = self.to_dict()
        if data["server"]["token"]:
            data["server"]["token"] = _REDACTED
        data["browser"]["cdpUrl"] = _redact_url(data["browser"]["cdpUrl"])
        return data


# --------------------------------------------------------------------------
# Field types and validators
# --------------------------------------------------------------------------


class _Int(fields.Integer):
    """An integer that also accepts numeric strings (env vars, CLI), never bools or 1.5.

    marshmallow's non-strict Integer would silently truncate 1.5 to 1; a
    silently different port or limit is worse than an error.
    """

    def _validated(self, value: Any) -> int:
        if isinstance(value, float) and not value.is_integer():
            raise self.make_error("invalid")
        result: int = super()._validated(value)
        return result


def _positive(**kwargs: Any) -> _Int:
    return _Int(validate=validate.Range(min=1), **kwargs)


def _port(**kwargs: Any) -> _Int:
    return _Int(validate=validate.Range(min=1, max=65535), **kwargs)


def _strings(default: tuple[str, ...], item: fields.String | None = None, **kwargs: Any) -> fields.List:
    # A callable default: a shared list object would leak mutations between loads.
    return fields.List(item or fields.String(), load_default=lambda: list(default), **kwargs)


_non_empty = validate.Length(min=1)

def _validate_profile_name(value: str) -> None:
    """The profile store's own rule (one safe path component), so a name the config accepts is
    one the store accepts."""
    if value:
        try:
            validate_name(value)
        except InvalidProfileName as exc:
            raise ValidationError(str(exc)) from None


def _validate_no_whitespace(value: str) -> None:
    if not value or any(ch.isspace() for ch in value):
        raise ValidationError("must be a non-empty value without whitespace")


def _validate_header_value(value: str) -> None:
    # The user agent ends up in an HTTP header; CR/LF would allow header injection.
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        raise ValidationError("must not contain control characters")


def _validate_cdp_url(value: str) -> None:
    if not value:
        return
    parts = urlsplit(value)
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https", "ws", "wss"):
        shown = f"'{scheme}'" if scheme else "none"
        raise ValidationError(f"must be an http(s):// or ws(s):// URL (scheme: {shown})")
    if not parts.netloc:
        raise ValidationError("must include a host")


# Chromium accepts switches with "--", "-" (and "/" on Windows) and matches the
# name only, so normalise before comparing or "-user-data-dir=x" would slip by.
_FORBIDDEN_FLAG_PREFIXES: tuple[tuple[str, str], ...] = (
    # Covers --remote-debugging-port as well as -pipe/-address: Pinchtab owns
    # the DevTools endpoint, and a second or exposed one is a remote-control hole.
    ("remote-debugging-", "Pinchtab manages the DevTools endpoint itself"),
    ("user-data-dir", "the profile directory is chosen through profiles/instanceDefaults.profile"),
)
_FORBIDDEN_FLAGS: dict[str, str] = {
    "disable-web-security": "it disables the same-origin policy for every page the agent visits",
}


def _validate_extra_flag(value: str) -> None:
    stripped = value.strip()
    if not stripped.startswith("-"):
        # Chromium treats a bare argument as a URL to open, not as a setting.
        raise ValidationError("must be a command-line switch starting with '--'")
    name = stripped.lstrip("-").split("=", 1)[0].lower()
    for prefix, why in _FORBIDDEN_FLAG_PREFIXES:
        if name.startswith(prefix):
            raise ValidationError(f"--{name} is not allowed: {why}")
    if name in _FORBIDDEN_FLAGS:
        raise ValidationError(f"--{name} is not allowed: {_FORBIDDEN_FLAGS[name]}")


# --------------------------------------------------------------------------
# Schemas (private: the public surface is load_config and the dataclasses)
# --------------------------------------------------------------------------


class _SectionSchema(Schema):
    """Base for every section: ignore unknown keys, default absent sub-sections."""

    class Meta:
        # Unknown keys are reported as warnings by _warn_unknown before loading;
        # the schema itself must just drop them.
        unknown = EXCLUDE

    @pre_load
    def _fill_missing_sections(self, data: Any, **kwargs: Any) -> Any:
        # A Nested field's load_default is returned without being loaded, so an
        # absent section would come back as a raw dict; loading {} instead runs
        # the sub-schema and yields its dataclass with all defaults.
        if not isinstance(data, Mapping):
            return data
        filled = dict(data)
        for name, fld in self.fields.items():
            if isinstance(fld, fields.Nested):
                filled.setdefault(fld.data_key or name, {})
        return filled


class _ServerSchema(_SectionSchema):
    port = _port(load_default=9867)
    bind = fields.String(load_default="127.0.0.1", validate=_validate_no_whitespace)
    token = fields.String(load_default="")
    # Kept as a string here; the root schema expands it (it knows $HOME).
    state_dir = fields.String(data_key="stateDir", load_default="~/.pinchtab", validate=_non_empty)
    max_body_bytes = _positive(data_key="maxBodyBytes", load_default=10 * _MIB)


class _BrowserSchema(_SectionSchema):
    binary = fields.String(load_default="")
    extra_flags = _strings((), fields.String(validate=_validate_extra_flag), data_key="extraFlags")
    cdp_url = fields.String(data_key="cdpUrl", load_default="", validate=_validate_cdp_url)
    version = fields.String(load_default="")

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> BrowserConfig:
        return BrowserConfig(**{**data, "extra_flags": tuple(data["extra_flags"])})


class _InstanceDefaultsSchema(_SectionSchema):
    mode = fields.String(load_default="headless", validate=validate.OneOf(("headless", "headed")))
    max_tabs = _positive(data_key="maxTabs", load_default=20)
    humanize = fields.Boolean(load_default=False)
    stealth_level = fields.String(
        data_key="stealthLevel",
        load_default="light",
        validate=validate.OneOf(("off", "light", "medium", "full")),
    )
    dialog_auto_accept = fields.Boolean(data_key="dialogAutoAccept", load_default=False)
    user_agent = fields.String(data_key="userAgent", load_default="", validate=_validate_header_value)
    profile = fields.String(load_default="", validate=_validate_profile_name)

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> InstanceDefaultsConfig:
        return InstanceDefaultsConfig(**data)


class _AttachSchema(_SectionSchema):
    enabled = fields.Boolean(load_default=False)
    allow_hosts = _strings(
        _LOOPBACK_HOSTS, fields.String(validate=_validate_no_whitespace), data_key="allowHosts"
    )
    allow_schemes = _strings(
        ("ws", "wss", "http", "https"),
        fields.String(validate=validate.OneOf(("ws", "wss", "http", "https"))),
        data_key="allowSchemes",
    )

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> AttachConfig:
        return AttachConfig(
            enabled=data["enabled"],
            allow_hosts=tuple(data["allow_hosts"]),
            allow_schemes=tuple(data["allow_schemes"]),
        )


class _SecuritySchema(_SectionSchema):
    # Every capability that lets an agent reach beyond the page is off by default.
    allow_evaluate = fields.Boolean(data_key="allowEvaluate", load_default=False)
    allow_cookies = fields.Boolean(data_key="allowCookies", load_default=False)
    allow_download = fields.Boolean(data_key="allowDownload", load_default=False)
    allow_upload = fields.Boolean(data_key="allowUpload", load_default=False)
    allow_state_export = fields.Boolean(data_key="allowStateExport", load_default=False)
    allow_file_scheme = fields.Boolean(data_key="allowFileScheme", load_default=False)
    allowed_domains = _strings(
        _LOOPBACK_HOSTS, fields.String(validate=_validate_no_whitespace), data_key="allowedDomains"
    )
    download_allowed_domains = _strings(
        (), fields.String(validate=_validate_no_whitespace), data_key="downloadAllowedDomains"
    )
    download_max_bytes = _positive(data_key="downloadMaxBytes", load_default=20 * _MIB)
    upload_max_request_bytes = _positive(data_key="uploadMaxRequestBytes", load_default=10 * _MIB)
    upload_max_files = _positive(data_key="uploadMaxFiles", load_default=8)
    upload_max_file_bytes = _positive(data_key="uploadMaxFileBytes", load_default=5 * _MIB)
    upload_max_total_bytes = _positive(data_key="uploadMaxTotalBytes", load_default=10 * _MIB)
    enable_action_guards = fields.Boolean(data_key="enableActionGuards", load_default=True)
    attach = fields.Nested(_AttachSchema)

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> SecurityConfig:
        return SecurityConfig(
            **{
                **data,
                "allowed_domains": tuple(data["allowed_domains"]),
                "download_allowed_domains": tuple(data["download_allowed_domains"]),
            }
        )


class _ProfilesSchema(_SectionSchema):
    # "" means "<stateDir>/profiles"; resolved by the root schema, which sees both.
    base_dir = fields.String(data_key="baseDir", load_default="")
    default_profile = fields.String(
        data_key="defaultProfile",
        load_default="default",
        validate=validate.And(_non_empty, _validate_profile_name),
    )


class _RestartSchema(_SectionSchema):
    max_restarts = _Int(data_key="maxRestarts", load_default=20, validate=validate.Range(min=0))
    init_backoff_sec = _positive(data_key="initBackoffSec", load_default=2)
    max_backoff_sec = _positive(data_key="maxBackoffSec", load_default=60)
    stable_after_sec = _positive(data_key="stableAfterSec", load_default=300)

    @validates_schema
    def _check_backoff(self, data: dict[str, Any], **kwargs: Any) -> None:
        if data["max_backoff_sec"] < data["init_backoff_sec"]:
            raise ValidationError(
                f"must be >= initBackoffSec ({data['max_backoff_sec']} < {data['init_backoff_sec']})",
                field_name="maxBackoffSec",
            )

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> RestartConfig:
        return RestartConfig(**data)


class _MultiInstanceSchema(_SectionSchema):
    strategy = fields.String(
        load_default="always-on",
        validate=validate.OneOf(("always-on", "simple", "explicit", "no-instance")),
    )
    instance_port_start = _port(data_key="instancePortStart", load_default=9868)
    instance_port_end = _port(data_key="instancePortEnd", load_default=9968)
    restart = fields.Nested(_RestartSchema)

    @validates_schema
    def _check_port_range(self, data: dict[str, Any], **kwargs: Any) -> None:
        start, end = data["instance_port_start"], data["instance_port_end"]
        if start > end:
            raise ValidationError(
                f"must not exceed instancePortEnd ({start} > {end})", field_name="instancePortStart"
            )

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> MultiInstanceConfig:
        return MultiInstanceConfig(**data)


class _TimeoutsSchema(_SectionSchema):
    action_sec = _positive(data_key="actionSec", load_default=30)
    navigate_sec = _positive(data_key="navigateSec", load_default=60)
    shutdown_sec = _positive(data_key="shutdownSec", load_default=10)
    wait_nav_ms = _positive(data_key="waitNavMs", load_default=1000)

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> TimeoutsConfig:
        return TimeoutsConfig(**data)


class _ActivitySchema(_SectionSchema):
    enabled = fields.Boolean(load_default=True)
    retention_days = _positive(data_key="retentionDays", load_default=30)

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> ActivityConfig:
        return ActivityConfig(**data)


class _ObservabilitySchema(_SectionSchema):
    activity = fields.Nested(_ActivitySchema)

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> ObservabilityConfig:
        return ObservabilityConfig(**data)


class _ConfigSchema(_SectionSchema):
    """The whole file; builds :class:`Config` and resolves the cross-section paths."""

    # Server and profiles load as plain dicts (no post_load of their own):
    # their paths depend on $HOME and on each other, which only this level knows.
    server = fields.Nested(_ServerSchema)
    browser = fields.Nested(_BrowserSchema)
    instance_defaults = fields.Nested(_InstanceDefaultsSchema, data_key="instanceDefaults")
    security = fields.Nested(_SecuritySchema)
    profiles = fields.Nested(_ProfilesSchema)
    multi_instance = fields.Nested(_MultiInstanceSchema, data_key="multiInstance")
    timeouts = fields.Nested(_TimeoutsSchema)
    observability = fields.Nested(_ObservabilitySchema)

    def __init__(self, *, home: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        # The HOME of the environment being loaded, so "~" follows an explicit
        # env mapping rather than whatever process happens to run the load.
        self._home = home

    @post_load
    def _build(self, data: dict[str, Any], **kwargs: Any) -> Config:
        server_raw: dict[str, Any] = data["server"]
        state_dir = _expand_path(server_raw["state_dir"], self._home)
        server = ServerConfig(**{**server_raw, "state_dir": state_dir})

        profiles_raw: dict[str, Any] = data["profiles"]
        base_dir = (
            _expand_path(profiles_raw["base_dir"], self._home)
            if profiles_raw["base_dir"]
            else state_dir / "profiles"
        )
        profiles = ProfilesConfig(base_dir=base_dir, default_profile=profiles_raw["default_profile"])

        return Config(
            server=server,
            browser=data["browser"],
            instance_defaults=data["instance_defaults"],
            security=data["security"],
            profiles=profiles,
            multi_instance=data["multi_instance"],
            timeouts=data["timeouts"],
            observability=data["observability"],
        )


# --------------------------------------------------------------------------
# Loading
# --------------------------------------------------------------------------

_Path = tuple[str, ...]

# (config key path, environment variables in priority order)
_ENV_OVERRIDES: tuple[tuple[_Path, tuple[str, ...]], ...] = (
    (("server", "token"), ("PINCHTAB_TOKEN", "BRIDGE_TOKEN")),
    (("server", "port"), ("PINCHTAB_PORT", "BRIDGE_PORT")),
    (("server", "bind"), ("PINCHTAB_BIND", "BRIDGE_BIND")),
    (("server", "stateDir"), ("PINCHTAB_STATE_DIR", "BRIDGE_STATE_DIR")),
    (("browser", "binary"), ("CHROME_BIN", "CHROME_BINARY")),
    (("browser", "cdpUrl"), ("CDP_URL",)),
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

    raw = _read_config_file(env, home)
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
        config: Config = _ConfigSchema(home=home).load(raw)
    except ValidationError as exc:
        where, message = _first_error(exc.messages)
        dotted = _format_path(where)
        var = _source_of(where, sources)
        if var is not None:
            raise ConfigError(var, f"{message} (sets {dotted})") from None
        raise ConfigError(dotted, message) from None
    return config


def _read_config_file(env: Mapping[str, str], home: str | None) -> dict[str, Any]:
    """Return the config file's top-level object, or {} when the default file is absent."""
    named = env.get("PINCHTAB_CONFIG")
    path = Path(_expand_user(named or DEFAULT_CONFIG_PATH, home))
    try:
        # utf-8-sig: editors on Windows like to prepend a BOM, which json rejects.
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        if named:
            # Naming a file explicitly and silently getting defaults would hide typos.
            raise ConfigError("PINCHTAB_CONFIG", f"config file not found: {path}") from None
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
    _warn_unknown(_ConfigSchema(), data, (), str(path))
    return data


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
    schema: Schema = _ConfigSchema()
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
    for name, fld in schema.fields.items():
        if (fld.data_key or name) == key:
            return fld
    return None


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


def _expand_user(value: str, home: str | None) -> str:
    if home and (value == "~" or value.startswith("~/") or value.startswith("~" + os.sep)):
        return home + value[1:]
    return os.path.expanduser(value)


def _expand_path(value: str, home: str | None) -> Path:
    # Absolute, so the path still means the same thing when written into a
    # child instance's config file and read from another working directory.
    return Path(os.path.abspath(_expand_user(value, home)))


def _redact_url(url: str) -> str:
    """Mask the password and query values of a URL (remote CDP endpoints put tokens there)."""
    if not url:
        return url
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", f":{_REDACTED}@", 1)
    query = parts.query
    if query:
        query = urlencode([(k, _REDACTED) for k, _ in parse_qsl(query, keep_blank_values=True)], safe="*")
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def is_loopback(bind: str) -> bool:
    """True if ``bind`` only accepts local connections (127.0.0.0/8, ::1, "localhost").

    An empty string or 0.0.0.0 means "every interface" and is not loopback.
    """
    host = bind.strip().lower()
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    if host in ("localhost", "localhost."):
        return True
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped.is_loopback
    return addr.is_loopback
