"""Human-like typing plans: rhythm, thinking pauses and corrected typos.

Pure functions: a plan is a list of steps (type a character, or Backspace) each after a delay;
``cdp.humanize`` plays it back. Replaying a plan always yields exactly the requested text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .rng import RandomSource, spread

BASE_DELAY_MS = 80.0
FAST_DELAY_MS = 40.0
THINK_CHANCE = 0.04  # a pause to "think" before a key, now and then
THINK_MS = (200.0, 500.0)
TYPO_CHANCE = 0.03
REPEAT_FACTOR = 0.6  # the same key again is quicker: the finger is already there

# Neighbours on a US QWERTY keyboard, for plausible slips of the finger. Rows are staggered:
# each key's horizontal position (in key widths) is its index plus its row's offset, and keys
# in the same or an adjacent row at most a key width apart touch (G: F H T Y V B).
_ROWS = (("qwertyuiop", 0.0), ("asdfghjkl", 0.25), ("zxcvbnm", 0.75))
_NEIGHBOURS: dict[str, str] = {
    ch: "".join(other for r2, (row2, off2) in enumerate(_ROWS) if abs(r2 - r) <= 1
                for j, other in enumerate(row2) if other != ch and abs((j + off2) - (i + off)) <= 1.0)
    for r, (row, off) in enumerate(_ROWS) for i, ch in enumerate(row)
}


@dataclass(frozen=True)
class CharStep:
    """Type ``text`` (one character) after waiting ``delay_ms``."""

    text: str
    delay_ms: float
    kind: Literal["char"] = "char"

    def as_tuple(self) -> tuple[str, str, float]:
        return ("char", self.text, self.delay_ms)


@dataclass(frozen=True)
class BackspaceStep:
    """Press Backspace after waiting ``delay_ms``."""

    delay_ms: float
    kind: Literal["backspace"] = "backspace"

    def as_tuple(self) -> tuple[str, float]:
        return ("backspace", self.delay_ms)


TypingStep = CharStep | BackspaceStep


def neighbour_key(ch: str, rng: RandomSource) -> str | None:
    """A key next to ``ch`` on QWERTY (same case), or None for anything but an ASCII letter."""
    near = _NEIGHBOURS.get(ch.lower())
    if not near:
        return None
    slip = near[int(rng.random() * len(near))]
    return slip.upper() if ch.isupper() else slip


def _typo_allowed(chars: list[str], i: int) -> bool:
    """Slips only on an ASCII letter that is not the last character and sits among ASCII text.

    Never the last: the correction would come after the caller thinks typing ended. Never next to
    non-ASCII (accents, emoji): those are inserted, not keyed, and a Backspace there could split a
    composed character.
    """
    if i >= len(chars) - 1 or chars[i].lower() not in _NEIGHBOURS:
        return False
    return chars[i + 1].isascii() and (i == 0 or chars[i - 1].isascii())


def typing_plan(text: str, rng: RandomSource, *, fast: bool = False) -> list[TypingStep]:
    """The steps that type ``text``: varied delays around 80 ms (40 ms ``fast``), occasional
    pauses, repeated characters quicker, and now and then a neighbouring key fixed with Backspace.
    """
    base = FAST_DELAY_MS if fast else BASE_DELAY_MS
    # Fast typists hesitate less often and less long.
    calm = 0.5 if fast else 1.0
    think_chance = THINK_CHANCE * calm
    think_lo, think_hi = THINK_MS[0] * calm, THINK_MS[1] * calm
    chars = list(text)
    plan: list[TypingStep] = []
    for i, ch in enumerate(chars):
        delay = base * spread(rng, 0.55, 1.45)
        if i > 0 and ch == chars[i - 1]:
            delay *= REPEAT_FACTOR
        elif i > 0 and rng.random() < think_chance:
            delay = rng.uniform(think_lo, think_hi)
        if _typo_allowed(chars, i) and rng.random() < TYPO_CHANCE:
            slip = neighbour_key(ch, rng)
            if slip is not None:
                plan.append(CharStep(slip, delay))
                # Noticing the slip takes a moment; the fix itself is quick.
                plan.append(BackspaceStep(base * spread(rng, 1.5, 3.5)))
                delay = base * spread(rng, 0.8, 1.4)
        plan.append(CharStep(ch, delay))
    return plan


def replay(plan: list[TypingStep]) -> str:
    """The text a plan leaves in an empty field (what the browser should end up with)."""
    out: list[str] = []
    for step in plan:
        if isinstance(step, CharStep):
            out.append(step.text)
        elif out:
            out.pop()
    return "".join(out)


def plan_duration_ms(plan: list[TypingStep]) -> float:
    """How long playing the plan back takes (for the caller's timeout)."""
    return sum(step.delay_ms for step in plan)
