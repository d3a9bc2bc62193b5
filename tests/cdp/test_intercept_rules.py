"""Pure logic of request interception (cdp/intercept.py): route patterns, rule checks, which rule
or block decides a request. (The Fetch plumbing is tested against Chromium in test_network.py.)"""
from __future__ import annotations

import time
from typing import Any

import pytest

from cdp.intercept import Interceptor, Rule, RuleError, ad_host, wildcard_match


@pytest.mark.parametrize("pattern,url,hit", [
    ("*.png", "http://a.test/b/c.png", True),
    ("*.png", "http://a.test/c.png?v=2", False),         # a wildcard pattern covers the whole URL
    ("api/users", "http://a.test/api/users?page=2", True),  # no wildcard: a substring
    ("*api*", "http://a.test/v1/api/x", True),
    ("http://?.test/*", "http://a.test/x", True),
    ("http://?.test/*", "http://ab.test/x", False),
    ("a*b*c", "a-b-b-c", True),
    ("a*b", "acbd", False),
])
def test_route_patterns(pattern: str, url: str, hit: bool) -> None:
    assert wildcard_match(pattern, url) is hit


def test_a_pattern_full_of_stars_stays_fast() -> None:
    started = time.monotonic()
    assert not wildcard_match("*a" * 40 + "b", "a" * 8000)
    assert time.monotonic() - started < 2


def test_fulfil_rules_get_the_originals_defaults_and_skip_preflights() -> None:
    rule = Rule.build("api", "fulfill", body="{}")
    assert (rule.status, rule.content_type) == (200, "application/json")
    assert rule.matches("http://a.test/api", "Fetch", "GET")
    assert not rule.matches("http://a.test/api", "Preflight", "OPTIONS")
    assert Rule.build("api", "fulfill", method="options").matches("http://a.test/api", "Preflight", "OPTIONS")
    assert not Rule.build("api", "abort", resource_type="script").matches("http://a.test/api", "Fetch", "GET")


@pytest.mark.parametrize("kwargs,field", [
    ({"pattern": ""}, "pattern"),
    ({"pattern": "x", "action": "drop"}, "action"),
    ({"pattern": "x", "status": 600}, "status"),
    ({"pattern": "x", "content_type": "image/svg+xml"}, "contentType"),
    ({"pattern": "x", "headers": {"Bad Name": "1"}}, "headers"),
])
def test_bad_rules_name_their_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(RuleError) as info:
        Rule.build(**kwargs)
    assert info.value.field == field


def test_ad_hosts_match_subdomains_only() -> None:
    assert ad_host("https://securepubads.doubleclick.net/tag.js")
    assert not ad_host("https://notdoubleclick.net/")
    assert not ad_host("http://127.0.0.1/ads.js")


class _Tab:
    """Just what an Interceptor asks of a tab while deciding (no Chrome involved)."""

    session_id = "s"
    frames: dict[str, Any] = {}

    def on(self, *_: Any) -> None:
        pass

    def call(self, *_: Any) -> dict[str, Any]:
        return {}


def test_blocking_comes_before_rules_and_the_first_rule_wins() -> None:
    ic = Interceptor(_Tab())  # type: ignore[arg-type]
    ic.add(Rule.build("*.png", "fulfill", body="x", content_type="image/png"))
    ic.add(Rule.build("logo", "abort"))
    assert ic.decide("http://a.test/logo.png", "Image", "GET")[1].action == "fulfill"
    ic.block(["images"])
    assert ic.decide("http://a.test/logo.png", "Image", "GET") == ("block", None)
    assert ic.decide("http://a.test/logo.txt", "Fetch", "GET")[1].action == "abort"
    assert ic.decide("http://a.test/page", "Document", "GET") == ("continue", None)
    assert ic.remove("*.png") == 1 and [r.pattern for r in ic.rules] == ["logo"]
