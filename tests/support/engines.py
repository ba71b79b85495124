"""Run real engines in-process, the way the CLI builds them."""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Iterator
from pathlib import Path

from tui_eval.cli import build_parser, spec_from_args
from tui_eval.session import plan_run, start_engine

#: where the evaluate path's default explore setting comes from, as a plan says it
EVALUATE_DEFAULT = "library default: RLlib's evaluation config (evaluation_config.explore)"


def plan_for(checkpoint: Path, *args: str, log: Path, own_processes: bool = False):
    """The plan the CLI makes of these arguments. Paths run as threads of the test's process (`--in-process`:
    envs the test registered are found, and a path loads in seconds) unless `own_processes`: the default of a
    real run, tested by the tests of path isolation and by every CLI run."""
    extra = () if own_processes else ("--in-process",)
    argv = [str(checkpoint), "--headless", "--log", str(log), *extra, *args]
    return plan_run(spec_from_args(build_parser().parse_args(argv)))


def run_to_end(checkpoint: Path, *args: str, log: Path, timeout: float = 180, own_processes: bool = False):
    """Run a headless engine to completion; returns (engine, records)."""
    engine = start_engine(plan_for(checkpoint, *args, log=log, own_processes=own_processes))
    return engine, finish(engine, timeout)


def finish(engine, timeout: float = 180):
    """Start a loaded engine, wait for its end and close it (also when it does not end); its records."""
    engine.start()
    try:
        assert engine.wait(timeout), "the run did not finish in time"
    finally:
        engine.close()
    return engine.log.records()


def by_seed(records, path: str) -> dict[int, float]:
    return {r.seed: r.ret for r in records if r.path == path}


def assert_frozen_worlds_replaced(engine, events, first_path, seeds: list[int], frozen: list[int]) -> None:
    """Every seed recorded once; the frozen ones invalid for the step timeout; the path loaded afresh once per
    freeze (the `connectors` path of a run whose watchdog caught steps that never returned)."""
    from tui_eval.records import PathFailed

    records = engine.log.records()
    assert sorted(r.seed for r in records) == seeds
    assert sorted(r.seed for r in records if r.invalid) == frozen
    assert all("did not return within --step-timeout 1s" in r.reason for r in records if r.invalid)
    assert engine.paths["connectors"] is not first_path  # rebuilt
    failures = [e for e in events if isinstance(e, PathFailed)]
    assert len(failures) == len(frozen) and all("loaded afresh" in f.message for f in failures)


def headless_until_silent(engine, release) -> tuple[int, str]:
    """Run `engine` headless (in this thread: run_headless takes SIGINT) until its progress line says the
    `connectors` path is silent, then set `release` (what lets the frozen step return); (exit code, stderr)."""
    import io
    import threading

    from tests.support.common import wait_until
    from tui_eval.runtime.headless_run import run_headless

    err = io.StringIO()
    seen = threading.Event()

    def release_once_silent():
        try:
            wait_until(lambda: "connectors: no episode for" in err.getvalue(), timeout=60)
            seen.set()
        finally:
            release.set()

    watcher = threading.Thread(target=release_once_silent, daemon=True)
    watcher.start()
    code = run_headless(engine, out=io.StringIO(), err=err)
    watcher.join(5)
    assert seen.is_set() and code == 0, err.getvalue()[-2000:]
    return code, err.getvalue()


def resample_then_explore(engine, name: str = "connectors", replayed: int = 4) -> dict:
    """Drive a started engine whose path `name` is deterministic, on seeds `0:` (no episode limit), through the
    live controls: resample to a fresh block, turn explore on (a block of its own), then resample back onto its
    first `replayed` seeds, which ends the run once they are played. Returns the blocks and the records."""
    from tests.support.common import wait_until
    from tui_eval.config.spec import SeedBlock

    def recorded(block: int, at_least: int) -> None:
        wait_until(lambda: len([r for r in engine.log.records() if r.block == block and r.path == name])
                   >= at_least, timeout=180)

    recorded(0, replayed + 2)  # seeds 0.. of block 0, replayed + 2 of them at least
    fresh = engine.resample()
    recorded(1, 2)
    exploring = engine.set_explore(name, True)
    recorded(2, 2)
    again = engine.resample(SeedBlock(0, replayed), reason="the first seeds again")
    assert engine.wait(180), "the run did not end after its last block"
    records = engine.log.records()
    return {"blocks": [engine.blocks[0], fresh, exploring, again], "records": records}


def assert_resampled_and_explored(result: dict, path: str = "connectors", replayed: int = 4) -> None:
    """What `resample_then_explore` must give: each block's seeds its own, explore off until it was turned on, and
    sampling on seeds the greedy policy played before gives other episodes."""
    first, fresh, exploring, again = result["blocks"]
    records = [r for r in result["records"] if r.path == path]
    block = {i: [r for r in records if r.block == i] for i in range(4)}
    seeds = {i: sorted(r.seed for r in rs) for i, rs in block.items()}
    assert first.start == 0 and all(len(seeds[i]) == len(set(seeds[i])) for i in seeds)  # each seed once a block
    assert fresh.start > max(seeds[0]) and all(s >= fresh.start for s in seeds[1])  # held-out: never run before
    assert exploring.start > max(seeds[1]) and all(s >= exploring.start for s in seeds[2])
    assert seeds[3] == list(range(replayed)) and set(seeds[3]) <= set(seeds[0])
    assert all(r.explore is False for i in (0, 1) for r in block[i])
    assert all(r.explore is True for i in (2, 3) for r in block[i])  # the path's own process sampled
    greedy = {r.seed: r.ret for r in block[0]}
    assert any(r.ret != greedy[r.seed] for r in block[3]), "explore on played the greedy episodes again"


class ChecksSeen:
    """Per process of a check: the highest niceness seen (0 while a process taken from the zygote waits for its
    request) and the most child processes it had at once (a Ray of its own: a GCS, a raylet and more)."""

    def __init__(self) -> None:
        self.niceness: dict[int, int] = {}
        self.children: dict[int, int] = {}

    def look(self, pid: int) -> None:
        try:
            niceness = os.getpriority(os.PRIO_PROCESS, pid)
            children = sum(len(Path(f"/proc/{pid}/task/{task}/children").read_text().split())
                           for task in os.listdir(f"/proc/{pid}/task"))
        except OSError:  # it ended meanwhile
            return
        self.niceness[pid] = max(self.niceness.get(pid, 0), niceness)
        self.children[pid] = max(self.children.get(pid, 0), children)


@contextlib.contextmanager
def checks_watched(engine) -> Iterator[ChecksSeen]:
    """The processes of the engine's checks of a differing seed (tui_eval/isolation/check.py) while they run."""
    seen = ChecksSeen()
    stop = threading.Event()

    def watch() -> None:
        while not stop.wait(0.05):
            for interpreter in list(engine._prove._live):
                seen.look(interpreter.process.pid)

    watcher = threading.Thread(target=watch, name="checks-watched", daemon=True)
    watcher.start()
    try:
        yield seen
    finally:
        stop.set()
        watcher.join()


def session_alive(pid: int) -> bool:
    """Whether a process is left in the session (process group) that process `pid` led: what it started."""
    try:
        os.killpg(pid, 0)
    except ProcessLookupError:
        return False
    return True
