"""`tui-eval report` on a finished log of 100,000 episodes per path: its time against reading the log alone.

    python bench/bench_report.py [--episodes 100000] [--rounds 3] [--keep DIR]

The log is written the way a run writes it (RunLog.append of each EpisodeRecord, two paths: evaluate samples,
connectors does not; a third of the seeds give both the same episode, 1 in 200 an invalid one, success above
475). Reported, median of the rounds: reading the log (`RunLog.records()`), the whole report (`write_report`:
reading, the statistics rebuilt record by record with the comparison taken 200 times, the summary, the drawing,
the PNG), its parts, and the report's time as a multiple of reading the log. Target: the report within a few
reads of the log. `--keep DIR` keeps the log and the pictures (PNG and HTML) there.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tui_eval.log.store import RunLog  # noqa: E402
from tui_eval.records import EpisodeRecord  # noqa: E402

PATHS = ("evaluate", "connectors")
SEED0 = 1_000_000_000


def write_log(path: Path, episodes: int) -> None:
    rng = np.random.default_rng(7)
    greedy = np.clip(rng.normal(300, 90, episodes), 8, 500).round()
    sampled = np.where(rng.random(episodes) < 0.33, greedy, np.clip(rng.normal(290, 110, episodes), 8, 500).round())
    broken = rng.random((2, episodes)) < 0.005
    log = RunLog(path)
    log.set_meta(spec={"episodes": episodes, "return_bounds": [0, 500], "equivalence_margin": None},
                 checkpoint="/ckpt/ppo_cartpole", kind="rllib", env="CartPole-v1", seeds=[SEED0, SEED0 + episodes],
                 blocks=[[SEED0, SEED0 + episodes]], paths=list(PATHS), explore={"evaluate": True, "connectors": False},
                 return_bounds=[0.0, 500.0, "CartPole-v1"], status="done", started_at=time.time() - 3600,
                 finished_at=time.time())
    log._db.execute("BEGIN")  # one transaction: writing the bench's log is not what is measured
    for i in range(episodes):
        for p, (name, returns) in enumerate(zip(PATHS, (sampled, greedy))):
            invalid = bool(broken[p, i])
            log.append(EpisodeRecord(path=name, seed=SEED0 + i, ret=float("nan") if invalid else float(returns[i]),
                                     length=int(returns[i]), success=not invalid and returns[i] >= 475,
                                     invalid=invalid, reason="bench" if invalid else None, wall_s=0.01,
                                     explore=name == "evaluate"))
    log._db.execute("COMMIT")
    log.close()


def timed(work) -> tuple[float, float]:
    """Wall and CPU seconds of `work()` (CPU: this process's alone, steadier on a busy machine)."""
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def parts(log_path: Path) -> dict[str, float]:
    """The report's steps one by one: gather (statistics, summary, pairs), draw, PNG."""
    from tui_eval.report import data, figure

    log = RunLog(log_path, readonly=True)
    meta, records = log.meta(), log.records()
    started = time.perf_counter()
    report = data.run_report(meta, records, name="bench")
    gathered = time.perf_counter()
    drawn = figure.run_figure(report)
    figured = time.perf_counter()
    figure.save(drawn, log_path.with_suffix(".parts.png"), ".png")
    return {"gather": gathered - started, "draw": figured - gathered, "png": time.perf_counter() - figured}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=100_000, help="per path")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="keep the log and the pictures in this folder")
    args = parser.parse_args()
    from tui_eval.report import write_report

    folder = args.keep or Path(tempfile.mkdtemp(prefix="bench-report-"))
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "bench.sqlite"
    log.unlink(missing_ok=True)
    print(f"writing a log of {args.episodes:,} episodes per path ({2 * args.episodes:,} records) …")
    write_log(log, args.episodes)
    write_report(log, folder / "warm.png")  # matplotlib's import and font cache: once per process, not per report
    reads, reports, html, steps = [], [], [], []
    for _ in range(args.rounds):
        reads.append(timed(lambda: RunLog(log, readonly=True).records()))
        reports.append(timed(lambda: write_report(log, folder / "bench.report.png")))
        html.append(timed(lambda: write_report(log, folder / "bench.report.html")))
        steps.append(parts(log))
    (read, read_cpu), (report, report_cpu) = (tuple(map(statistics.median, zip(*t))) for t in (reads, reports))
    print(f"read the log (RunLog.records()): {read:.2f} s  (CPU {read_cpu:.2f} s)")
    print(f"tui-eval report, PNG:            {report:.2f} s  (CPU {report_cpu:.2f} s): {report / read:.1f}x reading "
          f"the log ({report_cpu / read_cpu:.1f}x by CPU)")
    print(f"tui-eval report, HTML:           {statistics.median(t[0] for t in html):.2f} s")
    print("  of which " + ", ".join(f"{k} {statistics.median(s[k] for s in steps):.2f} s" for k in steps[0])
          + " (after the read; wall)")
    print(f"median of {args.rounds} rounds; pictures in {folder}")


if __name__ == "__main__":
    main()
