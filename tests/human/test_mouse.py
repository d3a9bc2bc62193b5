"""Pointer plans (human.mouse): Bezier paths, their timing, and where clicks land. Pure and seeded."""
from __future__ import annotations

import itertools
import math
import random

import pytest

from human.mouse import (
    MAX_MOVE_MS,
    MAX_STEPS,
    MIN_MOVE_MS,
    MIN_STEPS,
    Box,
    ButtonEvent,
    Step,
    click_plan,
    move_path,
    step_count,
)

SEEDS = range(200)


def deviation(points: list[tuple[float, float]], a: tuple[float, float], b: tuple[float, float]) -> float:
    """The largest distance of the points from the straight line through a and b."""
    dx, dy = b[0] - a[0], b[1] - a[1]
    length = math.hypot(dx, dy)
    return max(abs(dy * (x - a[0]) - dx * (y - a[1])) / length for x, y in points)


# --- paths -----------------------------------------------------------------------------------------
def test_path_ends_exactly_on_the_target() -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        start, end = (rng.uniform(0, 1500), rng.uniform(0, 900)), (rng.uniform(0, 1500), rng.uniform(0, 900))
        steps = move_path(start, end, rng)
        assert (steps[-1].x, steps[-1].y) == end
        assert all(isinstance(s, Step) for s in steps)


def test_step_count_grows_with_distance_within_5_to_30() -> None:
    counts = [step_count(d) for d in range(0, 3000, 10)]
    assert counts == sorted(counts)
    assert counts[0] == MIN_STEPS and counts[-1] == MAX_STEPS
    assert step_count(50) < step_count(400) < step_count(900)


@pytest.mark.parametrize("distance", [0, 3, 50, 200, 600, 1200, 4000])
def test_paths_have_between_5_and_30_steps(distance: float) -> None:
    for seed in range(50):
        steps = move_path((10.0, 10.0), (10.0 + distance, 10.0), random.Random(seed))
        assert MIN_STEPS <= len(steps) <= MAX_STEPS
        assert len(steps) == step_count(distance)


def test_jitter_is_about_a_pixel() -> None:
    # The same draws without jitter give the pure curve: each point is within a pixel each way.
    for seed in SEEDS:
        start, end = (100.0, 700.0), (900.0, 150.0)
        shaky = move_path(start, end, random.Random(seed))
        smooth = move_path(start, end, random.Random(seed), jitter=0.0)
        offsets = [(a.x - b.x, a.y - b.y) for a, b in zip(shaky, smooth, strict=True)]
        assert all(abs(ox) <= 1.0 and abs(oy) <= 1.0 for ox, oy in offsets)
        assert any(ox or oy for ox, oy in offsets[:-1])  # there is some tremor
        assert offsets[-1] == (0.0, 0.0)


def test_long_moves_curve() -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        start, end = (50.0, 50.0), (50.0 + rng.uniform(200, 1200), 50.0 + rng.uniform(-40, 600))
        steps = move_path(start, end, rng, jitter=0.0)
        dist = math.hypot(end[0] - start[0], end[1] - start[1])
        assert deviation([(s.x, s.y) for s in steps], start, end) > 0.02 * dist


def test_duration_is_plausible_and_delays_vary() -> None:
    for seed in SEEDS:
        rng = random.Random(seed)
        steps = move_path((0.0, 0.0), (rng.uniform(0, 1600), rng.uniform(0, 1000)), rng)
        total = sum(s.delay_ms for s in steps)
        assert MIN_MOVE_MS - 1e-6 <= total <= MAX_MOVE_MS + 1e-6
        assert all(s.delay_ms > 0 for s in steps)
        assert len({round(s.delay_ms, 3) for s in steps}) > 1


def test_duration_grows_with_distance() -> None:
    def mean_ms(d: float) -> float:
        return sum(sum(s.delay_ms for s in move_path((0, 0), (d, 0), random.Random(k))) for k in range(100)) / 100

    short, mid, far = mean_ms(20), mean_ms(300), mean_ms(1500)
    assert short < mid < far
    assert short < 300 and far > 700


def test_speed_eases_in_and_out() -> None:
    # Equal-ish delays at eased positions: the first and last moves are shorter than the middle ones.
    steps = move_path((0.0, 0.0), (1000.0, 0.0), random.Random(3), jitter=0.0)
    xs = [0.0] + [s.x for s in steps]
    moves = [b - a for a, b in itertools.pairwise(xs)]
    middle = max(moves)
    assert moves[0] < middle / 3 and moves[-1] < middle / 3


# --- clicks ------------------------------------------------------------------------------------------
def test_click_lands_inside_the_box_near_its_centre_for_1000_seeds() -> None:
    for seed in range(1000):
        rng = random.Random(seed)
        box = Box(rng.uniform(0, 1200), rng.uniform(0, 800), rng.uniform(2, 300), rng.uniform(2, 80))
        plan = click_plan(box, rng)
        cx, cy = box.centre
        for ev in plan.buttons:
            assert box.contains(ev.x, ev.y)
            assert abs(ev.x - cx) <= 3.0 and abs(ev.y - cy) <= 3.0
        assert (plan.moves[-1].x, plan.moves[-1].y) == plan.target


def test_tiny_boxes_are_still_hit_inside() -> None:
    for seed in range(300):
        box = Box(10.0, 10.0, 1.0, 1.0)
        plan = click_plan(box, random.Random(seed))
        assert box.contains(*plan.target)


def test_click_pauses_before_pressing_and_holds_the_button() -> None:
    for seed in range(300):
        plan = click_plan((100, 100, 80, 30), random.Random(seed))
        press, release = plan.buttons
        assert isinstance(press, ButtonEvent) and press.type == "press" and release.type == "release"
        assert 50 <= press.delay_ms <= 200
        assert 30 <= release.delay_ms <= 120
        assert press.click_count == release.click_count == 1


def test_double_click_counts_up() -> None:
    plan = click_plan((100, 100, 80, 30), random.Random(1), count=2)
    assert [(b.type, b.click_count) for b in plan.buttons] == [
        ("press", 1), ("release", 1), ("press", 2), ("release", 2)]
    assert len({(b.x, b.y) for b in plan.buttons}) == 1


def test_unknown_start_is_a_plausible_nearby_point() -> None:
    for seed in range(300):
        plan = click_plan((500, 400, 100, 40), random.Random(seed))
        d = math.hypot(plan.start[0] - plan.target[0], plan.start[1] - plan.target[1])
        assert 80 - 1e-6 <= d <= 300 + 1e-6
        assert plan.start[0] >= 0 and plan.start[1] >= 0


def test_known_start_is_used() -> None:
    plan = click_plan((500, 400, 100, 40), random.Random(5), start=(10.0, 20.0))
    assert plan.start == (10.0, 20.0)
    first = plan.moves[0]
    assert math.hypot(first.x - 10.0, first.y - 20.0) < 50  # eased: the first move is short


def test_plans_are_reproducible_by_seed() -> None:
    assert click_plan((0, 0, 50, 50), random.Random(42)) == click_plan((0, 0, 50, 50), random.Random(42))
    assert click_plan((0, 0, 50, 50), random.Random(42)) != click_plan((0, 0, 50, 50), random.Random(43))
