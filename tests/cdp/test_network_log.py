"""Pure logic of the network ring (cdp/network.py), fed CDP events by hand: the ring's bound, what
counts as in flight, what a page cannot grow, and a slow stream reader losing the oldest entries.
(Capture from real Chromium is tested in tests/app/api/test_network.py.)"""
from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from cdp.network import MAX_HEADERS_TOTAL, MAX_URL, SUBSCRIBER_QUEUE, NetworkLog, NetworkOptions, broken


class _Tab:
    """Records handlers as a tab's worker would run them; answers body requests at once."""

    closed = None

    def __init__(self) -> None:
        self.handlers: dict[str, Callable[[str, dict[str, Any]], None]] = {}

    def on(self, method: str, handler: Callable[[str, dict[str, Any]], None]) -> None:
        self.handlers[method] = handler

    def when_closed(self, callback: Callable[[Exception], None]) -> Callable[[], None]:
        return lambda: None

    def send(self, method: str, params: dict[str, Any], session_id: str | None = None) -> Future:
        fut: Future = Future()
        fut.set_result({"body": "0123456789", "base64Encoded": False})
        return fut

    def fire(self, method: str, **params: Any) -> None:
        self.handlers[method]("s", params)


def _request(tab: _Tab, rid: str, url: str = "http://a.test/x", **request: Any) -> None:
    tab.fire("Network.requestWillBeSent", requestId=rid, type="Fetch",
             request={"url": url, "method": "GET", "headers": {}, **request})


def test_the_ring_keeps_the_newest_and_tracks_what_is_in_flight() -> None:
    tab = _Tab()
    log = NetworkLog(tab, NetworkOptions(buffer_size=2))  # type: ignore[arg-type]
    for rid in ("1", "2", "3"):
        _request(tab, rid, f"http://a.test/{rid}")
    assert [e["requestId"] for e in log.entries()] == ["2", "3"] and log.dropped == 1
    assert log.inflight == 3 and log.idle_for() == 0
    for rid in ("1", "2"):
        tab.fire("Network.loadingFinished", requestId=rid, encodedDataLength=5)
    tab.fire("Network.loadingFailed", requestId="3", errorText="net::ERR_FAILED")
    assert log.inflight == 0 and log.idle_for() >= 0
    assert broken(log.entries()) == [{"url": "http://a.test/3", "resourceType": "fetch", "statusCode": 0,
                                      "error": "net::ERR_FAILED"}]


def test_a_page_cannot_grow_an_entry_past_its_caps() -> None:
    tab = _Tab()
    log = NetworkLog(tab, NetworkOptions())  # type: ignore[arg-type]
    _request(tab, "1", "http://a.test/" + "u" * 100_000,
             headers={f"h{i}": "v" * 4000 for i in range(100)}, postData="p" * 1_000_000)
    entry = log.entries()[0]
    assert len(entry["url"]) == MAX_URL and len(entry["postData"]) == 64 * 1024
    assert sum(len(k) + len(v) for k, v in entry["requestHeaders"].items()) <= MAX_HEADERS_TOTAL


def test_bodies_are_cut_at_the_cap_and_said_so() -> None:
    tab = _Tab()
    log = NetworkLog(tab, NetworkOptions(retain_bodies=True, body_max_bytes=4))  # type: ignore[arg-type]
    _request(tab, "1")
    tab.fire("Network.responseReceived", requestId="1", response={"status": 200, "headers": {}})
    tab.fire("Network.loadingFinished", requestId="1")
    found = log.get("1", body=True)
    assert found is not None
    assert found[1]["responseBody"] == "0123" and found[1]["bodyTruncated"] is True


def test_a_slow_subscriber_loses_the_oldest_and_learns_how_many() -> None:
    tab = _Tab()
    log = NetworkLog(tab, NetworkOptions(buffer_size=10))  # type: ignore[arg-type]
    sub = log.subscribe()
    for i in range(SUBSCRIBER_QUEUE + 5):
        _request(tab, str(i))
        tab.fire("Network.loadingFinished", requestId=str(i))
    items, dropped = sub.take(0)
    assert (len(items), dropped, items[0]["requestId"]) == (SUBSCRIBER_QUEUE, 5, "5")
    log.unsubscribe(sub)
    assert sub.take(0) == ([], 0) and sub.closed
