"""Stealth levels: launch flags, per-tab CDP commands and the injected script that hide automation.

Levels: ``off`` (nothing), ``light`` (the default: the automation flag, a real user agent and
the page-visible signals a headless browser gets wrong: chrome.runtime, the battery and network
information APIs, automation markers), ``medium`` (adds userAgentData, hardware figures and
same-origin iframes reached later), ``full`` (adds WebGL vendor and renderer, error stacks cleaned
of the injected script, a per-session noise on canvas and audio fingerprints, and userAgentData on
plain-http pages too, where Chrome has none but detection scripts expect it).

Pure apart from reading the packaged script's parts (once) and ``browser_product`` (which runs the browser
binary once to learn its version before launch).
"""
from __future__ import annotations

import functools
import hashlib
import json
import platform as _platform
import random
import re
import secrets
import subprocess
from collections.abc import Iterable, Mapping
from importlib import resources
from typing import Any

LEVELS = ("off", "light", "medium", "full")
DEFAULT_LEVEL = "light"
DEFAULT_WINDOW = (1920, 1080)  # a common desktop size; the screen reported matches it
LANGUAGES = ("en-US", "en")
HARDWARE_CONCURRENCY = 8
DEVICE_MEMORY = 8
WEBGL_VENDOR = "Google Inc. (Intel)"
WEBGL_RENDERER = "ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)"

# Per process: the key of the registry the script shares between frames and, at full, the name
# its stack frames carry so they can be cut out. Random so that pages cannot look it up.
TOKEN = secrets.token_hex(8)

_UA_PLATFORMS = {  # the platform part of Chrome's reduced user agent
    "Linux": "X11; Linux x86_64",
    "Windows": "Windows NT 10.0; Win64; x64",
    "macOS": "Macintosh; Intel Mac OS X 10_15_7",
}

SETUP_METHODS = ("Emulation.setUserAgentOverride", "Emulation.setDeviceMetricsOverride",
                 "Page.addScriptToEvaluateOnNewDocument")

PATCHES = {
    "light": ("navigator.webdriver", "window.chrome", "navigator.plugins", "navigator.mimeTypes",
              "navigator.languages", "navigator.permissions.query", "window.outerWidth", "window.outerHeight",
              "screen", "Function.prototype.toString", "navigator.connection", "navigator.getBattery",
              "window.cdc_*"),
    "medium": ("navigator.userAgentData", "navigator.hardwareConcurrency", "navigator.deviceMemory",
               "HTMLIFrameElement.contentWindow"),
    "full": ("WebGLRenderingContext.getParameter", "Error.stack", "HTMLCanvasElement.toDataURL",
             "CanvasRenderingContext2D.getImageData", "AudioBuffer.getChannelData"),
}
# The same patches in the original's vocabulary (GET /stealth/status ``patchIds``).
PATCH_IDS = {
    "light": ("marker-cleanup", "webdriver-native-baseline", "plugins", "languages", "platform", "downlink-max",
              "permissions", "screen", "battery", "chrome-runtime", "chrome-app", "function-to-string"),
    "medium": ("user-agent-data", "hardware", "iframe-isolation"),
    "full": ("webgl", "error-stack", "canvas-noise", "audio-noise"),
}
# What each level gives a page, under the original's capability names (false: not done here).
_CAPABILITY_LEVEL = {
    "webdriverNotTrue": 1, "webdriverNativeStrategy": 1, "batteryAPIBaseline": 1, "pluginArray": 1,
    "workerUserAgentConsistency": 1, "chromeRuntimeConnect": 1, "chromeRuntimeSendMessage": 1, "chromeApp": 1,
    "functionToStringMasked": 1, "downlinkMax": 1, "userAgentData": 2, "iframeIsolation": 2,
    "errorStackSanitized": 3, "webglSpoofing": 3, "canvasNoise": 3, "audioNoise": 3,
    "workerHardwareConsistency": 0, "videoCodecs": 0, "maxTouchPoints": 0, "systemColorFix": 0,
    "transparentPixelCanvasNoise": 0, "webrtcMitigation": 0,
}
# What holds at every level (the original reports them too): Function.prototype.toString reads as
# the native one, Intl's locale follows navigator.language, Error.prepareStackTrace is untouched, no
# own properties on navigator, userAgentData's versions match the user agent's.
_CAPABILITY_ALWAYS = ("functionToStringNative", "intlLocaleCoherent", "errorPrepareStackTraceNative",
                      "navigatorOverridesAbsent", "userAgentDataVersionCoherent")
# What a level above the default risks (the original's names): medium changes APIs pages can
# check for consistency; full also changes what canvas, audio and WebGL draw.
TRADEOFFS = ("api-realism-risk", "graphics-and-media-breakage-risk")
DOWNLINK_MAX_FLAG = "--enable-network-information-downlink-max"
# Per process, like TOKEN: the noise of canvas and audio reads differs between sessions.
NOISE_SEED = int(TOKEN[:8], 16)


def rank(level: str) -> int:
    """0 for off up to 3 for full; raises ValueError for an unknown level."""
    try:
        return LEVELS.index(level)
    except ValueError:
        raise ValueError(f"unknown stealth level {level!r}; one of {', '.join(LEVELS)}") from None


def patches(level: str) -> list[str]:
    """What the script patches (where needed) at ``level``."""
    r = rank(level)
    return [p for lv in LEVELS[1:r + 1] for p in PATCHES[lv]]


# --- versions and user agents ----------------------------------------------------------------------
def _version_of(version: str | Mapping[str, Any]) -> tuple[str, str]:
    """(user agent, full version) from Browser.getVersion's answer, a user agent or a product."""
    if isinstance(version, Mapping):
        ua, product = str(version.get("userAgent", "")), str(version.get("product", ""))
    elif version.startswith("Mozilla/"):
        ua, product = version, ""
    else:
        ua, product = "", version
    m = re.search(r"(?:Headless)?Chrome/([\d.]+)", product) or re.search(r"(?:Headless)?Chrome/([\d.]+)", ua)
    return ua, (m.group(1) if m else "")


def full_version(version: str | Mapping[str, Any]) -> str:
    """"156.0.8078.79" from ``{"product": "Chrome/156.0.8078.79", ...}`` (or a product or user agent)."""
    return _version_of(version)[1]


def ua_for(version: str | Mapping[str, Any], platform: str = "Linux") -> str:
    """The browser's user agent without "Headless".

    ``version``: what Browser.getVersion returns (its userAgent is kept, with ``HeadlessChrome``
    replaced by ``Chrome``), a user agent string, or a product such as "Chrome/156.0.8078.79"
    (then Chrome's reduced user agent for ``platform`` is built: major version only).
    """
    ua, full = _version_of(version)
    if ua:
        return ua.replace("HeadlessChrome/", "Chrome/").replace("Headless", "")
    major = full.split(".")[0] if full else ""
    if not major:
        raise ValueError(f"no Chrome version in {version!r}")
    return (f"Mozilla/5.0 ({_UA_PLATFORMS.get(platform, _UA_PLATFORMS['Linux'])}) AppleWebKit/537.36 "
            f"(KHTML, like Gecko) Chrome/{major}.0.0.0 Safari/537.36")


def grease_brand(major: int) -> tuple[str, str, str]:
    """Chromium's "not a brand" entry for a major version: (brand, version, full version).

    The same seeded choice Chromium makes, so our brand list matches the real browser's.
    """
    chars = [" ", "(", ":", "-", ".", "/", ")", ";", "=", "?", "_"]
    versions = ["8", "99", "24"]
    brand = f"Not{chars[major % len(chars)]}A{chars[(major + 1) % len(chars)]}Brand"
    v = versions[major % len(versions)]
    return brand, v, f"{v}.0.0.0"


def _machine() -> tuple[str, str, str]:
    """(userAgentData architecture, bitness, navigator.platform) for this machine."""
    m = _platform.machine().lower()
    if m in ("aarch64", "arm64"):
        return "arm", "64", "Linux aarch64"
    if m.startswith("arm"):
        return "arm", "32", "Linux armv7l"
    return "x86", "64", "Linux x86_64"


def ua_metadata(version: str | Mapping[str, Any], platform: str = "Linux") -> dict[str, Any]:
    """Emulation.setUserAgentOverride's ``userAgentMetadata``, matching the real browser."""
    full = full_version(version) or "0.0.0.0"
    major = int(full.split(".")[0] or 0)
    g_brand, g_version, g_full = grease_brand(major)
    brands = [{"brand": g_brand, "version": g_version}, {"brand": "Chromium", "version": str(major)}]
    fulls = [{"brand": g_brand, "version": g_full}, {"brand": "Chromium", "version": full}]
    if major % 2:  # Chromium orders the list by a seeded permutation too
        brands.reverse()
        fulls.reverse()
    arch, bitness, _nav = _machine()
    return {"brands": brands, "fullVersionList": fulls, "fullVersion": full, "platform": platform,
            # Chrome on Linux reports no platform version (the kernel's is not exposed).
            "platformVersion": "", "architecture": arch,
            "model": "", "mobile": False, "bitness": bitness, "wow64": False}


@functools.lru_cache(maxsize=8)
def browser_product(binary: str) -> str:
    """"Chrome/156.0.8078.79" from ``<binary> --version``, or "" if it cannot be learned.

    For the ``--user-agent`` launch flag, which must be known before the browser runs.
    """
    try:
        out = subprocess.run([binary, "--version"], capture_output=True, text=True, timeout=15).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
    m = re.search(r"(\d+\.\d+\.\d+\.\d+)", out)
    return f"Chrome/{m.group(1)}" if m else ""


# --- what the bridge wires in --------------------------------------------------------------------------
def launch_flags(level: str, *, product: str = "", window: tuple[int, int] = DEFAULT_WINDOW,
                 platform: str = "Linux") -> list[str]:
    """Chrome flags for ``level``: no automation flag, a desktop window, navigator.connection's
    downlinkMax (desktop Chrome reports it), a user agent without "Headless" (when ``product``,
    e.g. from ``browser_product``, tells the version).

    The per-tab override (``setup_commands``) sets the user agent of pages either way; the flag
    also covers what no tab setup reaches (service workers, pages opened before attaching).
    """
    if rank(level) == 0:
        return []
    flags = ["--disable-blink-features=AutomationControlled", f"--window-size={window[0]},{window[1]}",
             DOWNLINK_MAX_FLAG]
    if product:
        flags.append(f"--user-agent={ua_for(product, platform)}")
    return flags


# Figures a rotated persona draws from (POST /fingerprint/rotate): common desktop values, none of
# them the defaults above, so that a rotation always shows.
PERSONA_CORES = (4, 6, 12, 16)
PERSONA_MEMORY = (2, 4)
PERSONA_WEBGL = (  # Linux drivers, as the user agent says Linux
    ("Google Inc. (NVIDIA Corporation)", "ANGLE (NVIDIA Corporation, NVIDIA GeForce GTX 1650/PCIe/SSE2, OpenGL 4.5.0)"),
    ("Google Inc. (AMD)", "ANGLE (AMD, AMD Radeon RX 580 Series (radeonsi, polaris10, LLVM 15.0.7), OpenGL 4.6)"),
    ("Google Inc. (Intel)", "ANGLE (Intel, Mesa Intel(R) Xe Graphics (TGL GT2), OpenGL 4.6)"),
)


def persona(seed: int | None = None) -> dict[str, Any]:
    """The device a page sees (the script's figures and noise seed): the defaults without a seed,
    else a choice made by ``seed``. Hardware figures show from medium, WebGL from full."""
    if seed is None:
        return {"seed": NOISE_SEED, "hardwareConcurrency": HARDWARE_CONCURRENCY, "deviceMemory": DEVICE_MEMORY,
                "webglVendor": WEBGL_VENDOR, "webglRenderer": WEBGL_RENDERER}
    rng = random.Random(seed)
    vendor, renderer = rng.choice(PERSONA_WEBGL)
    return {"seed": seed, "hardwareConcurrency": rng.choice(PERSONA_CORES),
            "deviceMemory": rng.choice(PERSONA_MEMORY), "webglVendor": vendor, "webglRenderer": renderer}


def script_config(level: str, version: str | Mapping[str, Any], *, window: tuple[int, int] = DEFAULT_WINDOW,
                  languages: Iterable[str] = LANGUAGES, platform: str = "Linux",
                  force: Iterable[str] = (), persona: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The values the injected script uses (kept consistent with the user agent override);
    ``persona`` (see ``persona``) replaces the default device figures and noise seed."""
    meta = ua_metadata(version, platform)
    return {**_script_values(level, meta, window, languages, platform, force), **(persona or {})}


def _script_values(level: str, meta: Mapping[str, Any], window: tuple[int, int], languages: Iterable[str],
                   platform: str, force: Iterable[str]) -> dict[str, Any]:
    return {
        "level": level, "token": TOKEN, "languages": list(languages), "screen": list(window),
        "brands": meta["brands"], "fullVersionList": meta["fullVersionList"], "platform": platform,
        "platformVersion": meta["platformVersion"], "architecture": meta["architecture"],
        "bitness": meta["bitness"], "uaFullVersion": meta["fullVersion"],
        "hardwareConcurrency": HARDWARE_CONCURRENCY, "deviceMemory": DEVICE_MEMORY,
        "webglVendor": WEBGL_VENDOR, "webglRenderer": WEBGL_RENDERER, "force": list(force), "seed": NOISE_SEED,
    }


# The injected script's parts, in the order they run (stealth_core.js first: the helpers the
# others use). Each file is one function expression taking the shared object S; each parses alone.
SCRIPT_PARTS = ("stealth_core.js", "stealth_chrome.js", "stealth_navigator.js", "stealth_window.js",
                "stealth_webgl.js", "stealth_noise.js")
# The frame around them: one closure, so S (the configuration and the parts' helpers) is no global
# and the page cannot reach it; the configuration is the closure's argument, at the end.
_SCRIPT_HEAD = """(function (cfg) {
  'use strict';
  if (!cfg || !cfg.level || cfg.level === 'off') return;
  const S = {__proto__: null, cfg};
"""
_SCRIPT_TAIL = "  S.attempt(() => S.install(window));\n})("


@functools.cache
def _script_frame() -> tuple[str, str]:
    """The composed script before and after its configuration (read once per process)."""
    parts = (resources.files("human").joinpath(name).read_text(encoding="utf-8").strip() for name in SCRIPT_PARTS)
    return _SCRIPT_HEAD + "".join(f"{part}(S);\n" for part in parts) + _SCRIPT_TAIL, ");\n"


def script_source(level: str, version: str | Mapping[str, Any], **config: Any) -> str:
    """The injected script: its parts (SCRIPT_PARTS) composed, with the configuration filled in
    ("" at off)."""
    if rank(level) == 0:
        return ""
    cfg = json.dumps(script_config(level, version, **config), separators=(",", ":"))
    head, tail = _script_frame()
    text = head + cfg + tail
    if rank(level) >= 3:
        # Named frames, so that error stacks can be cleaned of them (the script does at full).
        text += f"\n//# sourceURL={TOKEN}\n"
    return text


def setup_commands(level: str, version: Mapping[str, Any], *, window: tuple[int, int] = DEFAULT_WINDOW,
                   languages: Iterable[str] = LANGUAGES, user_agent: str = "", platform: str = "Linux",
                   force: Iterable[str] = (), frame: bool = False,
                   persona: Mapping[str, Any] | None = None) -> list[tuple[str, dict[str, Any]]]:
    """CDP commands for a session's setup at ``level`` (none at off).

    ``version``: Browser.getVersion's answer. ``user_agent``: a configured user agent to send
    instead of the browser's own (its metadata still describes the real browser). ``force``:
    script patches to apply even where the browser looks right (tests of the fallbacks).
    ``frame``: for an out-of-process iframe's session, which needs the user agent and the script
    too but refuses the screen override (top-level targets only; the script then fixes the
    screen it reports).
    """
    if rank(level) == 0:
        return []
    langs = list(languages)
    _arch, _bits, nav_platform = _machine()
    commands: list[tuple[str, dict[str, Any]]] = [
        ("Emulation.setUserAgentOverride", {
            "userAgent": user_agent or ua_for(version, platform),
            # Chrome adds the q-values to the header itself; navigator.languages gets this list.
            "acceptLanguage": ",".join(langs),
            "platform": nav_platform if platform == "Linux" else "",
            "userAgentMetadata": ua_metadata(version, platform),
        }),
        ("Page.addScriptToEvaluateOnNewDocument", {
            "source": script_source(level, version, window=window, languages=langs, platform=platform, force=force,
                                    persona=persona),
            "runImmediately": True,
        }),
    ]
    if not frame:
        # Only the screen: width/height 0 leave the viewport to the window. Headless reports an
        # 800x600 screen under a larger window otherwise.
        commands.insert(1, ("Emulation.setDeviceMetricsOverride", {
            "width": 0, "height": 0, "deviceScaleFactor": 0, "mobile": False,
            "screenWidth": window[0], "screenHeight": window[1],
        }))
    return commands


def capabilities(level: str) -> dict[str, bool]:
    """What ``level`` gives a page, under the original's capability names."""
    r = rank(level)
    return {**{name: bool(at) and r >= at for name, at in _CAPABILITY_LEVEL.items()},
            **dict.fromkeys(_CAPABILITY_ALWAYS, True)}


def script_hash(level: str, version: str | Mapping[str, Any]) -> str:
    """``sha256:<hex>`` of the script tabs get at ``level`` ("" at off): two bridges with the same
    hash inject the same thing."""
    source = script_source(level, version)
    return "sha256:" + hashlib.sha256(source.encode()).hexdigest() if source else ""


def status(level: str, version: Mapping[str, Any] | None = None, *, product: str = "",
           window: tuple[int, int] = DEFAULT_WINDOW, headless: bool = True, attached: bool = False,
           user_agent: str = "") -> dict[str, Any]:
    """The answer of ``GET /stealth/status``: the original's fields (level, scriptHash, patchIds,
    flags and capabilities as booleans, ...) and ours (the launch flags, the patched APIs).

    A browser we launched got its user agent as a launch flag (``flags.globalUserAgent``), which
    needs its version (``product``, else the one in ``version``); an attached one got none.
    ``user_agent``: the configured one (instanceDefaults.userAgent), pinned for every tab as well.
    """
    r = rank(level)
    ua = ""
    if r and (version or product):
        ua = ua_for(version or product)
    if not attached and not product and version:
        product = str(version.get("product", ""))
    flags = launch_flags(level, product="" if attached else product, window=window)
    return {
        "level": level,
        "levels": list(LEVELS),
        "headless": headless,
        "launchMode": "attached" if attached else "allocator",
        "scriptHash": script_hash(level, version or product or {}) if r else "",
        "webdriverMode": "native_baseline" if r else "off",
        "patchIds": [p for lv in LEVELS[1:r + 1] for p in PATCH_IDS[lv]],
        "flags": {
            "automationControlledDisabled": "--disable-blink-features=AutomationControlled" in flags,
            "enableAutomationFalse": False,
            "globalUserAgent": bool(user_agent) or any(f.startswith("--user-agent=") for f in flags),
            "headlessNew": headless,
            "downlinkMaxFlag": DOWNLINK_MAX_FLAG in flags,
        },
        "capabilities": capabilities(level),
        "tradeoffs": list(TRADEOFFS[:r - 1]) if r > 1 else [],
        "tabOverrides": {"fingerprintRotateActive": False},
        "launchFlags": flags,
        "patches": patches(level),
        "commands": list(SETUP_METHODS) if r else [],
        "userAgent": ua,
        "window": f"{window[0]}x{window[1]}" if r else "",
    }


# --- a tab's device (POST /fingerprint/rotate with the original's fields) -----------------------------
DEVICE_OSES = ("windows", "mac", "linux")
# The user agents a Chromium can honestly wear on each system (its engine, its APIs).
DEVICE_BROWSERS = {"windows": ("chrome", "edge"), "mac": ("chrome",), "linux": ("chrome",)}
DEVICE_SCREENS = ((1920, 1080), (1366, 768), (1536, 864), (1440, 900), (1280, 720), (1600, 900), (2560, 1440))
_DEVICE_SYSTEMS = {  # navigator.platform, userAgentData platform and platformVersion
    "windows": ("Win32", "Windows", "10.0.0"),
    "mac": ("MacIntel", "macOS", "10.15.7"),
    "linux": ("Linux x86_64", "Linux", ""),
}
_DEVICE_UA = {"windows": "Windows", "mac": "macOS", "linux": "Linux"}
# The original's table: UTC offset in minutes (as Date.getTimezoneOffset's sign is not) -> a zone.
TIMEZONES = {-480: "America/Los_Angeles", -420: "America/Denver", -360: "America/Chicago",
             -300: "America/New_York", -240: "America/Halifax", 0: "UTC", 60: "Europe/Berlin",
             120: "Europe/Helsinki", 330: "Asia/Kolkata", 480: "Asia/Shanghai", 540: "Asia/Tokyo"}


def device(version: str | Mapping[str, Any], *, os: str = "", browser: str = "chrome", screen: str = "",
           language: str = "", timezone: int | None = None, rng: random.Random | None = None) -> dict[str, Any]:
    """A device for one tab to look like (the original's fingerprint): its user agent and
    navigator.platform for ``os`` (windows, mac, linux or random; "" keeps this machine's), the
    screen (``"1366x768"``, ``"random"``; "" 1920x1080), the language (default en-US) and, when
    ``timezone`` (an offset in minutes, one of TIMEZONES) is given, the time zone.

    Raises ValueError for a browser the system cannot have or an unknown offset.
    """
    rng = rng or random.Random(secrets.randbits(64))
    system = os
    if system == "random":  # as the original draws: mostly Windows (always, for Edge)
        system = "windows" if browser == "edge" or rng.random() < 0.7 else "mac"
    if browser not in DEVICE_BROWSERS.get(system or "linux", ()):
        raise ValueError(f"browser {browser!r} is not one a {system or 'Linux'} Chromium can be: "
                         f"{', '.join(DEVICE_BROWSERS.get(system or 'linux', ()))}")
    full = full_version(version)
    major = full.split(".")[0] if full else ""
    if system:
        ua = ua_for(f"Chrome/{major}.0.0.0", _DEVICE_UA[system])
        if browser == "edge":
            ua += f" Edg/{major}.0.0.0"
        nav_platform, ua_platform, ua_platform_version = _DEVICE_SYSTEMS[system]
    else:
        ua = ua_for(version)
        nav_platform, ua_platform, ua_platform_version = _machine()[2], "Linux", ""
    if screen == "random":
        width, height = rng.choice(DEVICE_SCREENS)
    elif screen:
        width, height = (int(n) for n in screen.lower().split("x", 1))
    else:
        width, height = DEFAULT_WINDOW
    if timezone is not None and timezone not in TIMEZONES:
        raise ValueError(f"timezone {timezone} is not an offset this server knows; one of "
                         f"{', '.join(str(k) for k in sorted(TIMEZONES))} (minutes from UTC)")
    fp: dict[str, Any] = {"os": system or "linux", "browser": browser, "userAgent": ua, "platform": nav_platform,
                          "vendor": "Google Inc.", "screenWidth": width, "screenHeight": height,
                          "language": language or "en-US", "uaPlatform": ua_platform,
                          "uaPlatformVersion": ua_platform_version}
    if timezone is not None:
        fp.update(timezoneOffset=timezone, timezone=TIMEZONES[timezone])
    return fp


def device_metadata(fp: Mapping[str, Any], version: str | Mapping[str, Any]) -> dict[str, Any]:
    """The userAgentData (Client Hints) that go with the device ``fp``: the browser's brands (Edge's
    added), the device's platform."""
    meta = ua_metadata(version, str(fp["uaPlatform"]))
    meta["platformVersion"] = fp["uaPlatformVersion"]
    if fp["browser"] == "edge":
        major = (full_version(version) or "0").split(".")[0]
        meta["brands"] = [*meta["brands"], {"brand": "Microsoft Edge", "version": major}]
        meta["fullVersionList"] = [*meta["fullVersionList"], {"brand": "Microsoft Edge",
                                                              "version": meta["fullVersion"]}]
    return meta
