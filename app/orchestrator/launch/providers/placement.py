"""Which provider a new instance goes to: pure, so every rule is testable on its own.

Named (``POST /instances/start {"provider": ...}`` or ``instanceDefaults.provider``): that one only.
Otherwise the healthy providers with room, the most free room first; among equals
``multiInstance.allocationPolicy`` decides (``fcfs``: the config's order, ``round_robin``: turns,
``random``). The caller tries them in order, skipping one that answers full.
"""
from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Room:
    """A provider as placement sees it."""

    name: str
    capacity: int
    in_use: int
    healthy: bool = True
    engine_free: int | None = None   # what the engine itself reported free, when it reports

    @property
    def free(self) -> int:
        ours = max(0, self.capacity - self.in_use)
        return ours if self.engine_free is None else min(ours, self.engine_free)


def order(rooms: list[Room], policy: str = "fcfs", turn: int = 0, rng: random.Random | None = None) -> list[str]:
    """The providers to try, best first: healthy, with room, most free first, ties by ``policy``."""
    open_rooms = [(i, r) for i, r in enumerate(rooms) if r.healthy and r.free > 0]
    if policy == "round_robin" and rooms:
        key = {r.name: (i - turn) % len(rooms) for i, r in enumerate(rooms)}
    elif policy == "random":
        shuffled = [r.name for r in rooms]
        (rng or random).shuffle(shuffled)
        key = {name: i for i, name in enumerate(shuffled)}
    else:
        key = {r.name: i for i, r in enumerate(rooms)}
    open_rooms.sort(key=lambda ir: (-ir[1].free, key[ir[1].name]))
    return [r.name for _, r in open_rooms]
