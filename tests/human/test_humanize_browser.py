"""Humanized input in a real Chromium (cdp.humanize): what a page records of it."""
from __future__ import annotations

import itertools
import math
import random
import statistics
from typing import Any

from cdp import humanize
from cdp.input import Target
from cdp.navigation import navigate
from human.keyboard import BackspaceStep, typing_plan
from human.mouse import Box

TEXT = "Héllo, wörld! 😀"


def js(tab: Any, expression: str) -> Any:
    res = tab.run(lambda: tab.call("Runtime.evaluate", {"expression": expression, "returnByValue": True}), 15)
    return res["result"].get("value")


def open_page(tab: Any, site: Any) -> None:
    tab.run(lambda: navigate(tab, site.url("bot_input.html"), timeout_s=15), 20)


def deviation(points: list[list[float]]) -> float:
    (ax, ay), (bx, by) = points[0][:2], points[-1][:2]
    length = math.hypot(bx - ax, by - ay) or 1.0
    return max(abs((by - ay) * (x - ax) - (bx - ax) * (y - ay)) / length for x, y, *_ in points)


def box_of(tab: Any, selector: str) -> Box:
    r = js(tab, f"(() => {{ const r = document.querySelector({selector!r}).getBoundingClientRect();"
                f" return [r.left, r.top, r.width, r.height]; }})()")
    return Box(*r)


def test_humanized_click_moves_like_a_hand_and_lands(tab: Any, site: Any) -> None:
    open_page(tab, site)
    res = tab.run(lambda: humanize.click(tab, Target(selector="#target"), random.Random(7)), 20)
    assert res == {"clicked": True, "human": True}

    moves = js(tab, "__moves")
    clicks = js(tab, "__clicks")
    downs = js(tab, "__downs")
    box = box_of(tab, "#target")
    assert len(moves) >= 5
    assert deviation(moves) > 1.0  # a curve, not a straight line
    assert box.contains(moves[-1][0], moves[-1][1])
    assert len(clicks) == 1 and clicks[0]["id"] == "target" and clicks[0]["trusted"]
    assert box.contains(clicks[0]["x"], clicks[0]["y"])
    assert downs[0][3] == 1  # the left button is down while pressed, as with a real mouse
    duration = clicks[0]["t"] - moves[0][2]
    assert 100 <= duration <= 1500, duration
    print(f"\nhumanized click: {len(moves)} mousemoves, {duration:.0f} ms from first move to click,"
          f" {deviation(moves):.1f} px off the straight line")
    # The pointer position is kept for the next action.
    last = humanize.pointer(tab)
    assert last is not None and box.contains(*last)


def test_consecutive_actions_continue_from_the_pointer(tab: Any, site: Any) -> None:
    open_page(tab, site)
    tab.run(lambda: humanize.click(tab, Target(selector="#target"), random.Random(1)), 20)
    before = humanize.pointer(tab)
    n = len(js(tab, "__moves"))
    tab.run(lambda: humanize.click(tab, Target(selector="#other"), random.Random(2)), 20)
    second = js(tab, "__moves")[n:]
    assert before is not None and len(second) >= 5
    # The second path starts where the first ended (eased: its first step is short).
    assert math.hypot(second[0][0] - before[0], second[0][1] - before[1]) < 40
    assert [c["id"] for c in js(tab, "__clicks")] == ["target", "other"]


def test_double_click_and_raw_point_click(tab: Any, site: Any) -> None:
    open_page(tab, site)
    tab.run(lambda: humanize.click(tab, Target(selector="#target"), random.Random(3), count=2), 20)
    assert js(tab, "__dblclicks") == 1
    box = box_of(tab, "#other")
    x, y = box.centre
    res = tab.run(lambda: humanize.click(tab, Target(x=x, y=y), random.Random(4)), 20)
    assert res["human"] and js(tab, "__clicks")[-1]["id"] == "other"
    assert humanize.pointer(tab) == (x, y)  # raw coordinates are hit exactly


def keydown_intervals(tab: Any, field: str) -> list[float]:
    stamps = [t for _key, t, _shift in js(tab, f"__keys.{field}")]
    return [b - a for a, b in itertools.pairwise(stamps)]


def test_humanized_typing_types_exactly_with_a_human_rhythm(tab: Any, site: Any) -> None:
    open_page(tab, site)
    # A seed whose plan includes a slip, so the Backspace correction runs in the browser too.
    seed = next(s for s in range(1000)
                if any(isinstance(x, BackspaceStep) for x in typing_plan(TEXT, random.Random(s))))
    res = tab.run(lambda: humanize.type_into(tab, Target(selector="#field"), TEXT, random.Random(seed)), 20)
    assert res == {"typed": True, "len": len(TEXT), "human": True}
    assert js(tab, "document.querySelector('#field').value") == TEXT
    keys = js(tab, "__keys.field")
    assert "Backspace" in [k for k, _t, _shift in keys]
    # Capitals and shifted symbols come with Shift held, as from a keyboard; accents are keyed too.
    shifted = {k: shift for k, _t, shift in keys if k in ("H", "!", "l", "é")}
    assert shifted == {"H": True, "!": True, "l": False, "é": False}
    normal = keydown_intervals(tab, "field")
    assert 60 <= statistics.mean(normal) <= 140, normal
    assert statistics.pstdev(normal) > 0

    res = tab.run(lambda: humanize.type_into(tab, Target(selector="#fast"), TEXT, random.Random(seed), fast=True), 20)
    assert js(tab, "document.querySelector('#fast').value") == TEXT
    fast = keydown_intervals(tab, "fast")
    assert statistics.pstdev(fast) > 0
    assert statistics.mean(fast) < 0.75 * statistics.mean(normal), (fast, normal)
    print(f"\nkeydown intervals: normal mean {statistics.mean(normal):.0f} ms sd {statistics.pstdev(normal):.0f};"
          f" fast mean {statistics.mean(fast):.0f} ms sd {statistics.pstdev(fast):.0f}")


def test_newlines_and_plain_keys_in_a_textarea(tab: Any, site: Any) -> None:
    tab.run(lambda: navigate(tab, site.url("form.html"), timeout_s=15), 20)
    text = "two\nlines"
    tab.run(lambda: humanize.type_into(tab, Target(selector="#notes"), text, random.Random(11), fast=True), 20)
    assert js(tab, "document.querySelector('#notes').value") == text


def test_hover_follows_a_path_and_ends_on_the_element(tab: Any, site: Any) -> None:
    open_page(tab, site)
    res = tab.run(lambda: humanize.hover(tab, Target(selector="#other"), random.Random(9)), 20)
    assert res == {"hovered": True, "human": True}
    moves = js(tab, "__moves")
    box = box_of(tab, "#other")
    assert len(moves) >= 5 and box.contains(moves[-1][0], moves[-1][1])
    assert js(tab, "__clicks") == []
