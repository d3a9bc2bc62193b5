"""Downloads from an intranet host the download list names (app/policy/netguard.py): pure policy, stub resolver."""
from __future__ import annotations

import pytest

from app.policy.netguard import INTERNAL, NOT_ALLOWED, Policy, UnsafeURL, check_url


def policy(download: list[str], table: dict[str, list[str]]) -> Policy:
    return Policy.for_download(download, ["127.0.0.1"], lambda host: table.get(host, []))


def refused(url: str, p: Policy) -> UnsafeURL:
    with pytest.raises(UnsafeURL) as info:
        check_url(url, p)
    return info.value


def test_a_named_intranet_host_may_resolve_to_a_private_address():
    p = policy(["wiki.corp", "10.1.2.3"], {"wiki.corp": ["10.0.0.7"]})
    assert check_url("http://wiki.corp/report.pdf", p) == "wiki.corp"
    assert check_url("https://10.1.2.3/f", p) == "10.1.2.3"


@pytest.mark.parametrize("address", ["127.0.0.1", "169.254.169.254", "169.254.10.1", "::1", "fe80::1",
                                     "0.0.0.0", "::ffff:127.0.0.1", "fd00:ec2::254"])
def test_loopback_link_local_and_metadata_stay_refused_even_when_named(address):
    p = policy(["wiki.corp"], {"wiki.corp": ["10.0.0.7", address]})
    assert refused("http://wiki.corp/", p).reason == INTERNAL


@pytest.mark.parametrize("entry", ["169.254.169.254", "127.0.0.1", "localhost"])
def test_naming_a_loopback_or_metadata_address_does_not_open_it(entry):
    host = "[::1]" if entry == "::1" else entry
    assert refused(f"http://{host}/", policy([entry], {})).reason == INTERNAL


def test_a_wildcard_entry_does_not_open_private_addresses():
    p = policy(["*.corp", "*"], {"wiki.corp": ["10.0.0.7"], "other.example": ["192.168.1.5"]})
    assert refused("http://wiki.corp/", p).reason == INTERNAL
    assert refused("http://other.example/", p).reason == INTERNAL


def test_a_host_not_named_is_still_refused_and_the_navigation_list_opens_nothing_private():
    p = policy(["wiki.corp"], {"wiki.corp": ["10.0.0.7"], "db.corp": ["10.0.0.8"]})
    assert refused("http://db.corp/", p).reason == NOT_ALLOWED
    # Without a download list, security.allowedDomains applies, and private addresses stay refused.
    nav = Policy.for_download([], ["wiki.corp"], lambda host: ["10.0.0.7"])
    assert refused("http://wiki.corp/", nav).reason == INTERNAL
