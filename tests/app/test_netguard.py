"""The download policy (app/policy/netguard.py): pure functions, no network (the resolver is a stub)."""
from __future__ import annotations

import ipaddress

import pytest

from app.policy import netguard, urls
from app.policy.netguard import Policy, UnsafeURL, check_url

PUBLIC = "93.184.216.34"


def resolver(table: dict[str, list[str]]):
    calls: list[str] = []

    def resolve(host: str) -> list[str]:
        calls.append(host)
        return table.get(host, [])

    resolve.calls = calls  # type: ignore[attr-defined]
    return resolve


def open_policy(**table: list[str]) -> Policy:
    """No allowlist: any host that resolves to public addresses only."""
    return Policy((), "security.downloadAllowedDomains", resolver({"example.com": [PUBLIC], **table}))


def refused(url: str, policy: Policy) -> UnsafeURL:
    with pytest.raises(UnsafeURL) as info:
        check_url(url, policy)
    return info.value


# --- schemes and malformed URLs --------------------------------------------------------------------
@pytest.mark.parametrize("url", ["ftp://example.com/f", "file:///etc/passwd", "javascript:alert(1)",
                                 "data:text/plain,hi", "chrome://settings", "example.com/f", "ws://example.com/"])
def test_only_http_and_https(url):
    err = refused(url, open_policy())
    assert err.reason == netguard.SCHEME and err.message.startswith("unsafe URL")


def test_http_and_https_to_a_public_host_pass_and_return_the_canonical_host():
    assert check_url("http://example.com/a?b=c", open_policy()) == "example.com"
    assert check_url("HTTPS://EXAMPLE.com.:8443/x", open_policy()) == "example.com"


@pytest.mark.parametrize("url", [
    "http://example.com\\@127.0.0.1/",  # browsers read \ as /: the host differs between parsers
    "http://127.0.0.1\\@example.com/",
    "http://user:pw@example.com/",  # user info: the other place parsers disagree
    "http://example.com@127.0.0.1/",
    "http://exa\tmple.com/",
    "http:///path-only",
    "http://example.com:99999/",
    "http://[::1/",
])
def test_urls_parsers_could_read_differently_are_refused(url):
    assert refused(url, open_policy()).reason == netguard.MALFORMED


# --- literal addresses -----------------------------------------------------------------------------
@pytest.mark.parametrize("host", [
    "127.0.0.1", "127.255.255.254", "10.1.2.3", "172.16.0.1", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "224.0.0.1", "239.255.255.250", "240.0.0.1", "255.255.255.255", "192.0.2.1", "198.18.0.1",
    # the forms Chromium turns into 127.0.0.1
    "2130706433", "0x7f000001", "0x7F.0.0.1", "0177.0.0.1", "017700000001", "127.1", "127.0.1", "0",
    "127.0.0.1.", "%31%32%37.0.0.1", "１２７.０.０.１",
    # IPv6: loopback, unspecified, unique-local, link-local, multicast, and v4 inside v6
    "[::1]", "[0:0:0:0:0:0:0:1]", "[::]", "[fd00::1]", "[fe80::1]", "[ff02::1]", "[fec0::1]",
    "[::ffff:127.0.0.1]", "[::ffff:7f00:1]", "[::ffff:10.0.0.1]", "[::127.0.0.1]", "[2002:7f00:1::]",
    "[64:ff9b::a9fe:a9fe]",
])
def test_literal_internal_addresses_are_always_refused(host):
    for policy in (open_policy(), Policy(("*",), "s", resolver({})),
                   Policy((host.strip("[]"), "127.0.0.1", "::1"), "s", resolver({}))):
        err = refused(f"http://{host}:8080/health", policy)
        assert err.reason == netguard.INTERNAL, host
        assert err.message == "unsafe URL: internal or blocked host"


@pytest.mark.parametrize("host", ["8.8.8.8", "[2606:4700:4700::1111]", "[::ffff:8.8.8.8]", "134744072"])
def test_literal_public_addresses_pass_without_resolving(host):
    policy = open_policy()
    check_url(f"http://{host}/", policy)
    assert policy.resolver.calls == []  # type: ignore[attr-defined]


@pytest.mark.parametrize("host", ["1.2.3.4.5", "256.0.0.1", "0x100000000", "1.2.3.08", "4294967296"])
def test_hosts_that_end_in_a_number_but_are_no_address_are_refused(host):
    assert refused(f"http://{host}/", open_policy()).reason == netguard.MALFORMED


def test_parse_ipv4_follows_the_url_standard():
    assert urls.parse_ipv4("2130706433") == ipaddress.IPv4Address("127.0.0.1")
    assert urls.parse_ipv4("0x7f.1") == ipaddress.IPv4Address("127.0.0.1")
    assert urls.parse_ipv4("192.168.257") == ipaddress.IPv4Address("192.168.1.1")
    assert urls.parse_ipv4("010.0.0.1") == ipaddress.IPv4Address("8.0.0.1")
    assert urls.parse_ipv4("example.com") is None
    assert urls.parse_ipv4("1.example") is None


# --- local names -----------------------------------------------------------------------------------
@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "localhost.", "Localhost.localdomain", "app.localhost",
                                  "a.b.localhost.", "localhost6", "ip6-localhost", "%6cocalhost"])
def test_localhost_variants_are_refused_even_when_listed(host):
    listed = Policy(("localhost", "*.localhost", host), "s", resolver({host.lower(): [PUBLIC]}))
    for policy in (open_policy(), listed):
        assert refused(f"http://{host}/", policy).reason == netguard.INTERNAL, host


def test_a_name_that_merely_contains_localhost_is_judged_as_any_other_name():
    policy = open_policy(**{"localhost.example.com": [PUBLIC], "mylocalhost": [PUBLIC]})
    check_url("http://localhost.example.com/", policy)
    check_url("http://mylocalhost/", policy)


# --- allowlist -------------------------------------------------------------------------------------
def test_allowlist_exact_and_wildcard_entries():
    table = {h: [PUBLIC] for h in ("example.com", "a.example.com", "x.y.example.com", "other.org",
                                   "badexample.com")}
    policy = Policy(("*.example.com", "other.org"), "security.downloadAllowedDomains", resolver(table))
    check_url("https://a.example.com/f", policy)
    check_url("https://X.Y.Example.COM/f", policy)
    check_url("https://other.org/f", policy)
    for url in ("https://example.com/", "https://badexample.com/", "https://sub.other.org/", "https://8.8.8.8/"):
        err = refused(url, policy)
        assert err.reason == netguard.NOT_ALLOWED, url
        assert err.message == "unsafe URL: domain not allowed by security.downloadAllowedDomains"


def test_allowlist_entry_star_allows_any_public_host():
    policy = Policy(("*",), "security.allowedDomains", resolver({"example.com": [PUBLIC]}))
    check_url("http://example.com/", policy)
    check_url("http://8.8.4.4/", policy)


def test_download_list_falls_back_to_allowed_domains_and_names_it():
    r = resolver({"example.com": [PUBLIC], "fixtures.test": [PUBLIC]})
    own = Policy.for_download(["fixtures.test"], ["example.com"], r)
    assert own.setting == "security.downloadAllowedDomains"
    check_url("http://fixtures.test/", own)
    assert refused("http://example.com/", own).reason == netguard.NOT_ALLOWED
    fallback = Policy.for_download([], ["example.com"], r)
    check_url("http://example.com/", fallback)
    err = refused("http://fixtures.test/", fallback)
    assert err.message == "unsafe URL: domain not allowed by security.allowedDomains"


def test_allowlisted_ip_entries_compare_as_addresses():
    policy = Policy(("8.8.8.8", "2606:4700:4700::1111"), "s", resolver({}))
    check_url("http://134744072/", policy)  # 8.8.8.8 written as one number
    check_url("http://[2606:4700:4700:0:0:0:0:1111]/", policy)
    assert refused("http://8.8.4.4/", policy).reason == netguard.NOT_ALLOWED


# --- resolution ------------------------------------------------------------------------------------
@pytest.mark.parametrize("answers", [
    ["127.0.0.1"], ["10.0.0.5"], [PUBLIC, "192.168.0.10"], ["::1"], [PUBLIC, "fe80::1%eth0"],
    ["2606:4700:4700::1111", "::ffff:127.0.0.1"], ["not-an-address"],
])
def test_a_name_resolving_to_any_internal_address_is_refused(answers):
    for policy in (open_policy(**{"shop.example": answers}),
                   Policy(("shop.example",), "s", resolver({"shop.example": answers}))):
        err = refused("http://shop.example/", policy)
        assert err.reason == netguard.INTERNAL and err.message.startswith("unsafe URL: internal or blocked host")


def test_a_name_resolving_to_public_addresses_only_passes():
    policy = open_policy(**{"shop.example": [PUBLIC, "2606:4700:4700::1111"]})
    check_url("http://shop.example/", policy)
    assert policy.resolver.calls == ["shop.example"]  # type: ignore[attr-defined]


def test_a_name_that_does_not_resolve_is_refused():
    assert refused("http://nowhere.example/", open_policy()).reason == netguard.UNRESOLVED


def test_system_resolver_answers_addresses_and_nothing_for_unknown_names():
    assert "127.0.0.1" in netguard.system_resolver("127.0.0.1")
    assert netguard.system_resolver("no-such-host.invalid") == []


def test_is_internal_ip_edges():
    assert not netguard.is_internal_ip(PUBLIC)
    assert not netguard.is_internal_ip("2606:4700:4700::1111")
    assert not netguard.is_internal_ip("::ffff:8.8.8.8")  # mapped public: the browser connects to 8.8.8.8
    for ip in ("127.0.0.1", "::1", "::ffff:169.254.169.254", "2001:db8::1", "100::1", "garbage"):
        assert netguard.is_internal_ip(ip), ip
