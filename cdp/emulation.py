"""What a tab pretends to be: viewport, position, network conditions, extra headers, HTTP credentials
and CSS media features.

Every function runs on the tab's worker. Each override lives in the tab's CDP sessions, so it
holds across navigations of that tab until changed, and other tabs are untouched. Frames of other
sites run in their own processes with their own sessions: position, network conditions, headers
and media are set there too (and on such frames that appear later); the viewport is the page's.
HTTP credentials answer the tab's own requests.
"""
from __future__ import annotations

import collections
import logging
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from .errors import CDPError

if TYPE_CHECKING:
    from .tab import Tab

log = logging.getLogger(__name__)

# Auth challenges answered per tab, remembered so a wrong password is tried once, not forever.
AUTH_ATTEMPTS_KEPT = 256
_OVERRIDES = "session_overrides"  # tab.state: method -> params, for every session of the tab


def _everywhere(tab: Tab, method: str, params: dict[str, Any]) -> None:
    """Apply an override to the tab's own session and its out-of-process iframes' sessions, and
    keep it for the iframes that attach later (``session_commands``)."""
    tab.state.setdefault(_OVERRIDES, {})[method] = params
    tab.call(method, params)
    for session_id in {f.session_id for f in tab.frames.values()} - {tab.session_id}:
        tab.send(method, params, session_id)  # an iframe may be gone meanwhile: not waited


def session_commands(tab: Tab) -> list[tuple[str, dict[str, Any]]]:
    """The overrides a new out-of-process iframe's session of the tab starts with."""
    return list(tab.state.get(_OVERRIDES, {}).items())


def set_viewport(tab: Tab, width: int, height: int, scale: float, mobile: bool) -> None:
    """The page's viewport in CSS px, its device pixel ratio (0: the screen's) and mobile mode."""
    tab.call("Emulation.setDeviceMetricsOverride",
             {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": mobile})


def set_geolocation(tab: Tab, latitude: float, longitude: float, accuracy: float) -> bool:
    """Where ``navigator.geolocation`` says the tab is. The page's origin may ask without a prompt
    (a headless browser has nobody to click "Allow"); only that origin, never the whole browser,
    which in extension mode is a person's own.

    Returns whether the origin got the permission. Chrome refuses it to an origin that is not
    secure (plain http on a host other than localhost), where a page cannot ask for its position
    anyway: the position is set all the same, as the original sets it (it grants nothing).
    """
    granted = False
    parts = urlsplit(tab.url)
    if parts.scheme in ("http", "https") and parts.netloc:
        fut = tab.conn.send("Browser.grantPermissions", {"permissions": ["geolocation"],
                                                         "origin": f"{parts.scheme}://{parts.netloc}"}, None)
        try:
            tab.wait_result(fut, "Browser.grantPermissions")
            granted = True
        except CDPError as exc:  # "Permission can't be granted in current context": not a secure origin
            log.debug("geolocation: no permission for %s://%s: %s", parts.scheme, parts.netloc, exc.cdp_message)
    _everywhere(tab, "Emulation.setGeolocationOverride",
                {"latitude": latitude, "longitude": longitude, "accuracy": accuracy})
    return granted


def set_network_conditions(tab: Tab, offline: bool, latency_ms: float = 0, download_bps: float = -1,
                           upload_bps: float = -1) -> None:
    """Offline (every request fails), or online with optional latency and throughput limits
    (-1 or 0: not limited)."""
    _everywhere(tab, "Network.emulateNetworkConditions", {
        "offline": offline, "latency": latency_ms,
        "downloadThroughput": download_bps if download_bps > 0 else -1,
        "uploadThroughput": upload_bps if upload_bps > 0 else -1,
    })


DEVICE = "device"  # tab.state: the device it was given (POST /fingerprint/rotate), for /stealth/status


def set_device(tab: Tab, fp: dict[str, Any], metadata: dict[str, Any]) -> None:
    """Make the tab look like the device ``fp`` (``human.stealth.device``) from now on, across its
    navigations: user agent, navigator.platform and Client Hints (``metadata``), Accept-Language
    and the locale, the viewport and screen, and the time zone when ``fp`` has one."""
    language = str(fp["language"])
    _everywhere(tab, "Emulation.setUserAgentOverride", {"userAgent": fp["userAgent"], "platform": fp["platform"],
                                                        "acceptLanguage": language, "userAgentMetadata": metadata})
    # Chrome keeps one locale and one zone override per page and refuses a second: cleared first.
    tab.call("Emulation.setLocaleOverride", {})
    tab.call("Emulation.setLocaleOverride", {"locale": language.replace("_", "-")})
    if fp.get("timezone"):
        tab.call("Emulation.setTimezoneOverride", {"timezoneId": ""})
        tab.call("Emulation.setTimezoneOverride", {"timezoneId": fp["timezone"]})
    width, height = int(fp["screenWidth"]), int(fp["screenHeight"])
    tab.call("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": 1,
                                                    "mobile": False, "screenWidth": width, "screenHeight": height})
    tab.state[DEVICE] = dict(fp)


def set_extra_headers(tab: Tab, headers: dict[str, str]) -> None:
    """Headers sent with every request of the tab from now on (an empty map: none)."""
    _everywhere(tab, "Network.setExtraHTTPHeaders", {"headers": headers})


def set_media_feature(tab: Tab, feature: str, value: str) -> None:
    """Emulate one CSS media feature (``media`` for the media type); an empty value stops it.

    Chrome takes the whole set at once, so the tab's set is kept and sent entire each time.
    """
    media: dict[str, str] = tab.state.setdefault("emulated_media", {})
    if value:
        media[feature] = value
    else:
        media.pop(feature, None)
    features = [{"name": k, "value": v} for k, v in media.items() if k != "media"]
    _everywhere(tab, "Emulation.setEmulatedMedia", {"media": media.get("media", ""), "features": features})


# --- HTTP credentials: answering Basic/Digest challenges ------------------------------------------
class _Authenticator:
    """Answers the tab's auth challenges with its credentials, through the Fetch domain.

    With handleAuthRequests every request pauses (Chrome reports challenges only for requests it
    paused): paused requests go on untouched (or as the tab's route rules say, when it has any),
    challenges get the credentials once per request;
    if the server asks again (a wrong password), the challenge is cancelled and the page shows the
    server's 401 rather than looping.
    """

    def __init__(self, tab: Tab) -> None:
        self.tab = tab
        self.credentials: tuple[str, str] | None = None
        self.tried: collections.OrderedDict[str, None] = collections.OrderedDict()
        tab.on("Fetch.requestPaused", self.handle_paused)
        tab.on("Fetch.authRequired", self.handle_auth)

    def handle_paused(self, session_id: str, p: dict[str, Any]) -> None:
        if self.credentials is None or session_id != self.tab.session_id or _routing(self.tab):
            return  # the tab's route rules or blocking (``cdp.intercept``) answer its paused requests
        self.tab.send("Fetch.continueRequest", {"requestId": p["requestId"]}, session_id)  # mid-pump: not waited

    def handle_auth(self, session_id: str, p: dict[str, Any]) -> None:
        if session_id != self.tab.session_id:
            return
        rid = p["requestId"]
        if self.credentials is None:
            answer: dict[str, Any] = {"response": "Default"}
        elif rid in self.tried:
            answer = {"response": "CancelAuth"}
        else:
            self.tried[rid] = None
            while len(self.tried) > AUTH_ATTEMPTS_KEPT:
                self.tried.popitem(last=False)
            answer = {"response": "ProvideCredentials", "username": self.credentials[0],
                      "password": self.credentials[1]}
        self.tab.send("Fetch.continueWithAuth", {"requestId": rid, "authChallengeResponse": answer}, session_id)


def _routing(tab: Tab) -> bool:
    """Whether the tab's interceptor (route rules, resource blocking) owns its paused requests."""
    intercept = getattr(tab, "intercept", None)
    return bool(intercept is not None and intercept.active)


def set_credentials(tab: Tab, username: str, password: str) -> None:
    """Answer the tab's HTTP auth challenges with ``username``/``password`` from now on."""
    auth: _Authenticator | None = tab.state.get("authenticator")
    if auth is None:
        auth = tab.state["authenticator"] = _Authenticator(tab)
    auth.credentials = (username, password)
    auth.tried.clear()
    tab.intercept.handle_auth = True  # route rules enabling Fetch later keep the challenges coming
    tab.call("Fetch.enable", {"handleAuthRequests": True, "patterns": [{"urlPattern": "*"}]})


def clear_credentials(tab: Tab) -> None:
    """Stop answering auth challenges (and stop pausing the tab's requests)."""
    auth: _Authenticator | None = tab.state.get("authenticator")
    if auth is not None:
        auth.credentials = None
    tab.intercept.handle_auth = False
    if _routing(tab):
        # Fetch stays on for the tab's route rules, as they enabled it: without auth handling.
        for method, params in tab.intercept.setup_commands():
            tab.call(method, params)
    else:
        tab.call("Fetch.disable")
