"""Tab policy (config instanceDefaults): idle tabs close, tabs come back after a restart, a limit on
tabs working at once, and which tab goes when there are too many."""
from __future__ import annotations

import os
import signal
import threading
import time

import pytest
from support.agent import nav
from support.config import make_config
from support.waits import wait_until

from app.api import tab_policy
from app.web.errors import Conflict


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


def test_due_tabs_are_the_armed_ones_past_their_deadline_but_never_every_page():
    deadlines = {"a": 5.0, "b": 9.0, "c": 12.0}
    keep_none = lambda t: False  # noqa: E731
    pages = ["a", "b", "c", "unarmed"]
    assert tab_policy.due_tabs(deadlines, 10.0, pages, keep_none) == ["a", "b"]
    assert tab_policy.due_tabs(deadlines, 10.0, pages, lambda t: t == "a") == ["b"]
    assert tab_policy.due_tabs(deadlines, 20.0, ["a", "b"], keep_none) == ["a"]  # b, armed last, stays
    assert tab_policy.due_tabs(deadlines, 20.0, ["b", "other"], keep_none) == ["b"]


def test_which_requests_arm_and_disarm_a_tabs_timer():
    assert tab_policy.timer_change("GET", "/text") == "arm"
    assert tab_policy.timer_change("GET", "/tabs/<tab_id>/snapshot") == "arm"
    assert tab_policy.timer_change("POST", "/action") == "arm"
    assert tab_policy.timer_change("POST", "/tabs/<tab_id>/navigate") == "disarm"
    assert tab_policy.timer_change("GET", "/screenshot") == ""  # a dashboard watching must not close tabs
    assert tab_policy.timer_change("GET", "/tabs") == ""


# --- in a browser ------------------------------------------------------------------------------
@pytest.fixture
def idle_app(app_factory):
    app = app_factory(**{"instanceDefaults.tabPolicy.lifecycle": "close_idle",
                         "instanceDefaults.tabPolicy.closeDelaySec": 1})
    yield app
    app.extensions["pinchtab.tab_idle"].stop()


def test_a_read_within_the_delay_starts_the_timer_again(idle_app, site):
    client, closer = idle_app.test_client(), idle_app.extensions["pinchtab.tab_idle"]
    state = idle_app.extensions["pinchtab"]
    tab_id = nav(client, site.url("form.html"))["tabId"]
    # A clock of our own, far enough ahead that the closer's thread (on the real one) never sees it due.
    base = time.monotonic() + 1000
    closer.arm(tab_id, now=base)
    closer.arm(tab_id, now=base + 0.6)  # the second read, within the delay
    assert closer.sweep(state, now=base + closer.delay_s + 0.1) == []  # past the first read's deadline
    assert tab_id in open_ids(client)
    assert closer.sweep(state, now=base + 0.6 + closer.delay_s) == [tab_id]
    assert tab_id not in open_ids(client) and not closer.armed(tab_id)


def test_reads_and_actions_arm_the_close_and_navigate_disarms_it(idle_app, site):
    client = idle_app.test_client()
    closer = idle_app.extensions["pinchtab.tab_idle"]
    by_text = nav(client, site.url("form.html"))["tabId"]
    by_snapshot = nav(client, site.url("form.html"))["tabId"]
    by_action = nav(client, site.url("counter.html"))["tabId"]
    navigated = nav(client, site.url("table.html"))["tabId"]
    held = nav(client, site.url("table.html"))["tabId"]
    kept_busy = nav(client, site.url("table.html"))["tabId"]
    assert not closer.armed(navigated)  # a navigate alone arms nothing: the tab stays until read

    assert client.get(f"/text?tabId={navigated}&format=text").status_code == 200
    assert closer.armed(navigated)
    assert client.post("/navigate", json={"url": site.url("form.html"), "tabId": navigated}).status_code == 200
    assert not closer.armed(navigated)  # fresh work on it: its pending close is off
    assert client.post("/lock", json={"tabId": held, "owner": "alice"}).status_code == 200
    assert client.get(f"/tabs/{held}/text").status_code == 200

    # Armed after the navigate disarmed the other: when these have closed, its old deadline is past.
    assert client.get(f"/text?tabId={by_text}&format=text").status_code == 200
    assert client.get(f"/tabs/{by_snapshot}/snapshot").status_code == 200
    assert client.post("/action", json={"kind": "press", "key": "Tab", "tabId": by_action}).status_code == 200

    def closed() -> bool:
        # Each read of kept_busy starts its timer again: it does not run out while the tab is in use.
        assert client.get(f"/title?tabId={kept_busy}").status_code == 200
        return not {by_text, by_snapshot, by_action} & set(open_ids(client))

    wait_until(closed, 8)
    ids = open_ids(client)
    assert navigated in ids and held in ids and kept_busy in ids
    assert client.get(f"/tabs/{by_text}/text").status_code == 404


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
