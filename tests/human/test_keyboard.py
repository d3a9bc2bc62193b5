"""Typing plans (human.keyboard): rhythm, pauses, typos and the replay invariant. Pure and seeded."""
from __future__ import annotations

import functools
import random
import statistics

from human.keyboard import (
    BackspaceStep,
    CharStep,
    neighbour_key,
    plan_duration_ms,
    replay,
    typing_plan,
)

TEXTS = [
    "hello world",
    "The quick brown fox jumps over the lazy dog. 1234567890",
    "Héllo, wörld! 😀",
    "crème brûlée — naïve café",
    "emoji 👩‍👩‍👧‍👦 family and flags 🇫🇷🇯🇵 mixed in",
    "日本語のテキスト and ASCII",
    "line one\nline two\n\ttabbed",
    "punctuation: !@#$%^&*()_+-=[]{};':\",./<>?`~\\|",
    "aaaa bbbb ssss",
    "",
    "x",
    "ab",
]
LONG = "the quick brown fox jumps over the lazy dog while typing steadily " * 8


def test_replaying_a_plan_yields_exactly_the_text() -> None:
    for text in TEXTS:
        for seed in range(300):
            for fast in (False, True):
                plan = typing_plan(text, random.Random(seed), fast=fast)
                assert replay(plan) == text, (text, seed, fast)


def test_typos_happen_and_are_corrected() -> None:
    plans = [typing_plan(LONG, random.Random(seed)) for seed in range(50)]
    backspaces = sum(isinstance(s, BackspaceStep) for p in plans for s in p)
    letters = sum(c.isalpha() for c in LONG) * len(plans)
    assert 0.01 * letters < backspaces < 0.06 * letters  # about 3 % of letters
    for plan in plans:
        for i, step in enumerate(plan):
            if isinstance(step, BackspaceStep):
                slip, fix = plan[i - 1], plan[i + 1]
                assert isinstance(slip, CharStep) and isinstance(fix, CharStep)
                assert slip.text != fix.text and slip.text.lower() in neighbour_key_options(fix.text)


@functools.cache
def neighbour_key_options(ch: str) -> set[str]:
    return {neighbour_key(ch, random.Random(k)).lower() for k in range(200)}  # type: ignore[union-attr]


def test_typo_never_on_the_last_character() -> None:
    for text in TEXTS + ["word", "typo", "qwerty"]:
        for seed in range(500):
            plan = typing_plan(text, random.Random(seed))
            if text:
                assert isinstance(plan[-1], CharStep) and plan[-1].text == text[-1]
                # A slip shows as [wrong, Backspace, right]: never just before the last character.
                assert len(plan) < 2 or not isinstance(plan[-2], BackspaceStep)


def test_no_typos_next_to_non_ascii() -> None:
    text = "éaé😀b😀"
    for seed in range(500):
        assert not any(isinstance(s, BackspaceStep) for s in typing_plan(text, random.Random(seed)))


def test_neighbour_keys_are_qwerty_neighbours_and_keep_case() -> None:
    rng = random.Random(0)
    assert {neighbour_key("g", rng) for _ in range(200)} == set("fhtyvb")
    assert all(neighbour_key("Q", rng).isupper() for _ in range(50))  # type: ignore[union-attr]
    assert neighbour_key("é", rng) is None and neighbour_key("1", rng) is None and neighbour_key("😀", rng) is None


def char_delays(text: str, seeds: range, fast: bool = False) -> list[float]:
    return [s.delay_ms for seed in seeds for s in typing_plan(text, random.Random(seed), fast=fast)
            if isinstance(s, CharStep)]


def test_mean_delay_is_near_80_ms_and_spread() -> None:
    delays = char_delays(LONG, range(30))
    assert 70 <= statistics.mean(delays) <= 100  # 80 ms plus the occasional pause
    assert 70 <= statistics.median(delays) <= 90
    assert statistics.pstdev(delays) > 10


def test_fast_mode_is_near_40_ms() -> None:
    delays = char_delays(LONG, range(30), fast=True)
    assert 35 <= statistics.mean(delays) <= 50
    assert 35 <= statistics.median(delays) <= 45
    assert statistics.pstdev(delays) > 5


def test_thinking_pauses_are_occasional_and_bounded() -> None:
    delays = char_delays(LONG, range(30))
    long_ones = [d for d in delays if d > 200]
    assert 0.01 * len(delays) < len(long_ones) < 0.08 * len(delays)
    assert max(delays) <= 500


def test_repeated_characters_are_typed_faster() -> None:
    repeated, other = [], []
    for seed in range(200):
        plan = [s for s in typing_plan("aabbccddee", random.Random(seed)) if isinstance(s, CharStep)]
        if len(plan) != 10:
            continue  # a typo changed the sequence
        repeated += [plan[i].delay_ms for i in (1, 3, 5, 7, 9)]
        other += [plan[i].delay_ms for i in (2, 4, 6, 8)]
    assert statistics.mean(repeated) < 0.8 * statistics.mean(other)


def test_plan_duration_and_tuples() -> None:
    plan = typing_plan("hello", random.Random(1))
    assert plan_duration_ms(plan) == sum(s.delay_ms for s in plan)
    assert plan[0].as_tuple() == ("char", "h", plan[0].delay_ms)
    assert BackspaceStep(12.0).as_tuple() == ("backspace", 12.0)
    assert typing_plan("", random.Random(1)) == []
