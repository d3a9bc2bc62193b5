"""The tests' bounded wait: ``bench.common.wait_for``, where a miss fails the test."""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.common import wait_for


def wait_until(predicate: Callable[[], Any], timeout_s: float = 10.0, interval_s: float = 0.02) -> Any:
    """Poll ``predicate`` until it returns something truthy, and return that; fail the test
    (AssertionError) at the deadline."""
    try:
        return wait_for(predicate, timeout_s, interval_s)
    except TimeoutError:
        raise AssertionError(f"condition not met within {timeout_s} s") from None
