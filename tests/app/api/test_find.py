"""POST /find's hints against real Chromium: a negative part ("log in button not sign up") leaves
out what it describes, and a place on the screen ("top button", "bottom button") ranks the
matches by where they are."""
from __future__ import annotations

from typing import Any


def nav(client: Any, url: str) -> str:
    r = client.post("/navigate", json={"url": url})
    assert r.status_code == 200, r.json
    return r.json["tabId"]


def best(client: Any, tab_id: str, query: str) -> dict[str, Any]:
    r = client.post("/find", json={"query": query, "tabId": tab_id})
    assert r.status_code == 200, r.json
    return r.json


def name_of(found: dict[str, Any]) -> str:
    return next(m["name"] for m in found["matches"] if m["ref"] == found["best_ref"])


def test_a_negative_part_leaves_out_what_it_describes(client: Any, site: Any) -> None:
    tab_id = nav(client, site.url("find_hints.html"))
    login = best(client, tab_id, "log in")
    assert name_of(login) == "Log In"
    kept = best(client, tab_id, "log in button not sign up")
    assert kept["best_ref"] == login["best_ref"] and all(m["name"] != "Sign Up" for m in kept["matches"])
    other = best(client, tab_id, "button not log in")
    assert other["best_ref"] and other["best_ref"] != login["best_ref"]
    assert name_of(other) == "Sign Up"   # the first button left, in document order
    assert all(m["name"] != "Log In" for m in best(client, tab_id, "button except log in")["matches"])
    # "not" alone, or a negative part that leaves nothing, finds nothing rather than anything.
    assert best(client, tab_id, "not")["best_ref"] == ""


def test_top_and_bottom_rank_matches_by_their_place_on_the_screen(client: Any, site: Any) -> None:
    tab_id = nav(client, site.url("find_hints.html"))
    top, bottom = best(client, tab_id, "top button"), best(client, tab_id, "bottom button")
    assert top["best_ref"] and bottom["best_ref"] and top["best_ref"] != bottom["best_ref"]
    assert name_of(top) == "Log In" and name_of(bottom) == "Go"
    assert name_of(best(client, tab_id, "right button")) in ("Sign Up", "Discard")
    # A place word an element is named with is a word to match: the link called "Back to top".
    assert name_of(best(client, tab_id, "back to top link")) == "Back to top"
    assert best(client, tab_id, "bottom search box")["matches"][0]["role"] == "searchbox"
