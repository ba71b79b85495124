"""What the engine keeps per path: its place in the seed schedule, its seeds in flight, its failures."""

from __future__ import annotations

import collections
from dataclasses import dataclass, field

from tui_eval.feed import Seed


@dataclass(eq=False)
class PathSchedule:
    """What the engine keeps for one path (its worker, its place in the seed schedule, its failures)."""

    block: int = 0  # index into Engine.blocks of the block the path walks
    cursor: int = 0  # the next new seed of that block
    started: int = 0  # new seeds handed out, over all blocks
    in_flight: set[Seed] = field(default_factory=set)
    # seeds a failed worker had in flight: handed out again before any new seed, never lost
    retry: collections.deque[Seed] = field(default_factory=collections.deque)
    given_back: set[Seed] = field(default_factory=set)  # in `retry`, never started (a remote queue at pause)
    worker_ident: int | None = None
    generation: int = 0  # bumped when a frozen worker is abandoned
    restarts: int = 0
    steps: int = 0
    done_at: float | None = None
