"""The web-origin policy as a pure function: which Host, Origin and Sec-Fetch-Site a browser sends
on a hostile page's behalf, and which real clients still get through."""
from __future__ import annotations

from typing import Any

import pytest

from app.access import web_origin as wo

POLICY = wo.Policy()
OURS = "127.0.0.1:9867"


def refused(policy: wo.Policy = POLICY, **headers: Any) -> str | None:
    headers.setdefault("host", OURS)
    headers.setdefault("origin", None)
    headers.setdefault("fetch_site", None)
    answer = wo.refusal(policy, **headers)
    return answer.code if answer else None


@pytest.mark.parametrize("host", ["127.0.0.1:9867", "127.0.0.1", "[::1]:9867", "localhost:9867", "LOCALHOST",
                                  "app.localhost:3000", "10.1.2.3:80", "[::ffff:127.0.0.1]:1", None, ""])
def test_ip_addresses_and_local_names_are_our_hosts(host: str | None) -> None:
    assert refused(host=host) is None


@pytest.mark.parametrize("host", ["evil.example:9867", "evil.example", "127.0.0.1.nip.io:9867", "localhost.evil.com",
                                  "0x7f.1.example", "a b", "[::1", "x:99999", "::1:9867"])
def test_any_other_name_is_a_rebinding_host(host: str) -> None:
    assert refused(host=host) == "host_not_allowed"


def test_configured_names_and_their_subdomains_are_hosts() -> None:
    policy = wo.Policy(allowed_hosts=("pinchtab.team.internal", "*.corp.example"))
    assert refused(policy, host="pinchtab.team.internal") is None
    assert refused(policy, host="PinchTab.Team.Internal:8080") is None
    assert refused(policy, host="a.corp.example") is None
    assert refused(policy, host="corp.example") == "host_not_allowed"
    assert refused(policy, host="evilcorp.example") == "host_not_allowed"


@pytest.mark.parametrize("fetch_site", [None, "none", "same-origin"])
def test_clients_without_an_origin_pass(fetch_site: str | None) -> None:
    # curl, Python, the CLI, MCP: no Origin; a typed URL or a bookmark: Sec-Fetch-Site none.
    assert refused(fetch_site=fetch_site) is None


@pytest.mark.parametrize("fetch_site", ["cross-site", "same-site", "Cross-Site"])
def test_an_img_or_no_cors_get_from_another_site_is_refused(fetch_site: str) -> None:
    assert refused(fetch_site=fetch_site) == "origin_not_allowed"


@pytest.mark.parametrize("origin", ["http://127.0.0.1:9867", "https://127.0.0.1:9867", "http://127.0.0.1:9867/"])
def test_our_own_origin_passes(origin: str) -> None:
    assert refused(origin=origin, fetch_site="same-origin") is None


@pytest.mark.parametrize("origin", ["http://127.0.0.1:8000", "http://localhost:9867", "http://evil.example",
                                    "null", "file://", "http://127.0.0.1:9867.evil.example", "chrome-extension://abc",
                                    "http://user@127.0.0.1:9867", "garbage"])
def test_any_other_origin_is_refused_whatever_the_method(origin: str) -> None:
    for method in ("GET", "POST", "OPTIONS"):
        assert refused(origin=origin, method=method) == "origin_not_allowed", (origin, method)


def test_a_host_without_a_port_is_the_default_port_of_the_origins_scheme() -> None:
    # Behind nginx on 80 or 443, Host carries no port.
    policy = wo.Policy(allowed_hosts=("pinchtab.example",))
    assert refused(policy, host="pinchtab.example", origin="https://pinchtab.example") is None
    assert refused(policy, host="pinchtab.example", origin="http://pinchtab.example:80") is None
    assert refused(policy, host="pinchtab.example", origin="http://pinchtab.example:8080") == "origin_not_allowed"
    assert refused(policy, host="pinchtab.example:8443", origin="https://pinchtab.example:8443") is None


def test_configured_origins_pass_as_browsers_write_them() -> None:
    policy = wo.Policy.from_config(type("S", (), {"allowed_hosts": (),
                                                  "allowed_origins": ("https://App.Example.com:443/",)})())
    assert refused(policy, origin="https://app.example.com") is None
    assert refused(policy, origin="http://app.example.com") == "origin_not_allowed"


def test_doors_admit_their_origins_on_their_path_only() -> None:
    apps = wo.Door("/debug", wo.is_loopback_origin, when=lambda q: q.get("role", ["app"])[0] != "agent")
    sdk = wo.Door("/debug/sdk.js")
    doors = (apps, sdk)
    page = "http://localhost:3000"
    assert refused(origin=page, path="/debug", query={"role": ["app"]}, doors=doors) is None
    assert refused(origin=page, path="/debug", query={}, doors=doors) is None
    assert refused(origin=page, path="/debug", query={"role": ["agent"]}, doors=doors) == "origin_not_allowed"
    assert refused(origin=page, path="/tabs", doors=doors) == "origin_not_allowed"
    assert refused(origin="https://evil.example", path="/debug", doors=doors) == "origin_not_allowed"
    # A public door takes GETs from any site (a script tag), never a POST.
    assert refused(fetch_site="cross-site", path="/debug/sdk.js", doors=doors) is None
    assert refused(origin="https://evil.example", method="POST", path="/debug/sdk.js",
                   doors=doors) == "origin_not_allowed"
    # The Host check comes first, doors or not.
    assert refused(host="evil.example", path="/debug/sdk.js", doors=doors) == "host_not_allowed"


@pytest.mark.parametrize(("origin", "loopback"), [
    ("http://localhost:3000", True), ("https://127.0.0.2:8443", True), ("http://[::1]:5173", True),
    ("http://dev.localhost", True), ("http://10.0.0.1:3000", False), ("http://localhost.evil.com", False),
    ("null", False), ("chrome-extension://abc", False)])
def test_loopback_origins(origin: str, loopback: bool) -> None:
    assert wo.is_loopback_origin(origin) is loopback


def test_extension_origins_follow_the_allowed_ids() -> None:
    anyone, listed = wo.extension_origins(), wo.extension_origins(("abc",))
    assert anyone("chrome-extension://xyz") and listed("chrome-extension://abc")
    assert not listed("chrome-extension://xyz")
    assert not anyone("chrome-extension://") and not anyone("chrome-extension://a/b")
    assert not anyone("http://abc")


def test_an_extension_only_door_is_the_one_way_in_on_its_path() -> None:
    ours, stranger = "chrome-extension://abc", "chrome-extension://xyz"
    relay = wo.extension_only("/extension/relay", ("abc",), wo.Refusal("origin_not_allowed", "extension only"),
                              origin_required=True)
    poll = wo.extension_only("/poll", ("abc",), wo.Refusal("not_extension", "extension only"))
    doors = (relay, poll)
    assert refused(origin=ours, path="/extension/relay", doors=doors) is None
    assert refused(origin=stranger, path="/extension/relay", doors=doors) == "origin_not_allowed"
    assert refused(path="/extension/relay", doors=doors) == "origin_not_allowed"   # a WebSocket names itself
    assert refused(origin=f"http://{OURS}", path="/extension/relay", doors=doors) == "origin_not_allowed"
    # Polls carry no Origin; the extension's results its own; nothing a page sends, not even our own origin.
    assert refused(path="/poll", doors=doors) is None and refused(path="/poll", fetch_site="none", doors=doors) is None
    assert refused(origin=ours, method="POST", path="/poll", doors=doors) is None
    assert refused(origin=f"http://{OURS}", path="/poll", doors=doors) == "not_extension"
    assert refused(path="/poll", fetch_site="same-origin", doors=doors) == "not_extension"
    assert refused(path="/poll", fetch_site="cross-site", doors=doors) == "origin_not_allowed"
    listed = wo.Policy(allowed_origins=frozenset({"https://app.example.com"}))
    assert refused(listed, origin="https://app.example.com", path="/poll", doors=doors) == "not_extension"
    assert refused(listed, origin="https://app.example.com", path="/tabs", doors=doors) is None   # elsewhere
    # Without listed ids, any extension.
    anyone = wo.extension_only("/extension/relay", (), wo.Refusal("origin_not_allowed", "x"), origin_required=True)
    assert refused(origin=stranger, path="/extension/relay", doors=(anyone,)) is None
