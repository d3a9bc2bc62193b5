"""The dashboard for the people who watch: "Recent activity" shows what agents and people did and
never the dashboard's own polling, filtered by agent, instance and profile; calls and errors per
minute per agent, each instance's memory and tabs, and a profile's use over days, drawn as SVG by
dashboard.js; and the "type the token again" prompt only when a change needs it and the elevation
window has passed. Real Chromium against a real ``pinchtab server`` of this module's own (a short
elevation window), with two agents at work through it. No sleeps: every wait polls with a deadline."""
from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from support.browser_page import Page
from support.servers import ServerProcess
from support.waits import wait_until

pytestmark = pytest.mark.e2e

TOKEN = "dashboard-activity-t0ken"
ELEVATION_S = 4  # long enough to make a second change in, short enough to wait out
ALPHA, BETA = "agent-alpha", "agent-beta"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    home = tmp_path_factory.mktemp("dashboard-activity-home")
    sp = ServerProcess(home, {"sessions": {"dashboard": {"elevationWindowSec": ELEVATION_S}}}, token=TOKEN)
    try:
        sp.wait_ready()
        yield sp
    finally:
        sp.stop()


def open_dashboard(server: ServerProcess, browser: Any) -> Page:
    page = Page(browser)
    page.run(lambda t: t.call("Emulation.setDeviceMetricsOverride",
                              {"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": False}))
    # A login of its own: an earlier test's cookie (the browser is shared) may still be there.
    page.run(lambda t: t.call("Network.clearBrowserCookies", {}))
    page.go(server.base + "/login")
    wait_until(lambda: page.dom("!document.getElementById('token-panel').hidden"), 10)
    page.fill("#token-input", TOKEN)
    page.click("#token-save")
    wait_until(lambda: page.dom("document.querySelectorAll('#instances [data-instance-id]').length") >= 1, 15)
    # And the agent sessions' table (a row, or its "none" row): it renders after the login, and a
    # click computed before it grows would land where the form was.
    wait_until(lambda: page.dom("document.querySelector('#agent-sessions tbody').children.length") >= 1, 15)
    return page


def as_agent(server: ServerProcess, agent: str, method: str, path: str, body: Any = None) -> requests.Response:
    return server.request(method, path, json=body, headers={"X-Agent-Id": agent})


def rows(page: Page) -> list[dict[str, str]]:
    """The activity list as shown: agent, method and path of each line."""
    return page.dom("[...document.querySelectorAll('#activity li[data-path]')]"
                    ".map(li => ({agent: li.dataset.agent, method: li.dataset.method, path: li.dataset.path}))")


def chart(page: Page, agent: str) -> dict[str, Any] | None:
    """An agent's chart: the counts it carries and the points of each line."""
    return page.dom(f"""(() => {{
        const svg = document.querySelector('#activity-charts svg[data-agent="{agent}"]');
        if (!svg) return null;
        const nums = (s) => s.split(',').map(Number);
        const pts = (name) => svg.querySelector(`polyline[data-series="${{name}}"]`).getAttribute('points')
            .split(' ').map(p => p.split(',').map(Number));
        return {{calls: nums(svg.dataset.calls), errors: nums(svg.dataset.errors), max: Number(svg.dataset.max),
                height: svg.viewBox.baseVal.height, callPoints: pts('calls'), errorPoints: pts('errors')}};
    }})()""")


def check_line(points: list[list[float]], values: list[int], top: float, height: float) -> None:
    """The polyline is the values: one point a minute, left to right, the highest at the top."""
    assert len(points) == len(values) == 60
    assert [x for x, _ in points] == sorted(x for x, _ in points)
    for (_, y), v in zip(points, values, strict=True):
        assert y == pytest.approx(height - 1 - v / top * (height - 2), abs=0.06)


def test_activity_shows_the_agents_steps_and_charts_them_not_the_dashboards_polling(server, browser, site,
                                                                                      tmp_path):
    # Two agents at work: alpha navigates three times; beta navigates twice and fails an action.
    for url in ("counter.html", "form.html", "table.html"):
        assert as_agent(server, ALPHA, "POST", "/navigate", {"url": site.url(url)}).status_code == 200
    for url in ("form.html", "counter.html"):
        assert as_agent(server, BETA, "POST", "/navigate", {"url": site.url(url)}).status_code == 200
    failed = as_agent(server, BETA, "POST", "/action", {"kind": "click", "ref": "e99999"})
    assert failed.status_code >= 400
    # An instance on a named profile, for the profile's chart: a third agent's two steps there.
    profile = "watched-" + secrets.token_hex(3)
    assert server.post("/profiles", json={"name": profile}).status_code == 201
    started = server.post("/instances/start", json={"profileId": profile}).json()
    server.wait_status(started["id"], "running")
    opened = server.post(f"/instances/{started['id']}/tabs/open", json={"url": site.url("form.html")}).json()
    tab = opened.get("tabId") or opened.get("id")
    for url in ("counter.html", "table.html"):
        r = as_agent(server, "agent-gamma", "POST", "/navigate", {"url": site.url(url), "tabId": tab})
        assert r.status_code == 200, r.text

    page = open_dashboard(server, browser)
    try:
        # The dashboard has polled by now (a screenshot shown, the debug sessions read) ...
        wait_until(lambda: page.dom("!!document.querySelector('#instances img[data-loaded=\"true\"]')"), 20)
        wait_until(lambda: page.dom("document.querySelectorAll('#activity li[data-agent=\"agent-gamma\"]').length")
                   >= 2, 30)

        def counted() -> dict[str, int] | None:
            shown = rows(page)
            mine = {a: sum(r["agent"] == a for r in shown) for a in (ALPHA, BETA)}
            return mine if mine == {ALPHA: 3, BETA: 3} else None

        wait_until(counted, 30)
        shown = rows(page)
        # ... and none of it is shown, nor logged: the log holds what agents and people did.
        assert not [r for r in shown if r["method"] == "GET"], shown
        logged = server.get("/api/activity?limit=1000").json()["events"]
        assert not [e for e in logged if e["agentId"] == "dashboard" and e["method"] == "GET"]
        assert not [e for e in logged if e["path"] in ("/tabs", "/debug/sessions", "/metrics")], logged
        # The person's own change (the instance started) is there, under nobody's agent id.
        assert any(e["path"] == "/instances/start" and e["instanceId"] == started["id"] for e in logged)
        text = page.dom("document.getElementById('activity').textContent")
        assert "navigated to " + site.url("table.html") in text and "started instance " + started["id"] in text

        # Filters: by agent, by instance, by profile.
        def pick(which: str, value: str) -> None:
            page.dom(f"(() => {{ const s = document.getElementById('activity-{which}'); s.value = {json.dumps(value)};"
                     " s.dispatchEvent(new Event('change')); })()")

        pick("agent", BETA)
        assert {r["agent"] for r in rows(page)} == {BETA} and len(rows(page)) == 3
        pick("agent", "")
        pick("instance", started["id"])
        assert {r["agent"] for r in rows(page)} >= {"agent-gamma"} and ALPHA not in {r["agent"] for r in rows(page)}
        pick("instance", "")
        pick("profile", profile)
        assert ALPHA not in {r["agent"] for r in rows(page)} and len(rows(page)) >= 2
        pick("profile", "")

        # Calls and errors per minute over the hour, per agent: the SVG's points are the test's calls.
        for agent, calls, errors in ((ALPHA, 3, 0), (BETA, 3, 1)):
            c = wait_until(lambda a=agent: chart(page, a), 10)
            assert sum(c["calls"]) == calls and sum(c["errors"]) == errors, c
            check_line(c["callPoints"], c["calls"], c["max"], c["height"])
            check_line(c["errorPoints"], c["errors"], c["max"], c["height"])
            assert c["calls"][-1] + c["calls"][-2] == calls  # all within the last two minutes

        # Each running instance's memory and tabs, sampled as the dashboard polls.
        def sampled() -> dict[str, Any] | None:
            got = page.dom(f"""(() => {{
                const card = document.querySelector('[data-instance-id="{started['id']}"]');
                const mem = card && card.querySelector('svg[data-kind="memory"]');
                const tabs = card && card.querySelector('svg[data-kind="tabs"]');
                if (!mem || !tabs) return null;
                return {{memory: mem.dataset.values.split(',').map(Number),
                        tabs: tabs.dataset.values.split(',').map(Number),
                        points: tabs.querySelector('polyline').getAttribute('points').split(' ').length}};
            }})()""")
            return got if got and len(got["tabs"]) >= 2 else None

        spark = wait_until(sampled, 30)
        assert all(m > 0 for m in spark["memory"]) and spark["points"] == len(spark["tabs"])
        open_tabs = len(server.get(f"/instances/{started['id']}/tabs").json())
        wait_until(lambda: (sampled() or {"tabs": [-1]})["tabs"][-1] == open_tabs, 20)

        # The profile's use over days: today's bar holds every call made on it.
        def profile_bars() -> dict[str, Any] | None:
            return page.dom(f"""(() => {{
                const svg = document.querySelector('#profiles tr[data-profile="{profile}"] td.use svg');
                return svg && {{values: svg.dataset.values.split(',').map(Number), last: svg.dataset.last,
                                bars: svg.querySelectorAll('rect').length}};
            }})()""")

        made = server.get(f"/api/activity?profile={profile}&limit=1000").json()["count"]
        assert made >= 2
        bars = wait_until(lambda: (b := profile_bars()) and sum(b["values"]) >= made and b, 30)
        assert bars["bars"] == 14 and bars["values"][-1] == sum(bars["values"])
        assert bars["last"] == time.strftime("%Y-%m-%d", time.gmtime())
        page.dom("document.getElementById('activity-panel').scrollIntoView()")
        page.screenshot(tmp_path / "dashboard-activity.png")  # kept for a person to look at
    finally:
        page.close()


def test_the_token_is_asked_again_only_when_a_change_needs_it(server, browser, tmp_path):
    page = open_dashboard(server, browser)
    try:
        # Right after login nothing asks for the token: no change was asked for.
        assert page.shows("#session-form") and not page.shows("#elevate-form")

        def make(agent: str) -> None:
            page.fill("#session-agent", agent)
            page.click("#session-create")

        def made(agent: str) -> bool:
            return page.dom("document.getElementById('session-token-agent').textContent") == agent \
                and page.shows("#session-token")

        # The first change: logging in did not elevate, so the token is asked for, then it is done.
        first = "first-" + secrets.token_hex(2)
        make(first)
        wait_until(lambda: page.shows("#elevate-form"), 10)
        page.fill("#elevate-input", TOKEN)
        page.click("#elevate-save")
        # (made, not only the prompt gone: the retried change clears the form when it is done, and
        # would clear the next agent id typed before then)
        wait_until(lambda: made(first), 10)
        assert not page.shows("#elevate-form")
        elevated_by = time.time()  # the server's window began before this
        # Within the window: no prompt, the change is made at once.
        second = "second-" + secrets.token_hex(2)
        make(second)
        wait_until(lambda: made(second), 10)
        assert time.time() < elevated_by + ELEVATION_S, "the second change took longer than the window"
        assert not page.shows("#elevate-form")
        # Once the window has passed, the next change asks again.
        wait_until(lambda: time.time() > elevated_by + ELEVATION_S + 0.2, ELEVATION_S + 5)
        third = "third-" + secrets.token_hex(2)
        make(third)
        wait_until(lambda: page.shows("#elevate-form"), 10)
        assert not made(third)
        page.fill("#elevate-input", TOKEN)
        page.click("#elevate-save")
        wait_until(lambda: made(third), 10)
        assert not page.shows("#elevate-form")
        page.screenshot(tmp_path / "dashboard-sessions.png")
    finally:
        page.close()
