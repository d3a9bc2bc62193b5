"""Opening tabs: a new tab takes the session Chrome's auto-attach gave its page (no second attach),
tabs opened together each get their own page, and a page someone else opens meanwhile is let run
and left, not held for a tab that will never claim it."""
from __future__ import annotations

import threading
from typing import Any

import pytest
from support.waits import wait_until

pytestmark = pytest.mark.timeout(60)


def evaluate(tab: Any, expression: str) -> Any:
    reply = tab.run(lambda: tab.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}), 10)
    return reply["result"]["value"]


def test_a_new_tab_is_set_up_on_the_session_auto_attach_gave_it(browser: Any,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    conn = browser.conn
    real_call = conn.call
    methods: list[str] = []
    monkeypatch.setattr(conn, "call", lambda method, *a, **kw: methods.append(method) or real_call(method, *a, **kw))
    tab = browser.new_tab()
    monkeypatch.undo()
    try:
        assert methods == ["Target.createTarget"]  # no attachToTarget round trip of its own
        assert evaluate(tab, "1 + 1") == 2
        info = next(t for t in conn.call("Target.getTargets", timeout_s=10)["targetInfos"] if t["targetId"] == tab.id)
        assert info["attached"] is True
    finally:
        browser.close_tab(tab.id)


def test_tabs_opened_together_get_a_page_each(browser: Any) -> None:
    tabs: list[Any] = []
    errors: list[BaseException] = []

    def open_tab() -> None:
        try:
            tabs.append(browser.new_tab())
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_tab) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    try:
        assert not errors
        assert len({t.id for t in tabs}) == 3
        assert all(evaluate(t, "location.href") == "about:blank" for t in tabs)
    finally:
        for t in tabs:
            browser.close_tab(t.id)


def test_a_page_another_client_opens_while_a_tab_opens_is_let_run(browser: Any, site: Any,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    conn = browser.conn
    real_call = conn.call
    foreign: dict[str, str] = {}

    def call(method: str, params: Any = None, *args: Any, **kwargs: Any) -> Any:
        if method == "Target.createTarget" and not foreign:
            # While our tab is being opened, another client opens a page whose script sets its title.
            foreign["id"] = real_call("Target.createTarget", {"url": site.url("/network_title.html"),
                                                              "newWindow": True}, timeout_s=20)["targetId"]
        return real_call(method, params, *args, **kwargs)

    monkeypatch.setattr(conn, "call", call)
    tab = browser.new_tab()
    monkeypatch.undo()
    try:
        assert evaluate(tab, "location.href") == "about:blank"
        # Not held for a tab that will never claim it: its script runs, and we leave it (no session).
        def foreign_info() -> dict[str, Any]:
            return next(t for t in conn.call("Target.getTargets", timeout_s=10)["targetInfos"]
                        if t["targetId"] == foreign["id"])

        wait_until(lambda: foreign_info().get("title") == "Late title", 15)
        wait_until(lambda: foreign_info()["attached"] is False, 5)
    finally:
        browser.close_tab(tab.id)
        browser.close_tab(foreign["id"])


def test_a_new_tab_answers_before_its_renderer_and_its_first_job_runs_after_the_setup(browser: Any) -> None:
    """The tab is handed over once its setup is sent: the first job queued on it runs once the
    setup has been answered (its frame tree learnt: a Tab starts without a main frame)."""
    tab = browser.new_tab()
    try:
        seen = tab.run(lambda: (tab.main_frame_id, tab.url), 10)   # queued at once, behind the setup
        assert seen == (tab.id, "about:blank")
        assert evaluate(tab, "typeof document") == "object"
    finally:
        browser.close_tab(tab.id)
