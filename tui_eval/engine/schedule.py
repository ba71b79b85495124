"""What the engine keeps per path: its place in the seed schedule, its seeds in flight, its failures."""

from __future__ import annotations

import collections
from collections.abc import Iterable
from dataclasses import dataclass, field

from tui_eval.config.spec import SeedBlock
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


def restore_schedules(states: dict[str, PathSchedule], blocks: list[SeedBlock], finished: dict[str, set[Seed]]) -> None:
    """A resumed run's schedule per path: the seeds it never finished (in flight when its process died) handed
    out again first, then the seeds after the last one it reached; no finished seed runs again, none is skipped."""
    last = len(blocks) - 1
    for name, state in states.items():
        state.block = last
        for index, block in enumerate(blocks):
            reached = [seed for seed, b in finished[name] if b == index]
            cursor = max(reached) + 1 if reached else block.start
            state.retry.extend((seed, index) for seed in range(block.start, cursor)
                               if (seed, index) not in finished[name])
            if index == last:
                state.cursor = cursor
        state.started = len(finished[name]) + len(state.retry)


def next_block(last: SeedBlock, states: Iterable[PathSchedule]) -> SeedBlock:
    """The block after `last` (a resample's default): from the first seed no path has reached, as long as `last`."""
    start = max(max(s.cursor for s in states), last.start + 1)
    return SeedBlock(start, None if last.stop is None else start + len(last))
