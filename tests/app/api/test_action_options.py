"""POST /action's options: a click that opens a tab, a covered element, click modes, owner and browser."""
from __future__ import annotations

from support.agent import compact, nav, ref_of, text
from support.waits import wait_until


def log(client) -> str:
    """What h4_actions.html noted of the clicks it got."""
    return client.get("/text?mode=raw").json["text"]


def test_a_covered_click_is_refused_naming_what_covers_it(client, site):
    nav(client, site.url("h4_actions.html"))
    r = client.post("/action", json={"kind": "click", "selector": "#under"})
    assert r.status_code == 409 and r.json["code"] == "element_occluded"
    assert r.json["details"]["coveredBy"] == 'div#veil.overlay "Cookie banner"'
    assert r.json["error"].startswith("element is occluded: ") and "Cookie banner" in r.json["error"]
    assert "veil" not in log(client) and "under" not in log(client)  # neither got the click
    # hover and the humanized click are refused the same way
    assert client.post("/action", json={"kind": "hover", "selector": "#under"}).json["code"] == "element_occluded"
    r = client.post("/action", json={"kind": "click", "selector": "#under", "humanize": True})
    assert r.json["code"] == "element_occluded"
    # asked for, the DOM click reaches the element itself
    r = client.post("/action", json={"kind": "click", "selector": "#under", "mode": "dom"})
    assert r.status_code == 200 and r.json["result"] == {"clicked": True, "method": "dom"}
    assert "under" in log(client) and "veil" not in log(client)


def test_dispatch_mode_fires_the_events_of_a_click_and_dom_mode_only_the_click(client, site):
    nav(client, site.url("h4_actions.html"))
    client.post("/action", json={"kind": "click", "selector": "#events"})
    assert "pointerdown mousedown pointerup mouseup click" in log(client)
    r = client.post("/action", json={"kind": "click", "selector": "#events", "mode": "dispatch"})
    assert r.json["result"] == {"clicked": True, "method": "dispatch"}
    assert "pointerdown* mousedown* pointerup* mouseup* click*" in log(client)
    client.post("/action", json={"kind": "click", "selector": "#events", "mode": "dom"})
    assert log(client).endswith("click* click*")  # el.click(): a click event alone
    r = client.post("/action", json={"kind": "click", "x": 10, "y": 10, "mode": "dom"})
    assert r.status_code == 400 and "element target" in r.json["error"]
    r = client.post("/action", json={"kind": "click", "selector": "#events", "mode": "dom", "humanize": True})
    assert r.status_code == 400 and r.json["details"]["field"] == "mode"
    r = client.post("/action", json={"kind": "click", "selector": "#events", "mode": "teleport"})
    assert r.status_code == 400 and r.json["details"]["field"] == "mode"


def test_a_click_that_opens_a_tab_switches_the_caller_to_it(client, site):
    opener = nav(client, site.url("h4_actions.html"))["tabId"]
    r = client.post("/action", json={"kind": "click", "selector": "#blank"})
    assert r.status_code == 200, r.json
    new = r.json["result"]["switchedToTab"]
    assert new != opener and r.json["result"]["openedTab"] == new
    assert r.headers["X-PinchTab-Tab-Id"] == opener
    # the caller's next read lands on the new tab, which is listed first
    wait_until(lambda: "Counter" in text(client))
    assert client.get("/tabs").json["tabs"][0]["id"] == new
    # window.open from a click handler too; autoSwitch: false stays and closes the tab it opened
    before = {t["id"] for t in client.get("/tabs").json["tabs"]}
    r = client.post("/action", json={"kind": "click", "selector": "#popup", "tabId": opener, "autoSwitch": False})
    popup = r.json["result"]["closedTab"]
    assert "switchedToTab" not in r.json["result"] and "openedTab" not in r.json["result"]
    assert popup not in (opener, new)
    tabs = client.get("/tabs").json["tabs"]
    assert tabs[0]["id"] == opener and {t["id"] for t in tabs} == before
    assert client.get(f"/tabs/{popup}/text").status_code == 404
    # a click that opens nothing says nothing about tabs
    r = client.post("/action", json={"kind": "click", "selector": "#plain"})
    assert "openedTab" not in r.json["result"]


def test_an_agent_is_switched_in_a_batch_and_other_callers_are_not(client, site):
    opener = nav(client, site.url("h4_actions.html"))["tabId"]
    agent = {"X-Agent-Id": "scout"}
    r = client.post("/actions", headers=agent, json={"tabId": opener, "actions": [
        {"kind": "click", "selector": "#popup"}]})
    new = r.json["results"][0]["result"]["switchedToTab"]
    # the agent's current tab is the popup; anonymous callers stay where they were
    wait_until(lambda: client.get("/text", headers=agent).json.get("title") == "E2E Test - Form")
    assert client.get("/tabs").json["tabs"][0]["id"] == opener
    assert client.get("/tabs", headers=agent).json["tabs"][0]["id"] == new


def test_browser_field_names_an_engine(client, site):
    nav(client, site.url("h4_actions.html"))
    assert client.post("/action", json={"kind": "click", "selector": "#plain", "browser": "chrome"}).status_code == 200
    r = client.post("/action", json={"kind": "click", "selector": "#plain", "browser": "cloak"})
    assert r.status_code == 409 and r.json["code"] == "browser_conflict"
    r = client.post("/action", json={"kind": "click", "selector": "#plain", "browser": "netscape"})
    assert r.status_code == 400 and r.json["code"] == "bad_browser"
    assert log(client).count("plain") == 1


def test_browser_query_names_an_engine_on_every_route(client, site):
    tab_id = nav(client, site.url("h4_actions.html"))["tabId"]
    for path in ("/text", "/snapshot", f"/tabs/{tab_id}/title", "/screenshot", "/network"):
        r = client.get(f"{path}?browser=nonexistent_xyz")
        assert r.status_code == 400 and r.json["code"] == "bad_browser", (path, r.json)
        r = client.get(f"{path}?browser=cloak")
        assert r.status_code == 409 and r.json["code"] == "browser_conflict", (path, r.json)
    r = client.post("/action?browser=nonexistent_xyz", json={"kind": "click", "selector": "#plain"})
    assert r.status_code == 400 and r.json["code"] == "bad_browser"
    assert log(client).count("plain") == 0  # refused before it ran
    for query in ("browser=", "browser=chrome", "browser=Chrome"):  # empty: the default engine
        assert client.get(f"/text?{query}").status_code == 200, query


def moving_target_log(client) -> str:
    return client.get("/text?mode=raw").json["text"].split("Target")[-1].strip()


def test_a_click_on_an_element_that_moves_as_it_is_clicked_reaches_it_or_nothing(client, site):
    # The page adds a row above the button as the pointer arrives: the press would land on the row.
    nav(client, site.url("moving_target.html?shifts=1"))
    ref = ref_of(compact(client), "button", "Target")
    r = client.post("/action", json={"kind": "click", "ref": ref})
    assert r.status_code == 200 and r.json["result"]["clicked"] is True, r.json
    assert moving_target_log(client) == "target"  # the row never saw the press that was aimed at the button
    nav(client, site.url("moving_target.html?shifts=1"))
    r = client.post("/action", json={"kind": "click", "selector": "#target", "humanize": True})
    assert r.status_code == 200 and moving_target_log(client) == "target", r.json
    # A target that keeps moving is refused, naming what the clicks reached, and nothing got them.
    nav(client, site.url("moving_target.html?shifts=10"))
    r = client.post("/action", json={"kind": "click", "selector": "#target"})
    assert r.status_code == 409 and r.json["code"] == "element_occluded", r.json
    assert r.json["details"]["coveredBy"] == 'button.decoy "Decoy"' and "kept moving" in r.json["error"]
    assert moving_target_log(client) == ""
    # The guard ends with the click: the page's own clicks (a decoy, clicked through the DOM) go on.
    r = client.post("/action", json={"kind": "click", "selector": ".decoy", "mode": "dom"})
    assert r.status_code == 200 and moving_target_log(client) == "decoy"
