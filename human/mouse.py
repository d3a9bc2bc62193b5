"""Human-like pointer plans: Bezier paths with eased timing, and clicks that land near a centre.

Pure functions: they return plans (dataclasses) and never touch a browser; ``cdp.humanize``
plays them back. All randomness comes from the ``RandomSource`` passed in.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, NamedTuple

from .rng import RandomSource, spread

MIN_STEPS = 5
MAX_STEPS = 30
PIXELS_PER_STEP = 40.0  # one more step every 40 px: 5 steps at rest, 30 from 1,000 px on
MIN_MOVE_MS = 100.0
MAX_MOVE_MS = 1000.0
JITTER_PX = 1.0  # hand tremor: about a pixel either way on each intermediate point
CENTRE_SLACK_PX = 3.0  # how far from the centre a click may land (less on small targets)

Point = tuple[float, float]


class Box(NamedTuple):
    """An element's box in viewport CSS pixels."""

    x: float
    y: float
    width: float
    height: float

    @property
    def centre(self) -> Point:
        return self.x + self.width / 2.0, self.y + self.height / 2.0

    def contains(self, x: float, y: float) -> bool:
        return self.x <= x <= self.x + self.width and self.y <= y <= self.y + self.height


@dataclass(frozen=True)
class Step:
    """Move the pointer to (x, y) after waiting ``delay_ms``."""

    x: float
    y: float
    delay_ms: float


@dataclass(frozen=True)
class ButtonEvent:
    """Press or release the button at (x, y) after waiting ``delay_ms``."""

    type: Literal["press", "release"]
    x: float
    y: float
    delay_ms: float
    click_count: int


@dataclass(frozen=True)
class ClickPlan:
    """Where the pointer starts, the moves to the target, then the button events there."""

    start: Point
    target: Point
    moves: tuple[Step, ...]
    buttons: tuple[ButtonEvent, ...]

    @property
    def duration_ms(self) -> float:
        return sum(s.delay_ms for s in self.moves) + sum(b.delay_ms for b in self.buttons)


def step_count(distance: float) -> int:
    """How many moves a path of ``distance`` px takes: more for longer paths, 5 to 30."""
    return max(MIN_STEPS, min(MAX_STEPS, MIN_STEPS + round(distance / PIXELS_PER_STEP)))


def move_duration_ms(distance: float, rng: RandomSource) -> float:
    """A plausible time to cover ``distance`` px: Fitts-like (logarithmic), give or take 15 %."""
    base = 80.0 + 150.0 * math.log2(1.0 + distance / 20.0)
    return max(MIN_MOVE_MS, min(MAX_MOVE_MS, base * rng.uniform(0.85, 1.15)))


def ease_in_out(u: float) -> float:
    """Sine ease: slow to leave, fast in the middle, slow to arrive."""
    return 0.5 - 0.5 * math.cos(math.pi * u)


def bezier(p0: Point, p1: Point, p2: Point, p3: Point, t: float) -> Point:
    """The cubic Bezier curve through p0..p3 at parameter ``t``."""
    a, b, c, d = (1 - t) ** 3, 3 * (1 - t) ** 2 * t, 3 * (1 - t) * t ** 2, t ** 3
    return (a * p0[0] + b * p1[0] + c * p2[0] + d * p3[0],
            a * p0[1] + b * p1[1] + c * p2[1] + d * p3[1])


def control_points(start: Point, end: Point, rng: RandomSource) -> tuple[Point, Point]:
    """Two control points about 25 % and 75 % along the line, pushed off it sideways.

    Mostly to the same side (an arc, as a wrist pivots), now and then to opposite sides (a
    slight S); the push grows with the distance but stays under 200 px.
    """
    dx, dy = end[0] - start[0], end[1] - start[1]
    dist = math.hypot(dx, dy)
    nx, ny = (-dy / dist, dx / dist) if dist > 0 else (0.0, 0.0)  # unit normal to the line
    side = 1.0 if rng.random() < 0.5 else -1.0
    off1 = side * min(200.0, dist * spread(rng, 0.08, 0.3))
    off2 = side * min(200.0, dist * spread(rng, 0.05, 0.25))
    if rng.random() < 0.2:
        off2 = -off2 * 0.5
    t1, t2 = rng.uniform(0.2, 0.3), rng.uniform(0.7, 0.8)
    return ((start[0] + dx * t1 + nx * off1, start[1] + dy * t1 + ny * off1),
            (start[0] + dx * t2 + nx * off2, start[1] + dy * t2 + ny * off2))


def move_path(start: Point, end: Point, rng: RandomSource, *, jitter: float = JITTER_PX) -> list[Step]:
    """The moves from ``start`` (where the pointer is) to ``end``; the last lands exactly on ``end``.

    Points are sampled at eased parameters with roughly equal, varied delays, so the pointer
    accelerates then slows down. ``jitter=0`` gives the pure curve for the same random draws.
    """
    dist = math.hypot(end[0] - start[0], end[1] - start[1])
    n = step_count(dist)
    c1, c2 = control_points(start, end, rng)
    total = move_duration_ms(dist, rng)
    weights = [spread(rng, 0.6, 1.4) for _ in range(n)]
    scale = total / sum(weights)  # varied per step, yet the whole move takes ``total``
    steps: list[Step] = []
    for i in range(1, n + 1):
        x, y = bezier(start, c1, c2, end, ease_in_out(i / n))
        jx, jy = rng.uniform(-1.0, 1.0) * jitter, rng.uniform(-1.0, 1.0) * jitter
        if i == n:
            x, y = end  # the tremor never moves the final point off the target
        else:
            x, y = x + jx, y + jy
        steps.append(Step(x, y, weights[i - 1] * scale))
    return steps


def click_point(box: Box | tuple[float, float, float, float], rng: RandomSource) -> Point:
    """A point within a few pixels of the box's centre, never outside the box."""
    b = Box(*box)
    cx, cy = b.centre
    # At most a quarter of the size off centre, so small targets are still hit inside.
    mx, my = min(CENTRE_SLACK_PX, b.width / 4.0), min(CENTRE_SLACK_PX, b.height / 4.0)
    return (cx + (rng.random() + rng.random() - 1.0) * mx,
            cy + (rng.random() + rng.random() - 1.0) * my)


def nearby_start(target: Point, rng: RandomSource) -> Point:
    """Where a pointer plausibly rests before heading for ``target`` (80 to 300 px away)."""
    angle = rng.uniform(0.0, 2.0 * math.pi)
    dist = spread(rng, 80.0, 300.0)
    return (max(0.0, target[0] + math.cos(angle) * dist), max(0.0, target[1] + math.sin(angle) * dist))


def click_plan(box: Box | tuple[float, float, float, float], rng: RandomSource, *,
               start: Point | None = None, count: int = 1) -> ClickPlan:
    """Move from ``start`` (or a plausible nearby point) to the box, then press and release.

    Pauses 50-200 ms before pressing and holds the button 30-120 ms; each further click of a
    multi-click (``count``) follows 60-150 ms after the previous release.
    """
    target = click_point(box, rng)
    origin = start if start is not None else nearby_start(target, rng)
    moves = tuple(move_path(origin, target, rng))
    buttons: list[ButtonEvent] = []
    for i in range(1, max(1, count) + 1):
        before = spread(rng, 50.0, 200.0) if i == 1 else spread(rng, 60.0, 150.0)
        buttons.append(ButtonEvent("press", target[0], target[1], before, i))
        buttons.append(ButtonEvent("release", target[0], target[1], spread(rng, 30.0, 120.0), i))
    return ClickPlan(origin, target, moves, tuple(buttons))
