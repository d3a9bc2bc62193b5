"""The random source the human-input planners draw from."""
from __future__ import annotations

from typing import Protocol


class RandomSource(Protocol):
    """What the planners need from a random generator; ``random.Random`` fits.

    A seam so tests pass ``random.Random(seed)`` and get the same plan every run, while the
    server uses an unseeded generator per tab.
    """

    def random(self) -> float:
        """A float in [0, 1)."""
        ...

    def uniform(self, a: float, b: float) -> float:
        """A float between ``a`` and ``b``."""
        ...


def spread(rng: RandomSource, low: float, high: float) -> float:
    """A value in [low, high] that favours the middle (the mean of two uniforms: triangular).

    Human timings cluster around a typical value with fewer extremes than a flat distribution.
    """
    return low + (high - low) * (rng.random() + rng.random()) / 2.0
