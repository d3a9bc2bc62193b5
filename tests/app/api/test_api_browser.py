"""The bridge's HTTP API against a real headless Chromium and pages served on 127.0.0.1."""
from __future__ import annotations

import re
import threading

from support.agent import compact, nav, ref_of, text
from support.waits import wait_until


# --- navigate and tabs -----------------------------------------------------------------------
def test_navigate_returns_tab_url_and_title(client, site):
    out = nav(client, site.url("form.html"))
    assert re.fullmatch(r"[0-9A-F]{32}", out["tabId"])
    assert out["url"] == site.url("form.html")
    assert out["title"] == "E2E Test - Form"


def test_anonymous_navigate_opens_a_new_tab_each_time_and_reads_follow_the_newest(client, site):
    a = nav(client, site.url("form.html"))["tabId"]
    b = nav(client, site.url("table.html"))["tabId"]
    assert a != b
    ids = [t["id"] for t in client.get("/tabs").json["tabs"]]
    assert a in ids and b in ids
    assert ids[0] == b  # the current tab is listed first
    assert "Orders" in text(client)


def test_navigate_get_form_and_tab_twin(client, site):
    tab = client.get(f"/navigate?url={site.url('form.html')}").json["tabId"]
    r = client.post(f"/tabs/{tab}/navigate", json={"url": site.url("table.html")})
    assert r.status_code == 200 and r.json["tabId"] == tab and r.json["title"] == "Orders"


def test_back_on_a_fresh_tab_stays_and_back_forward_move_between_pages(client, site):
    tab = nav(client, site.url("links.html"))["tabId"]
    r = client.post(f"/back?tabId={tab}")
    assert r.status_code == 200 and r.json["url"] == site.url("links.html")
    nav(client, site.url("form.html"), tabId=tab)
    assert client.post(f"/tabs/{tab}/back").json["url"] == site.url("links.html")
    assert client.post(f"/tabs/{tab}/forward").json["url"] == site.url("form.html")
    r = client.post(f"/reload?tabId={tab}")
    assert r.status_code == 200 and r.json["title"] == "E2E Test - Form"


def test_navigate_rejects_other_schemes_and_missing_url(client):
    for url in ("javascript:alert(1)", "file:///etc/passwd", "chrome://settings", "ftp://x/y"):
        r = client.post("/navigate", json={"url": url})
        assert r.status_code in (400, 403) and r.json["code"] in ("bad_url", "file_scheme_disabled"), url
    r = client.post("/navigate", json={})
    assert r.status_code == 400 and "url" in r.json["error"]


def test_navigate_to_an_unreachable_host_is_a_clear_error_and_closes_the_tab(client, browser):
    before = len(browser.pages())
    from bench.processes import free_port

    r = client.post("/navigate", json={"url": f"http://127.0.0.1:{free_port()}/nothing"})
    assert r.status_code == 502 and r.json["code"] == "navigation_failed"
    assert "ERR_CONNECTION_REFUSED" in r.json["error"]
    wait_until(lambda: len(browser.pages()) == before, 5)


def test_slow_page_times_out_within_its_deadline(client, site):
    r = client.post("/navigate", json={"url": site.url("slow?ms=5000"), "timeout": 1})
    assert r.status_code == 504 and r.json["code"] == "timeout" and r.json["retryable"] is True


def test_wait_for_selector_waits_for_the_element(client, site):
    r = client.post("/navigate", json={"url": site.url("form.html"), "waitFor": "selector",
                                       "waitSelector": "#agree"})
    assert r.status_code == 200
    r = client.post("/navigate", json={"url": site.url("form.html"), "waitFor": "selector",
                                       "waitSelector": "#never", "timeout": 1})
    assert r.status_code == 504


def test_tab_new_focus_close_and_their_errors(client, site):
    r = client.post("/tab", json={"action": "new", "url": site.url("form.html")})
    assert r.status_code == 200 and r.json["title"] == "E2E Test - Form"
    tab = r.json["tabId"]
    assert client.post("/tab", json={"action": "focus", "tabId": tab}).json == {"focused": True, "tabId": tab}
    r = client.post("/tab", json={"action": "focus"})
    assert r.status_code == 400 and "tabId" in r.json["error"]
    r = client.post("/tab", json={"action": "focus", "tabId": "0" * 32})
    assert r.status_code == 404 and "not found" in r.json["error"]
    r = client.post("/tab", json={"action": "close"})
    assert r.status_code == 400 and "action" in r.json["error"]
    count = len(client.get("/tabs").json["tabs"])
    r = client.post(f"/tabs/{tab}/close")
    assert r.status_code == 200 and r.json == {"closed": True, "tabId": tab}
    assert len(client.get("/tabs").json["tabs"]) == count - 1
    r = client.get(f"/tabs/{tab}/snapshot")
    assert r.status_code == 404 and r.json["code"] == "tab_not_found"


def test_close_body_tab_id_must_match_the_path(client, site):
    tab = nav(client, site.url("form.html"))["tabId"]
    r = client.post(f"/tabs/{tab}/close", json={"tabId": "OTHER"})
    assert r.status_code == 400 and "does not match" in r.json["error"]


def test_agents_keep_their_own_current_tab(client, site):
    a = client.post("/navigate", json={"url": site.url("form.html")}, headers={"X-Agent-Id": "alice"}).json["tabId"]
    b = client.post("/navigate", json={"url": site.url("table.html")}, headers={"X-Agent-Id": "bob"}).json["tabId"]
    assert a != b
    # alice's next navigate reuses her tab; her reads stay on it whatever bob does
    again = client.post("/navigate", json={"url": site.url("links.html")}, headers={"X-Agent-Id": "alice"})
    assert again.json["tabId"] == a
    assert client.get("/text", headers={"X-Agent-Id": "bob"}).json["title"] == "Orders"
    assert client.get("/text", headers={"X-Agent-Id": "alice"}).json["title"] == "Links"
    r = client.get("/snapshot", headers={"X-Agent-Id": "carol"})
    assert r.status_code == 409 and r.json["code"] == "no_current_tab"


# --- snapshot ----------------------------------------------------------------------------------
def test_interactive_compact_snapshot_of_a_form(client, site):
    nav(client, site.url("form.html"))
    snap = compact(client)
    assert snap.splitlines() == [
        f"# E2E Test - Form | {site.url('form.html')} | 9 nodes",
        'heading Form Test',
        'e1 textbox Username:',
        'e2 textbox Email:',
        'e3 textbox Password:',
        'e4 combobox Country: val="Select country"',
        'e5 checkbox I agree to the terms',
        'e6 textbox Notes',
        'e7 button Submit',
        'e8 button Reset',
    ]


def test_snapshot_json_lists_nodes_in_document_order_with_details(client, site):
    nav(client, site.url("form.html"))
    r = client.get("/snapshot?filter=interactive")
    doc = r.json
    assert doc["title"] == "E2E Test - Form" and doc["count"] == len(doc["nodes"])
    first_textbox = next(n for n in doc["nodes"] if n["role"] == "textbox")
    assert first_textbox["name"] == "Username:" and first_textbox.get("placeholder") == "Enter username"
    assert first_textbox["tag"] == "input"
    roles = [n["role"] for n in doc["nodes"]]
    assert roles.index("heading") < roles.index("textbox") < roles.index("combobox") < roles.index("button")


def test_interactive_and_compact_spellings_are_accepted(client, site):
    nav(client, site.url("form.html"))
    a = client.get("/snapshot?interactive=true&compact=true").data.decode()
    b = compact(client)
    assert a == b


def test_text_and_yaml_formats(client, site):
    nav(client, site.url("form.html"))
    t = client.get("/snapshot?format=text").data.decode()
    assert not t.startswith("{") and t.startswith("# E2E Test - Form\n")
    assert re.search(r'^\s+e\d+ heading "Form Test"', t, re.M)
    y = client.get("/snapshot?format=yaml")
    assert y.content_type.startswith("text/yaml")
    body = y.data.decode()
    assert "role:" in body and "name:" in body and "ref:" in body


def test_depth_limits_the_tree(client, site):
    nav(client, site.url("login.html"))
    full = client.get("/snapshot").json["nodes"]
    shallow = client.get("/snapshot?depth=1").json["nodes"]
    assert max(n["depth"] for n in shallow) <= 1 < max(n["depth"] for n in full)


def test_selector_limits_the_snapshot_to_a_subtree(client, site):
    nav(client, site.url("table.html"))
    nodes = client.get("/snapshot?selector=tbody tr:nth-child(2)").json["nodes"]
    names = [n["name"] for n in nodes]
    assert "Alan Turing" in names and "Ada Lovelace" not in names
    r = client.get("/snapshot?selector=%23nope")
    assert r.status_code == 404 and r.json["code"] == "element_not_found"


def test_max_tokens_cuts_at_a_node_and_pages_with_a_cursor(client, site):
    nav(client, site.url("form.html"))
    whole = client.get("/snapshot").json["nodes"]
    first = client.get("/snapshot?maxTokens=60").json
    assert first["truncated"] is True and 0 < first["count"] < len(whole)
    refs = [n["ref"] for n in first["nodes"]]
    cursor = first["next"]
    assert cursor == f"after={refs[-1]}"
    rest = client.get(f"/snapshot?{cursor}").json["nodes"]
    assert [n["ref"] for n in whole] == refs + [n["ref"] for n in rest]
    text_cut = client.get("/snapshot?format=compact&maxTokens=20").data.decode()
    assert "(truncated to ~20 tokens)" in text_cut.splitlines()[0] and "# next: after=" in text_cut


def test_password_values_never_reach_the_snapshot(client, site):
    nav(client, site.url("login.html"))
    snap = compact(client)
    pw = ref_of(snap, "textbox", "Password")
    assert client.post("/action", json={"kind": "type", "ref": pw, "text": "hunter2"}).status_code == 200
    for fmt in ("compact", "json", "text", "yaml"):
        body = client.get(f"/snapshot?format={fmt}").data.decode()
        assert "hunter2" not in body
    assert 'val="\u2022\u2022\u2022\u2022\u2022\u2022\u2022\u2022"' in compact(client)


# --- refs --------------------------------------------------------------------------------------
def test_a_ref_stays_with_its_element_across_snapshots_and_filters(client, site):
    nav(client, site.url("form.html"))
    full = client.get("/snapshot").json["nodes"]
    inter = client.get("/snapshot?filter=interactive").json["nodes"]
    by_ref = {n["ref"]: (n["role"], n["name"]) for n in full}
    for n in inter:
        assert by_ref[n["ref"]] == (n["role"], n["name"])
    assert client.get("/snapshot?filter=interactive").json["nodes"] == inter


def test_stale_ref_is_rejected_not_rebound(client, site):
    nav(client, site.url("rerender.html"))
    snap = compact(client)
    beta = ref_of(snap, "button", "Beta")
    assert client.post("/action", json={"kind": "click", "selector": "#rerender"}).status_code == 200
    r = client.post("/action", json={"kind": "click", "ref": beta})
    assert r.status_code == 409 and r.json["code"] == "stale_ref"
    cands = r.json["details"]["candidates"]
    assert cands and all(c["role"] == "button" and c["name"] == "Beta" for c in cands)
    assert cands[0]["ref"] != beta
    assert "clicked" not in text(client, mode="raw")  # nothing was clicked
    r = client.post("/action", json={"kind": "click", "ref": cands[0]["ref"]})
    assert r.status_code == 200 and "clicked Beta" in text(client, mode="raw")


def test_new_elements_get_new_numbers_and_old_refs_keep_theirs(client, site):
    nav(client, site.url("rerender.html"))
    before = compact(client)
    add = ref_of(before, "button", "Add item")
    client.post("/action", json={"kind": "click", "ref": add})
    after = compact(client)
    assert ref_of(after, "button", "Add item") == add
    delta = int(ref_of(after, "button", "Delta")[1:])
    assert delta > max(int(r[1:]) for r in re.findall(r"^e(\d+)", before, re.M) and
                       [f"e{x}" for x in re.findall(r"^e(\d+)", before, re.M)])


def test_numbering_restarts_on_a_new_document_and_old_refs_go_stale(client, site):
    tab = nav(client, site.url("form.html"))["tabId"]
    old = compact(client)
    submit = ref_of(old, "button", "Submit")
    nav(client, site.url("table.html"), tabId=tab)
    assert compact(client).splitlines()[1].startswith("e0 ")
    r = client.post("/action", json={"kind": "click", "ref": submit, "tabId": tab})
    # the ref number exists again in the new document only if reissued; either way never the old button
    if r.status_code == 200:
        assert "Submit" not in compact(client)
    else:
        assert r.json["code"] in ("stale_ref", "ref_not_found")


def test_unknown_ref_is_404(client, site):
    nav(client, site.url("form.html"))
    r = client.post("/action", json={"kind": "click", "ref": "e999999"})
    assert r.status_code == 404 and r.json["code"] == "ref_not_found"


# --- actions ----------------------------------------------------------------------------------
def test_log_in_read_a_table_and_click_by_ref(client, site):
    nav(client, site.url("login.html"))
    snap = compact(client)
    assert client.post("/action", json={"kind": "fill", "ref": ref_of(snap, "textbox", "Username"),
                                        "text": "agent"}).json == {"success": True, "result": {"filled": True, "len": 5}}
    client.post("/action", json={"kind": "type", "ref": ref_of(snap, "textbox", "Password"), "text": "s3cret"})
    r = client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Sign in"), "waitNav": True})
    assert r.status_code == 200 and r.json["result"] == {"clicked": True, "navigated": True}
    assert client.get("/text").json["title"] == "Welcome"
    client.post("/action", json={"kind": "click", "ref": ref_of(compact(client), "link", "Orders"), "waitNav": True})
    assert client.get("/text").json["title"] == "Orders"
    orders = compact(client)
    # each row on one line, its button (with a ref) right after it
    assert "row Order | Customer | Total |\n" in orders and "row 1002 | Alan Turing | €99.00\n" in orders
    lines = orders.splitlines()
    turing = next(i for i, l in enumerate(lines) if "Alan Turing" in l)
    details = lines[turing + 1].split(" ")[0]
    assert lines[turing + 1] == f"{details} button Details"
    client.post("/action", json={"kind": "click", "ref": details})
    assert "Order 1002 shipped" in text(client)


def test_type_press_and_the_keys_reach_the_page(client, site):
    nav(client, site.url("form.html"))
    client.post("/action", json={"kind": "type", "selector": "#username", "text": "héllo wörld 😀 \"q\" <b>"})
    val = client.get("/snapshot?filter=interactive").json["nodes"]
    user = next(n for n in val if n["name"] == "Username:")
    assert user["value"] == "héllo wörld 😀 \"q\" <b>"
    r = client.post("/action", json={"kind": "press", "key": "Enter", "selector": "#username", "waitNav": True})
    assert r.json == {"success": True, "result": {"pressed": "Enter", "navigated": True}}
    assert client.get("/text").json["title"] == "Echo"
    assert "username=h" in client.get("/text?mode=raw").json["text"]


def test_long_text_types_fully(client, site):
    nav(client, site.url("form.html"))
    long = "The quick brown fox jumps over the lazy dog. " * 6
    client.post("/action", json={"kind": "type", "selector": "#notes", "text": long})
    notes = next(n for n in client.get("/snapshot?filter=interactive").json["nodes"] if n["name"] == "Notes")
    assert notes["value"] == long


def test_fill_select_check_uncheck_focus(client, site):
    nav(client, site.url("form.html"))
    snap = compact(client)
    user = ref_of(snap, "textbox", "Username:")
    client.post("/action", json={"kind": "type", "ref": user, "text": "old"})
    client.post("/action", json={"kind": "fill", "ref": user, "text": "new"})
    assert 'val="new"' in compact(client)
    r = client.post("/action", json={"kind": "select", "ref": ref_of(snap, "combobox", "Country:"), "value": "Japan"})
    assert r.json["result"] == {"selected": "jp", "text": "Japan"}
    box = ref_of(snap, "checkbox", "I agree to the terms")
    assert client.post("/action", json={"kind": "check", "ref": box}).json["result"] == {"checked": True}
    assert client.post("/action", json={"kind": "check", "ref": box}).json["result"] == {"checked": True}
    assert client.post("/action", json={"kind": "uncheck", "ref": box}).json["result"] == {"checked": False}
    r = client.post("/action", json={"kind": "check", "ref": ref_of(snap, "button", "Submit")})
    assert r.status_code == 400 and r.json["code"] == "action_failed"
    r = client.post("/action", json={"kind": "select", "ref": ref_of(snap, "combobox", "Country:"), "value": "Mars"})
    assert r.status_code == 400 and "Mars" in r.json["error"]
    r = client.post("/action", json={"kind": "fill", "ref": ref_of(snap, "button", "Submit"), "text": "x"})
    assert r.status_code == 400 and "not a text field" in r.json["error"]
    assert client.post("/action", json={"kind": "focus", "ref": user}).status_code == 200
    assert f'{user} textbox Username: val="new" *' in compact(client)


def test_hover_covered_click_and_coordinates(client, site):
    nav(client, site.url("counter.html"))
    snap = compact(client)
    assert client.post("/action", json={"kind": "hover", "ref": ref_of(snap, "button", "Hover me")}).status_code == 200
    assert " button Hovered\n" in compact(client)
    r = client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Covered")})
    assert r.status_code == 409 and r.json["code"] == "element_occluded"  # the overlay would get it
    r = client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Covered"), "mode": "dom"})
    assert r.json["result"] == {"clicked": True, "method": "dom"}
    assert "covered clicked" in text(client)
    inc = ref_of(snap, "button", "Increment")
    client.post("/action", json={"kind": "dblclick", "ref": inc})
    assert client.get("/text").json["text"].split("\n")[2] == "2"


def test_scroll_moves_the_page_and_scrolls_elements_into_view(client, site):
    nav(client, site.url("links.html"))
    r = client.post("/action", json={"kind": "scroll", "direction": "down", "pixels": 500})
    assert r.status_code == 200 and r.json["result"]["y"] > 0
    r = client.post("/action", json={"kind": "scroll", "selector": "#far"})
    assert r.json["result"]["y"] > 1000
    far = ref_of(compact(client), "button", "Far button")
    client.post("/action", json={"kind": "scroll", "direction": "up", "pixels": 5000})
    assert client.post("/action", json={"kind": "click", "ref": far}).json["result"] == {"clicked": True}


def test_click_a_link_navigates_with_wait_nav(client, site):
    nav(client, site.url("links.html"))
    r = client.post("/action", json={"kind": "click", "ref": ref_of(compact(client), "link", "Go to table"),
                                     "waitNav": True})
    assert r.json["result"]["navigated"] is True
    assert client.get("/text").json["title"] == "Orders"


def test_an_unexpected_navigation_is_reported_not_hidden(client, site):
    nav(client, site.url("links.html"))
    snap = compact(client)
    r = client.post("/action", json={"kind": "click", "ref": ref_of(snap, "link", "Go to form")})
    assert r.status_code == 409 and r.json["code"] == "navigation_changed"
    wait_until(lambda: client.get("/text").json["title"] == "E2E Test - Form", 10)
    # a same-document jump is not a navigation: refs stay valid
    nav(client, site.url("links.html"))
    snap = compact(client)
    r = client.post("/action", json={"kind": "click", "ref": ref_of(snap, "link", "Jump")})
    assert r.status_code == 200
    assert client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Far button")}).status_code == 200


def test_action_errors_name_the_problem(client, site):
    nav(client, site.url("form.html"))
    cases = [
        ({"kind": "zap"}, 400, "unknown action kind"),
        ({}, 400, "kind"),
        ({"kind": "type", "ref": "e1"}, 400, "text"),
        ({"kind": "click"}, 400, "target"),
        ({"kind": "press"}, 400, "key"),
        ({"kind": "click", "selector": "#nope"}, 404, "matches no element"),
        ({"kind": "press", "key": "NoSuchKey"}, 400, "unknown key"),
        ({"kind": "click", "ref": "e1", "x": "left"}, 400, "x"),
    ]
    for body, status, words in cases:
        r = client.post("/action", json=body)
        assert r.status_code == status and words in r.json["error"], (body, r.json)
    r = client.post("/action", data="{not json", content_type="application/json")
    assert r.status_code == 400 and r.json["code"] == "bad_json"
    r = client.post("/action", json=[1, 2])
    assert r.status_code == 400 and r.json["code"] == "bad_json"
    r = client.get("/nope")
    assert r.status_code == 404 and r.json["code"] == "not_found"
    r = client.delete("/navigate")
    assert r.status_code == 405 and r.json["code"] == "method_not_allowed"


# --- shadow DOM and frames ------------------------------------------------------------------------
def test_open_shadow_dom_is_in_the_snapshot_and_its_refs_work(client, site):
    nav(client, site.url("shadow.html"))
    snap = compact(client)
    coupon = ref_of(snap, "textbox", "Coupon")
    client.post("/action", json={"kind": "type", "ref": coupon, "text": "SAVE10"})
    client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Apply coupon")})
    assert "applied SAVE10" in text(client)


def test_same_origin_iframe_content_is_inlined_and_actionable(client, site):
    nav(client, site.url("iframe.html"))
    wait_until(lambda: " button Go\n" in compact(client), 10)
    doc = client.get("/snapshot?filter=interactive").json
    roles = [(n["role"], n["name"]) for n in doc["nodes"]]
    owner = next(i for i, (r, _) in enumerate(roles) if r.lower() == "iframe")
    assert ("button", "Go") in roles[owner:] and ("button", "Outer button") in roles[:owner]
    go = next(n for n in doc["nodes"] if n["name"] == "Go")
    assert go["depth"] > doc["nodes"][owner]["depth"] and go.get("frameId")
    snap = compact(client)
    client.post("/action", json={"kind": "type", "ref": ref_of(snap, "textbox", "Search"), "text": "frames"})
    client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Go")})
    assert "searched frames" in text(client, mode="raw")


# --- text and screenshot ----------------------------------------------------------------------------
def test_text_modes_limits_and_plain_format(client, site):
    nav(client, site.url("table.html"))
    readable = client.get("/text").json
    assert readable["title"] == "Orders" and "Ada Lovelace" in readable["text"]
    assert "Sign out" not in readable["text"]  # page chrome (nav) is left out
    assert "Sign out" in client.get("/text?mode=raw").json["text"]
    cut = client.get("/text?maxChars=10").json
    assert len(cut["text"]) == 10 and cut["truncated"] is True
    plain = client.get("/text?format=text")
    assert plain.content_type.startswith("text/plain") and "Ada Lovelace" in plain.data.decode()
    assert client.get("/text?mode=fancy").status_code == 400


def test_screenshot_jpeg_png_raw_and_full_page(client, site):
    import base64

    nav(client, site.url("links.html"))
    shot = client.get("/screenshot").json
    assert shot["format"] == "jpeg" and base64.b64decode(shot["base64"])[:3] == b"\xff\xd8\xff"
    raw = client.get("/screenshot?format=png&raw=true")
    assert raw.content_type == "image/png" and raw.data[:8] == b"\x89PNG\r\n\x1a\n"
    full = client.get("/screenshot?format=png&raw=true&beyondViewport=true").data
    import struct

    h_view = struct.unpack(">I", raw.data[20:24])[0]
    h_full = struct.unpack(">I", full[20:24])[0]
    assert h_full > h_view
    half = client.get("/screenshot?format=png&raw=true&scale=0.5").data
    assert struct.unpack(">I", half[16:20])[0] < struct.unpack(">I", raw.data[16:20])[0]
    assert client.get("/screenshot?quality=500").status_code == 400


def test_evaluate_is_off_until_configured(client, site):
    nav(client, site.url("form.html"))
    r = client.post("/evaluate", json={"expression": "1+1"})
    assert r.status_code == 403 and r.json["code"] == "evaluate_disabled"
    assert r.json["details"]["setting"] == "security.allowEvaluate"


def test_evaluate_returns_json_values_when_allowed(app_factory, site):
    c = app_factory(**{"security.allowEvaluate": True}).test_client()
    nav(c, site.url("form.html"))
    assert c.post("/evaluate", json={"expression": "1+1"}).json == {"result": 2}
    assert c.post("/evaluate", json={"expression": "document.title"}).json == {"result": "E2E Test - Form"}
    assert c.post("/evaluate", json={"expression": "undefined"}).json == {"result": None}
    assert c.post("/evaluate", json={"expression": "Promise.resolve([1, {a: true}])", "awaitPromise": True}).json == \
        {"result": [1, {"a": True}]}
    r = c.post("/evaluate", json={"expression": "throw new Error('boom')"})
    assert r.status_code == 400 and "boom" in r.json["error"]
    assert c.post("/evaluate", json={}).status_code == 400


def test_evaluates_on_one_tab_never_interleave_with_each_other_or_with_jobs(app_factory, site):
    app = app_factory(**{"security.allowEvaluate": True})
    c = app.test_client()
    tab = nav(c, site.url("form.html"))["tabId"]
    # Each call notes when it started and ended, in the page; the first holds the tab 400 ms.
    timed = ("(async () => {{ const s = performance.now(); await new Promise(r => setTimeout(r, {ms}));"
             " return [s, performance.now()]; }})()")
    spans: dict[str, list[float]] = {}

    def run(name: str, ms: int) -> None:
        r = app.test_client().post("/evaluate", json={"tabId": tab, "expression": timed.format(ms=ms),
                                                      "awaitPromise": True})
        spans[name] = r.json["result"]

    first = threading.Thread(target=run, args=("first", 400))
    first.start()
    browser_tab = app.extensions["pinchtab"].browser.tab(tab)
    wait_until(lambda: browser_tab.busy, 5)
    second = threading.Thread(target=run, args=("second", 0))
    second.start()
    first.join(10)
    second.join(10)
    assert spans["second"][0] >= spans["first"][1], spans  # it waited for the first's answer
    # A call that comes while a job holds the tab (a slow navigation) runs after it, on its page.
    moving = threading.Thread(target=lambda: app.test_client().post(
        f"/tabs/{tab}/navigate", json={"url": site.url("slow?ms=800")}), daemon=True)
    loads = browser_tab.loads_started
    moving.start()
    wait_until(lambda: browser_tab.loads_started != loads, 5)
    assert c.post("/evaluate", json={"tabId": tab, "expression": "document.title"}).json == {"result": "Slow"}
    moving.join(10)


def test_json_is_read_whatever_the_content_type_says(client, site):
    import json

    r = client.post("/navigate", data=json.dumps({"url": site.url("form.html")}),
                    content_type="application/x-www-form-urlencoded")  # what curl -d sends
    assert r.status_code == 200 and r.json["title"] == "E2E Test - Form"


def test_closed_shadow_roots_are_pierced_and_marked(client, site):
    nav(client, site.url("closed_shadow.html"))
    snap = compact(client)
    assert "textbox Promo" in snap and "button Deep closed button" in snap and "link Open inside closed" in snap
    client.post("/action", json={"kind": "click", "ref": ref_of(snap, "button", "Deep closed button")})
    assert "deep clicked" in text(client, mode="raw")


def test_snapshot_to_a_file_stays_inside_the_state_dir(app_factory, site, tmp_path):
    import os

    client = app_factory().test_client()
    nav(client, site.url("form.html"))
    r = client.get("/snapshot?filter=interactive&format=compact&output=file")
    saved = r.json
    path = saved["path"]
    assert r.status_code == 200 and saved["format"] == "compact" and saved["size"] > 0
    assert path.startswith(str(tmp_path)) and "/snapshots/" in path and os.stat(path).st_mode & 0o777 == 0o600
    assert "textbox Username:" in open(path).read()
    r = client.get("/snapshot?output=file&path=mine/form.json")
    assert r.status_code == 200 and r.json["path"].endswith("/mine/form.json")
    for bad in ("../escape.json", "/etc/passwd", "mine/../../x.json"):
        r = client.get(f"/snapshot?output=file&path={bad}")
        assert r.status_code == 400 and r.json["code"] == "invalid_output_path", bad


def test_output_files_never_replace_what_pinchtab_keeps(app_factory, site, tmp_path):
    # A page could once rewrite the config with <img src=".../screenshot?output=file&path=config.json">.
    state = (tmp_path / ".pinchtab").resolve()
    state.mkdir(exist_ok=True)
    kept = {"config.json": b'{"server": {}}', "sessions/agents.json": b"[]", "activity/2026-11-27.jsonl": b"{}\n"}
    for name, data in kept.items():
        (state / name).parent.mkdir(parents=True, exist_ok=True)
        (state / name).write_bytes(data)
    client = app_factory().test_client()
    nav(client, site.url("form.html"))
    for route in ("/screenshot?output=file&path=", "/snapshot?output=file&path=", "/pdf?output=file&path="):
        r = client.get(route + "config.json")
        assert r.status_code == 200 and r.json["path"] == str(state / "outputs" / "config.json"), r.json
        for bad in ("../config.json", str(state / "config.json"), "../sessions/agents.json",
                    "../activity/2026-11-27.jsonl"):
            r = client.get(route + bad)
            assert r.status_code == 400 and r.json["code"] == "invalid_output_path", (route, bad)
    assert {name: (state / name).read_bytes() for name in kept} == kept


def test_tabs_show_titles_as_the_page_has_them_and_closed_tabs_stay_gone(client, site):
    tab = nav(client, site.url("table.html"))["tabId"]
    listed = {t["id"]: t for t in client.get("/tabs").json["tabs"]}
    assert listed[tab]["title"] == "Orders"
    client.post(f"/tabs/{tab}/close")
    assert tab not in {t["id"] for t in client.get("/tabs").json["tabs"]}


def test_an_agent_whose_tab_was_closed_gets_a_new_one(client, site):
    agent = {"X-Agent-Id": "dora"}
    first = client.post("/navigate", json={"url": site.url("form.html")}, headers=agent).json["tabId"]
    assert client.post(f"/tabs/{first}/close").status_code == 200
    r = client.post("/navigate", json={"url": site.url("table.html")}, headers=agent)
    assert r.status_code == 200 and r.json["tabId"] != first and r.json["title"] == "Orders"
