"""Tab policy (config instanceDefaults): idle tabs close, tabs come back after a restart, a limit on
tabs working at once, and which tab goes when there are too many."""
from __future__ import annotations

import os
import signal
import threading

import pytest
from support.agent import nav
from support.config import make_config
from support.waits import wait_until

from app.api import tab_policy
from app.errors import Conflict


def open_ids(client) -> list[str]:
    return [t["id"] for t in client.get("/tabs").json["tabs"]]


# --- pure choices ----------------------------------------------------------------------------
def test_eviction_picks_by_policy_and_never_a_held_tab():
    pages = [{"targetId": t} for t in ("a", "b", "c")]
    used = {"a": 30.0, "b": 10.0, "c": 20.0}.__getitem__
    created = {"a": 1.0, "b": 2.0, "c": 3.0}.__getitem__
    free = lambda t: False  # noqa: E731
    assert tab_policy.eviction_victims(pages, 4, "close_lru", used, created, free) == []
    assert tab_policy.eviction_victims(pages, 3, "close_lru", used, created, free) == ["b"]
    assert tab_policy.eviction_victims(pages, 3, "close_oldest", used, created, free) == ["a"]
    assert tab_policy.eviction_victims(pages, 2, "close_lru", used, created, lambda t: t == "b") == ["c", "a"]
    with pytest.raises(Conflict) as info:
        tab_policy.eviction_victims(pages, 3, "reject", used, created, free)
    assert info.value.code == "tab_limit_reached" and info.value.details["maxTabs"] == 3
    with pytest.raises(Conflict):
        tab_policy.eviction_victims(pages, 3, "close_lru", used, created, lambda t: True)


def test_idle_tabs_are_those_unused_past_the_delay_but_never_all():
    used = {"a": 0.0, "b": 5.0, "c": 9.5}.__getitem__
    keep_none = lambda t: False  # noqa: E731
    assert tab_policy.idle_tabs(["a", "b", "c"], 10.0, 3.0, used, keep_none) == ["a", "b"]
    assert tab_policy.idle_tabs(["a", "b", "c"], 10.0, 3.0, used, lambda t: t == "a") == ["b"]
    assert tab_policy.idle_tabs(["a", "b"], 100.0, 3.0, used, keep_none) == ["a"]  # b, the latest, stays


# --- in a browser ------------------------------------------------------------------------------
@pytest.fixture
def idle_app(app_factory):
    app = app_factory(**{"instanceDefaults.tabPolicy.lifecycle": "close_idle",
                         "instanceDefaults.tabPolicy.closeDelaySec": 1})
    yield app
    app.extensions["pinchtab.tab_idle"].stop()


def test_idle_tabs_close_and_used_or_held_ones_stay(idle_app, site):
    client = idle_app.test_client()
    held = nav(client, site.url("form.html"))["tabId"]
    assert client.post("/lock", json={"tabId": held, "owner": "alice"}).status_code == 200
    idle = nav(client, site.url("counter.html"))["tabId"]
    used = nav(client, site.url("table.html"))["tabId"]

    def idle_closed() -> bool:
        assert client.get(f"/text?tabId={used}").status_code == 200  # each read starts its delay again
        return idle not in open_ids(client)

    wait_until(idle_closed, 6)
    ids = open_ids(client)
    assert used in ids and held in ids
    assert client.get(f"/tabs/{idle}/text").status_code == 404


def test_max_parallel_tabs_limits_tabs_working_at_once(app_factory, site):
    def spans(max_parallel: int) -> list[list[float]]:
        client = app_factory(**{"instanceDefaults.maxParallelTabs": max_parallel,
                                "security.allowEvaluate": True}).test_client()
        tabs = [nav(client, site.url("counter.html"))["tabId"] for _ in range(2)]
        out: list[list[float]] = []
        wait = ("(async () => { const s = Date.now(); await new Promise(r => setTimeout(r, 400));"
                " return [s, Date.now()]; })()")

        def run(t: str) -> None:
            r = client.post("/evaluate", json={"tabId": t, "expression": wait, "awaitPromise": True})
            out.append(r.json["result"])

        threads = [threading.Thread(target=run, args=(t,)) for t in tabs]
        for th in threads:
            th.start()
        for th in threads:
            th.join(10)
        assert len(out) == 2
        return sorted(out)

    one_at_a_time = spans(1)
    assert one_at_a_time[1][0] >= one_at_a_time[0][1]  # the second started once the first was done
    together = spans(2)
    assert together[1][0] < together[0][1]


@pytest.fixture(scope="module")
def fresh_browser():
    """A browser of this module's own: the eviction tests fill it, with no other test's tabs about."""
    from cdp.browser import Browser

    b = Browser()
    b.start()
    yield b
    b.stop()


def emptied(b):
    """``b`` with a single tab, older in use and in age than any a test opens next."""
    for p in b.pages()[1:]:
        b.close_tab(p["targetId"])
    return b


def test_tabs_come_back_after_the_browser_restarts(tmp_path, site):
    from app.api import create_app

    app = create_app(make_config(tmp_path, **{"instanceDefaults.tabPolicy.restore": True}), start_browser=False)
    client, bridge = app.test_client(), app.extensions["pinchtab"]
    bridge.start(background=False)
    try:
        urls = {site.url("counter.html"), site.url("form.html")}
        for url in urls:
            nav(client, url)
        os.killpg(bridge.browser.process.proc.pid, signal.SIGKILL)  # a crash
        wait_until(lambda: not bridge.browser.alive(), 10)
        assert client.get("/health").json["status"] == "error"
        wait_until(lambda: {t["url"] for t in client.get("/tabs").json["tabs"]} == urls, 10)
    finally:
        bridge.stop()  # a shutdown keeps the tabs for the next start...
    again = create_app(make_config(tmp_path, **{"instanceDefaults.tabPolicy.restore": True}), start_browser=False)
    again.extensions["pinchtab"].start(background=False)
    try:  # ... which reopens them
        wait_until(lambda: {t["url"] for t in again.test_client().get("/tabs").json["tabs"]} == urls, 10)
    finally:
        again.extensions["pinchtab"].stop()


def test_no_restore_wins_and_kept_tabs_are_read_once(tmp_path):
    from app.api import tab_policy

    kept = tmp_path / ".pinchtab" / "tabs" / "restore.json"
    kept.parent.mkdir(parents=True)
    on = make_config(tmp_path, **{"instanceDefaults.tabPolicy.restore": True})
    off = make_config(tmp_path, **{"instanceDefaults.tabPolicy.restore": True, "instanceDefaults.noRestore": True})
    kept.write_text('{"urls": ["https://a.test/", "chrome://settings", 5]}')
    assert tab_policy.saved_urls(on) == ["https://a.test/"] and not kept.exists()
    assert tab_policy.saved_urls(on) == []
    kept.write_text('{"urls": ["https://a.test/"]}')
    assert tab_policy.saved_urls(off) == [] and not kept.exists()
    assert not tab_policy.restores(off) and tab_policy.restores(on)


def test_eviction_policies_pick_the_tab_to_close(fresh_browser, tmp_path, site):
    from app.api import create_app

    def app_with(**overrides):
        app = create_app(make_config(tmp_path, **overrides), start_browser=False,
                         browser_factory=lambda: emptied(fresh_browser))
        app.extensions["pinchtab"].start(background=False)
        return app.test_client()

    for policy, goes in (("close_lru", 1), ("close_oldest", 0)):
        client = app_with(**{"instanceDefaults.maxTabs": 2, "instanceDefaults.tabEvictionPolicy": policy})
        a = nav(client, site.url("counter.html"))["tabId"]
        b = nav(client, site.url("form.html"))["tabId"]  # the tab there was before makes room
        client.get(f"/text?tabId={a}")  # a is used after b: b is the least recently used, a the oldest
        c = nav(client, site.url("table.html"))["tabId"]
        ids = open_ids(client)
        assert [a, b][goes] not in ids and [a, b][1 - goes] in ids and c in ids, policy
    client = app_with(**{"instanceDefaults.maxTabs": 1, "instanceDefaults.tabEvictionPolicy": "reject"})
    r = client.post("/navigate", json={"url": site.url("form.html")})
    assert r.status_code == 409 and r.json["code"] == "tab_limit_reached"
    assert r.json["details"]["setting"] == "instanceDefaults.maxTabs"
