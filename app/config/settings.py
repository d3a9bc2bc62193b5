"""Every setting, declared once: a frozen dataclass per section of ``config.json``.

Each attribute is the snake_case of its camelCase key in the file (``maxBodyBytes`` ->
``max_body_bytes``) and carries the marshmallow field that loads it, with its checks and default
(see :mod:`app.config.declare`). :func:`app.config.load_config` builds a :class:`Config`.
"""
from __future__ import annotations

import dataclasses
import ipaddress
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from marshmallow import ValidationError, fields, validate

from profiles.redact import MASK, scrub_url

from . import checks
from .declare import HomePath, Int, Sections, Strings, schema_for, setting

_MIB = 1024 * 1024
_LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_SCHEMES = ("ws", "wss", "http", "https")


def _positive() -> Int:
    return Int(validate=validate.Range(min=1))


def _port() -> Int:
    return Int(validate=validate.Range(min=1, max=65535))


def _hosts() -> Strings:
    return Strings(fields.String(validate=checks.no_whitespace))


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerConfig:
    """``server``: the HTTP listener and where state lives."""

    port: int = setting(_port(), 9867)
    bind: str = setting(fields.String(validate=checks.no_whitespace), "127.0.0.1")
    token: str = setting(fields.String(), "", secret=True)
    # Who may call, as the web sees it (app.access.web_origin): Host names beyond IP addresses and localhost
    # (the name a team's nginx or DNS sends; "*.example.com" for its subdomains), and page origins
    # beyond the server's own that may send requests (a page on another origin is refused).
    allowed_hosts: tuple[str, ...] = setting(_hosts(), ())
    allowed_origins: tuple[str, ...] = setting(Strings(fields.String(validate=checks.web_origin)), ())
    state_dir: Path = setting(HomePath(), "~/.pinchtab")
    max_body_bytes: int = setting(_positive(), 10 * _MIB)
    # A client gets this long to send a request's head, and then its body: a slow or stalled one is
    # disconnected (its bytes are gathered off the request threads, which it never holds).
    header_timeout_sec: int = setting(_positive(), 10)
    body_timeout_sec: int = setting(_positive(), 30)
    # Network capture, per tab from its creation: a ring of this many requests; response bodies
    # are kept only when asked for, and only up to the byte cap each.
    network_buffer_size: int = setting(Int(validate=validate.Range(min=1, max=10000)), 100)
    retain_network_bodies: bool = setting(fields.Boolean(), False)
    retain_network_body_max_bytes: int = setting(_positive(), 256 * 1024)
    # Behind a reverse proxy: believe the X-Forwarded-For (the client address rate limits key on) and
    # X-Forwarded-Proto (https: the login cookie is Secure) it adds, when the direct peer is one of
    # gunicorn's forwarded_allow_ips (FORWARDED_ALLOW_IPS, default this machine). Off: every forwarded
    # header is ignored, whoever sent it. PUT /api/config switches it live.
    trust_proxy_headers: bool = setting(fields.Boolean(), False)
    # The login cookie's Secure flag: true always (and a login over plain http is refused), false
    # never, null (the default) when the request came over https.
    cookie_secure: bool | None = setting(fields.Boolean(allow_none=True), None)


@dataclass(frozen=True, slots=True, kw_only=True)
class BrowserConfig:
    """``browser``: which Chromium to launch, or which one to attach to."""

    binary: str = setting(fields.String(), "")
    extra_flags: tuple[str, ...] = setting(Strings(fields.String(validate=checks.extra_flag)), ())
    # Secret: remote CDP endpoints often carry an access token in the URL.
    cdp_url: str = setting(fields.String(validate=checks.cdp_url), "", secret=True)
    version: str = setting(fields.String(), "")
    # Unpacked extensions loaded into the browser we launch (folders holding a manifest.json).
    extension_paths: tuple[Path, ...] = setting(Strings(HomePath(validate=checks.extension_dir)), ())


ENGINES = ("chrome", "cloak", "ghost-chrome")
PROVIDER_KINDS = ("local", "cdp", "webdriver")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProviderConfig:
    """One entry of ``browsers.providers``: where server mode's instances may get their browser.

    ``local`` launches it here (what a config without providers means); ``cdp`` leases from an
    endpoint that gives a fresh browser per connection (``ws(s)://...``, Browserless and cloud
    services) or one browser's debugging address (``http(s)://...``); ``webdriver`` opens a W3C
    WebDriver session (Selenium Grid, Moon, chromedriver) with ``capabilities``. ``${NAME}`` in
    ``url`` and ``headers`` is the server's environment variable NAME, read when the provider is
    used, so a token can live in a secret rather than in this file.
    """

    name: str = setting(fields.String(validate=checks.profile_name), "local")
    kind: str = setting(fields.String(validate=validate.OneOf(PROVIDER_KINDS)), "local")
    capacity: int = setting(Int(validate=validate.Range(min=1, max=100_000)), 10)
    url: str = setting(fields.String(validate=checks.provider_url), "", secret=True)
    capabilities: dict[str, Any] = setting(fields.Dict(keys=fields.String()), {})
    headers: dict[str, str] = setting(fields.Dict(keys=fields.String(validate=checks.no_whitespace),
                                                  values=fields.String(validate=checks.header_value)), {},
                                      secret=True)

    def __post_init__(self) -> None:
        if self.kind == "local" and self.url:
            raise ValidationError("a local provider launches its browsers here: it takes no url", field_name="url")
        if self.kind != "local" and not self.url:
            raise ValidationError(f"a {self.kind} provider needs the engine's url", field_name="url")
        if self.kind == "webdriver" and urlsplit(self.url).scheme not in ("http", "https"):
            raise ValidationError("a WebDriver endpoint is an http(s):// URL", field_name="url")


@dataclass(frozen=True, slots=True, kw_only=True)
class BrowsersConfig:
    """``browsers``: the browser engines requests may name (``browser`` on navigate and actions).

    Only Chromium exists here; the original's other engine names are known, so naming one is
    "not configured" (409), not "unknown" (400).
    """

    default: str = setting(fields.String(validate=validate.OneOf(ENGINES)), "chrome")
    available: tuple[str, ...] = setting(Strings(fields.String(validate=validate.OneOf(ENGINES))), ("chrome",))
    # Server mode: where instances' browsers come from (none listed: this machine, as always).
    providers: tuple[ProviderConfig, ...] = setting(Sections(ProviderConfig), ())

    def __post_init__(self) -> None:
        names = [p.name for p in self.providers]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            raise ValidationError(f"provider names must differ: {', '.join(twice)}", field_name="providers")

    @property
    def fleet(self) -> tuple[ProviderConfig, ...]:
        """The providers in use: those listed, or this machine alone."""
        return self.providers or (LOCAL_PROVIDER,)


@dataclass(frozen=True, slots=True, kw_only=True)
class TabPolicyConfig:
    """``instanceDefaults.tabPolicy``: what happens to tabs nobody uses."""

    lifecycle: str = setting(fields.String(validate=validate.OneOf(("keep", "close_idle"))), "keep")
    close_delay_sec: int = setting(_positive(), 300)
    restore: bool = setting(fields.Boolean(), False)   # reopen the last tabs when the browser restarts


@dataclass(frozen=True, slots=True, kw_only=True)
class InstanceDefaultsConfig:
    """``instanceDefaults``: settings a new browser instance starts with."""

    mode: str = setting(fields.String(validate=validate.OneOf(("headless", "headed"))), "headless")
    max_tabs: int = setting(_positive(), 20)
    humanize: bool = setting(fields.Boolean(), False)
    stealth_level: str = setting(fields.String(validate=validate.OneOf(("off", "light", "medium", "full"))), "light")
    dialog_auto_accept: bool = setting(fields.Boolean(), False)
    user_agent: str = setting(fields.String(validate=checks.header_value), "")
    profile: str = setting(fields.String(validate=checks.profile_name), "")
    provider: str = setting(fields.String(), "")   # server mode: the browsers.providers entry to use
    no_restore: bool = setting(fields.Boolean(), False)
    timezone: str = setting(fields.String(validate=checks.timezone), "")   # IANA name, e.g. Europe/Paris
    block_images: bool = setting(fields.Boolean(), False)
    block_media: bool = setting(fields.Boolean(), False)
    block_ads: bool = setting(fields.Boolean(), False)
    no_animations: bool = setting(fields.Boolean(), False)
    max_parallel_tabs: int = setting(Int(validate=validate.Range(min=0, max=64)), 0)   # 0: automatic
    tab_eviction_policy: str = setting(
        fields.String(validate=validate.OneOf(("close_lru", "close_oldest", "reject"))), "close_lru"
    )
    tab_policy: TabPolicyConfig

    @property
    def headless(self) -> bool:
        """True when instances run without a visible window."""
        return self.mode == "headless"


@dataclass(frozen=True, slots=True, kw_only=True)
class AttachConfig:
    """``security.attach``: whether and where an external browser may be attached."""

    enabled: bool = setting(fields.Boolean(), False)
    allow_hosts: tuple[str, ...] = setting(_hosts(), _LOOPBACK_HOSTS)
    allow_schemes: tuple[str, ...] = setting(Strings(fields.String(validate=validate.OneOf(_SCHEMES))), _SCHEMES)


@dataclass(frozen=True, slots=True, kw_only=True)
class IdpiConfig:
    """``security.idpi``: the defence against indirect prompt injection (text in pages aimed at agents)."""

    enabled: bool = setting(fields.Boolean(), True)
    strict_mode: bool = setting(fields.Boolean(), False)
    scan_content: bool = setting(fields.Boolean(), True)
    wrap_content: bool = setting(fields.Boolean(), False)
    custom_patterns: tuple[str, ...] = setting(Strings(fields.String(validate=validate.Length(min=1))), ())
    scan_timeout_sec: int = setting(Int(validate=validate.Range(min=1, max=60)), 5)
    shield_threshold: int = setting(Int(validate=validate.Range(min=0, max=100)), 30)


@dataclass(frozen=True, slots=True, kw_only=True)
class SecurityConfig:
    """``security``: the capability switches and size limits.

    Every capability that lets an agent reach beyond the page is off by default.
    """

    allow_evaluate: bool = setting(fields.Boolean(), False)
    allow_cookies: bool = setting(fields.Boolean(), False)
    allow_download: bool = setting(fields.Boolean(), False)
    allow_upload: bool = setting(fields.Boolean(), False)
    allow_state_export: bool = setting(fields.Boolean(), False)
    allow_file_scheme: bool = setting(fields.Boolean(), False)
    allow_macro: bool = setting(fields.Boolean(), False)
    allow_screencast: bool = setting(fields.Boolean(), False)
    allow_clipboard: bool = setting(fields.Boolean(), False)
    allow_network_intercept: bool = setting(fields.Boolean(), False)
    # AES-256-GCM key for saved state written with encrypt:true (PINCHTAB_STATE_KEY overrides).
    state_encryption_key: str = setting(fields.String(), "", secret=True)
    # Where navigation may go (IDPI): "*" (the default) anywhere; a list is enforced with idpi.strictMode
    # and only warned about without it.
    allowed_domains: tuple[str, ...] = setting(_hosts(), ("*",))
    download_allowed_domains: tuple[str, ...] = setting(_hosts(), ())
    download_max_bytes: int = setting(_positive(), 20 * _MIB)
    upload_max_request_bytes: int = setting(_positive(), 10 * _MIB)
    upload_max_files: int = setting(_positive(), 8)
    upload_max_file_bytes: int = setting(_positive(), 5 * _MIB)
    upload_max_total_bytes: int = setting(_positive(), 10 * _MIB)
    enable_action_guards: bool = setting(fields.Boolean(), True)
    attach: AttachConfig
    idpi: IdpiConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class ProfilesConfig:
    """``profiles``: where browser profiles live."""

    # Empty (the default) means "<stateDir>/profiles": Config resolves it, as only it sees both.
    base_dir: Path = setting(HomePath(empty_means_unset=True), "")
    default_profile: str = setting(
        fields.String(validate=validate.And(validate.Length(min=1), checks.profile_name)), "default"
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RestartConfig:
    """``multiInstance.restart``: crash-restart backoff for child instances."""

    max_restarts: int = setting(Int(validate=validate.Range(min=0)), 20)
    init_backoff_sec: int = setting(_positive(), 2)
    max_backoff_sec: int = setting(_positive(), 60)
    stable_after_sec: int = setting(_positive(), 300)

    def __post_init__(self) -> None:
        if self.max_backoff_sec < self.init_backoff_sec:
            raise ValidationError(
                f"must be >= initBackoffSec ({self.max_backoff_sec} < {self.init_backoff_sec})",
                field_name="maxBackoffSec",
            )


@dataclass(frozen=True, slots=True, kw_only=True)
class MultiInstanceConfig:
    """``multiInstance``: how child instances are started and which ports they get."""

    strategy: str = setting(
        fields.String(validate=validate.OneOf(("always-on", "simple", "simple-autorestart", "explicit",
                                                "no-instance"))), "always-on"
    )
    allocation_policy: str = setting(fields.String(validate=validate.OneOf(("fcfs", "round_robin", "random"))),
                                     "fcfs")
    instance_port_start: int = setting(_port(), 9868)
    instance_port_end: int = setting(_port(), 9968)
    restart: RestartConfig

    def __post_init__(self) -> None:
        start, end = self.instance_port_start, self.instance_port_end
        if start > end:
            raise ValidationError(f"must not exceed instancePortEnd ({start} > {end})", field_name="instancePortStart")


@dataclass(frozen=True, slots=True, kw_only=True)
class TimeoutsConfig:
    """``timeouts``: per-operation time limits."""

    action_sec: int = setting(_positive(), 30)
    navigate_sec: int = setting(_positive(), 60)
    shutdown_sec: int = setting(_positive(), 10)
    wait_nav_ms: int = setting(_positive(), 1000)


@dataclass(frozen=True, slots=True, kw_only=True)
class ActivityConfig:
    """``observability.activity``: the activity log."""

    enabled: bool = setting(fields.Boolean(), True)
    retention_days: int = setting(_positive(), 30)


@dataclass(frozen=True, slots=True, kw_only=True)
class ObservabilityConfig:
    """``observability``: logging of what agents did."""

    activity: ActivityConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class DebugConfig:
    """``debug``: live telemetry sessions (the debug bridge)."""

    # Page origins beyond loopback ones (a dev server on localhost:*) that may join a session as an
    # app, e.g. "https://staging.example.com"; the session id is still what admits it.
    allowed_origins: tuple[str, ...] = setting(Strings(fields.String(validate=checks.no_whitespace)), ())
    # WebSockets and event streams each hold a request thread: at most this many at once, so
    # ordinary requests always find one (the bridge and server serve 32 at a time). App sockets may
    # take only three quarters of them: the rest stay free for agents and streams.
    max_connections: int = setting(Int(validate=validate.Range(min=1, max=24)), 16)
    max_frame_bytes: int = setting(_positive(), 8 * _MIB)   # a bigger frame closes the socket (1009)
    # What a session's record of recent messages (for /events and its resumes) may hold, and each
    # peer's outbox (or two frames of maxFrameBytes, if more); the oldest messages go first. A frame
    # bigger than this is passed on live only.
    max_session_bytes: int = setting(Int(validate=validate.Range(min=64 * 1024)), 16 * _MIB)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExtensionConfig:
    """``extension``: the polling daemon that a browser extension takes commands from."""

    # Extension ids (Chrome's 32 letters a-p) whose requests /poll and /response accept; empty: any
    # chrome-extension:// origin (web pages are refused either way).
    allowed_ids: tuple[str, ...] = setting(
        Strings(fields.String(validate=validate.Regexp(r"^[a-p]{32}$", error="not a Chrome extension id "
                                                                               "(32 letters a-p)"))), ())
    command_timeout_sec: int = setting(_positive(), 30)
    # How long a command nobody has polled yet stays queued; 0 (the default): commandTimeoutSec.
    queue_ttl_sec: int = setting(Int(validate=validate.Range(min=0)), 0)

    def __post_init__(self) -> None:
        if self.queue_ttl_sec == 0:
            # Frozen: set the derived default the way dataclasses' own __init__ does.
            object.__setattr__(self, "queue_ttl_sec", self.command_timeout_sec)


@dataclass(frozen=True, slots=True, kw_only=True)
class SchedulerConfig:
    """``scheduler``: the server's bounded task queue (``/tasks``), fair between agents."""

    enabled: bool = setting(fields.Boolean(), False)
    # The original's one strategy, and ours: agents take turns, each agent's tasks in order.
    strategy: str = setting(fields.String(validate=validate.OneOf(("fair-fifo",))), "fair-fifo")
    max_queue_size: int = setting(_positive(), 1000)
    max_per_agent: int = setting(_positive(), 100)
    workers: int = setting(Int(validate=validate.Range(min=1, max=64)), 4)
    max_batch_size: int = setting(Int(validate=validate.Range(min=1, max=1000)), 50)   # POST /tasks/batch
    # How long a finished task's answer stays readable (GET /tasks/{id}); at most 1000 are kept either way.
    result_ttl_sec: int = setting(_positive(), 300, key="resultTTLSec")


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentSessionsConfig:
    """``sessions.agent``: revocable tokens that stand for one agent (``Authorization: Session``)."""

    enabled: bool = setting(fields.Boolean(), True)
    # "off" is enabled=false by another name. The original's "required" is refused: the bearer token
    # and dashboard logins would still authenticate, so it could not mean what it says.
    mode: str = setting(fields.String(validate=validate.OneOf(
        ("off", "preferred"), error="must be off or preferred (required is not supported: the bearer token and "
                                    "dashboard logins would still authenticate)")), "preferred")
    idle_timeout_sec: int = setting(_positive(), 1800)
    max_lifetime_sec: int = setting(_positive(), 86400)

    @property
    def on(self) -> bool:
        return self.enabled and self.mode != "off"


@dataclass(frozen=True, slots=True, kw_only=True)
class DashboardLoginsConfig:
    """``sessions.dashboard``: the cookie a browser gets for typing the token on the login page."""

    idle_timeout_sec: int = setting(_positive(), 12 * 3600)
    max_lifetime_sec: int = setting(_positive(), 7 * 24 * 3600)
    # How long after typing the token a login may make the changes that matter most (the config,
    # a shutdown, agent sessions).
    elevation_window_sec: int = setting(_positive(), 300)
    # The original's switch: when true, a login must also have typed the token within the window to
    # change the config or shut down; off, only the changes that widen what callers may do need it.
    require_elevation: bool = setting(fields.Boolean(), False)


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionsConfig:
    """``sessions``: agent sessions and dashboard logins."""

    agent: AgentSessionsConfig
    dashboard: DashboardLoginsConfig


@dataclass(frozen=True, slots=True, kw_only=True)
class Config:
    """The whole validated configuration; build it with :func:`app.config.load_config`."""

    server: ServerConfig
    browser: BrowserConfig
    browsers: BrowsersConfig
    instance_defaults: InstanceDefaultsConfig
    security: SecurityConfig
    profiles: ProfilesConfig
    multi_instance: MultiInstanceConfig
    timeouts: TimeoutsConfig
    observability: ObservabilityConfig
    debug: DebugConfig
    extension: ExtensionConfig
    scheduler: SchedulerConfig
    sessions: SessionsConfig

    def __post_init__(self) -> None:
        wanted = self.instance_defaults.provider
        if wanted and wanted not in {p.name for p in self.browsers.fleet}:
            raise ValidationError({"provider": [f"no provider named {wanted!r} in browsers.providers"]},
                                  field_name="instanceDefaults")
        if self.profiles.base_dir is None:
            # Frozen: set the derived default the way dataclasses' own __init__ does.
            resolved = dataclasses.replace(self.profiles, base_dir=self.server.state_dir / "profiles")
            object.__setattr__(self, "profiles", resolved)

    def to_dict(self) -> dict[str, Any]:
        """Return the camelCase nested dict, token included.

        The output is plain JSON data and loads back into an equal Config,
        so it can be written out as a child instance's config file.
        """
        dumped: dict[str, Any] = schema_for(Config)().dump(self)
        return dumped

    def public_dict(self) -> dict[str, Any]:
        """Return :meth:`to_dict` with secrets masked, safe for logs and diagnostics."""
        data = self.to_dict()
        if data["server"]["token"]:
            data["server"]["token"] = MASK
        if data["security"]["stateEncryptionKey"]:
            data["security"]["stateEncryptionKey"] = MASK
        data["browser"]["cdpUrl"] = scrub_url(data["browser"]["cdpUrl"], mask_every_value=True)
        for provider in data["browsers"]["providers"]:
            provider["url"] = scrub_url(provider["url"], mask_every_value=True)
            provider["headers"] = {name: MASK for name in provider["headers"]}
        return data


# No providers listed: this machine, with no limit beyond the instance ports (as before providers).
LOCAL_PROVIDER: ProviderConfig = schema_for(ProviderConfig)().load({"capacity": 100_000})


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
