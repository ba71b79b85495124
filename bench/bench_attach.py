"""Time from `tui-eval attach` to a populated screen, for a finished log of 100,000 episodes per path.

    python bench/bench_attach.py [--episodes 100000] [--rounds 3]

The log is written the way a run writes it (one SQLite row per episode, two paths). "Populated" means
what a user sees as ready: the comparison table counts every episode, the verdict is drawn and the
episode log shows rows. Measured in the real app (App.run_test), median of the rounds. Target: <= 2 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_eval.log.store import RunLog  # noqa: E402
from tui_eval.records import EpisodeRecord  # noqa: E402
from tui_eval.views.summary import replay  # noqa: E402

PATHS = ("evaluate", "connectors")


def write_log(path: Path, episodes: int) -> None:
    log = RunLog(path)
    log.set_meta(spec={"episodes": episodes, "device": "cpu", "return_bounds": [0, 500], "equivalence_margin": None},
                 checkpoint="/ckpt/ppo_cartpole", kind="rllib", env="CartPole-v1", seeds=[0, episodes],
                 seeds_note="bench", paths=list(PATHS), explore={p: False for p in PATHS},
                 facts={"algorithm": "PPO", "env": "CartPole-v1", "module": "default_policy"},
                 started_at=time.time() - 3600, finished_at=time.time(), status="done")
    rows = [EpisodeRecord(path=name, seed=seed, ret=float(100 + (seed * 7919 + i) % 400), length=200,
                          block=0, explore=False, wall_s=0.01)
            for seed in range(episodes) for i, name in enumerate(PATHS)]
    with log._lock:  # one transaction: writing the bench's log is not what is measured
        log._db.execute("BEGIN")
        log._db.executemany(
            "INSERT INTO episodes (path, seed, block, ret, length, success, invalid, reason, wall_s, explore, "
            "finished_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            [(r.path, r.seed, r.block, r.ret, r.length, None, 0, None, r.wall_s, 0, 0.0) for r in rows])
        log._db.execute("COMMIT")
    # what the run's owner writes when it ends: its final numbers (see runtime/owner.py)
    stats = replay(log.meta(), rows)
    comparison = stats.comparison_summary()
    log.set_meta(verdict=None if comparison is None else comparison.verdict,
                 snapshot={"paths": {n: s.summary() for n, s in stats.paths.items()},
                           "comparison": None if comparison is None else comparison.to_json()})
    log.close()


async def time_to_populated(path: Path, episodes: int) -> float:
    from tui_eval.ui.app import EvalApp
    from tui_eval.ui.widgets import ComparisonTable, EpisodeLog

    started = time.perf_counter()
    app = EvalApp(log_path=path)
    async with app.run_test(size=(120, 40)) as pilot:
        while True:
            summaries = app.query_one(ComparisonTable).data.summaries
            counted = all(summaries.get(p, {}).get("episodes") == episodes for p in PATHS)
            if counted and app.query_one(EpisodeLog).rows:
                break
            await pilot.pause(0.02)
        return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "big.sqlite"
        write_log(log, args.episodes)
        times = [asyncio.run(time_to_populated(log, args.episodes)) for _ in range(args.rounds)]
    print(f"attach to a populated screen, {args.episodes:,} episodes per path ({2 * args.episodes:,} records): "
          f"median {statistics.median(times):.2f} s over {args.rounds} rounds "
          f"({', '.join(f'{t:.2f}' for t in times)}); target <= 2 s")


if __name__ == "__main__":
    main()
