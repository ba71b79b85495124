"""Run real engines in-process, the way the CLI builds them."""

from __future__ import annotations

from pathlib import Path

from tui_eval.cli import build_parser, spec_from_args
from tui_eval.session import plan_run, start_engine

#: where the evaluate path's default explore setting comes from, as a plan says it
EVALUATE_DEFAULT = "library default: RLlib's evaluation config (evaluation_config.explore)"


def plan_for(checkpoint: Path, *args: str, log: Path):
    spec = spec_from_args(build_parser().parse_args([str(checkpoint), "--headless", "--log", str(log), *args]))
    return plan_run(spec)


def run_to_end(checkpoint: Path, *args: str, log: Path, timeout: float = 180):
    """Run a headless engine to completion; returns (engine, records)."""
    engine = start_engine(plan_for(checkpoint, *args, log=log))
    engine.start()
    try:
        assert engine.wait(timeout), "the run did not finish in time"
    finally:
        engine.close()
    return engine, engine.log.records()


def by_seed(records, path: str) -> dict[int, float]:
    return {r.seed: r.ret for r in records if r.path == path}
