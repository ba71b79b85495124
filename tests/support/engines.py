"""Run real engines in-process, the way the CLI builds them."""

from __future__ import annotations

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
    from tui_eval.events import PathFailed

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
