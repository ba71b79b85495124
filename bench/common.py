"""Helpers shared by the benchmarks: a list-backed seed feed, interleaved timing, the RLlib benches' options."""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path


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


def rllib_bench_options(description: str, *, episodes: int, checkpoint: Path | None, only_example: str):
    """The options of the RLlib benches (bench_rllib.py, bench_rllib_multi_agent.py); `checkpoint` None: required."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=episodes)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--checkpoint", type=Path, default=checkpoint, required=checkpoint is None)
    parser.add_argument("--only", help=f"comma-separated contenders, e.g. {only_example}")
    parser.add_argument("--cpu-time", action="store_true", help="time by this process's CPU time (see above)")
    args = parser.parse_args()
    args.only = set(args.only.split(",")) if args.only else None
    return args


def run_title(args) -> str:
    """The first line of an RLlib bench's report."""
    return (f"{args.checkpoint.name}, {args.num_envs} envs, {args.episodes} episodes per round, "
            f"median of {args.rounds} interleaved rounds, explore off"
            + (", CPU time of this process" if args.cpu_time else ""))
