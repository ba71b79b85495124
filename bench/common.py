"""Helpers shared by the benchmarks: a list-backed seed feed and interleaved timing."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable


class ListFeed:
    """Hands out a fixed list of seeds (block 0), then nothing."""

    cancelled = False
    heartbeat = None

    def __init__(self, seeds):
        self._seeds = iter(seeds)

    def take(self):
        seed = next(self._seeds, None)
        return None if seed is None else (seed, 0)


def steps_per_second(run: Callable[[], int], clock: Callable[[], float] = time.perf_counter) -> float:
    """Env steps/s of one call of `run` (which returns the env steps it took), timed by `clock`."""
    started = clock()
    steps = run()
    return steps / (clock() - started)


def interleaved(contenders: dict[str, Callable[[], int]], rounds: int = 3,
                clock: Callable[[], float] = time.perf_counter) -> dict[str, float]:
    """Median steps/s per contender over `rounds`, measured in turns so that machine noise hits all alike.
    `clock`: wall time by default; `time.process_time` counts this process's CPU time only (on a busy
    machine, what the contenders that run in this process cost, less the time others took the cores)."""
    seen: dict[str, list[float]] = {name: [] for name in contenders}
    for _ in range(rounds):
        for name, run in contenders.items():
            seen[name].append(steps_per_second(run, clock))
    return {name: statistics.median(values) for name, values in seen.items()}
