"""Cost of tui-eval's statistics on the hot path and on a refresh.

Run: python bench/bench_stats.py [--episodes N] [--bounded] | --coverage | --power

Two paths A and B run the same seeds, N episodes each (default 1,000,000). Prints (1) the cost of one
episode on the hot path, `RunStats.add` (the path's `PathStats` for its explore setting + the
`Comparison` of the block's pairing, as the engine calls it), amortised over all 2N episodes (target
<= 5 µs), and (2) one `summary()` refresh of path A (n = N returns) and of the comparison (target
<= 50 ms): "cold" (the first summary after N episodes: IQM and its bootstrap computed from scratch;
scipy's one-time first-call setup is paid beforehand on a small instance, as the app does long before
n is large), "after 1% new" (the IQM cache is stale: paid at most once per 1% growth; median and
best of 5), "cached" (median and best of 20). Records are built in chunks outside the timed region,
so only the statistics are timed. Targets are checked on process CPU time (`time.process_time`),
which a shared, oversubscribed machine inflates less than wall time; wall time and the load average
are printed too.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

from tui_eval.records import EpisodeRecord  # noqa: E402
from tui_eval.stats import RunStats  # noqa: E402
from tui_eval.stats.coverage import CASES, equivalence_shown, exact_equivalent_shown, peeking_row  # noqa: E402

ADD_TARGET_US = 5.0
SUMMARY_TARGET_MS = 50.0
CHUNK = 20_000


def make_chunk(rng: np.random.Generator, start: int, size: int) -> list[EpisodeRecord]:
    """`size` episodes, alternating paths A and B on the same seeds (so every B episode pairs)."""
    rets_a = rng.normal(100.0, 20.0, size // 2).tolist()
    rets_b = rng.normal(101.0, 20.0, size // 2).tolist()
    succ = (rng.random(size) < 0.7).tolist()
    inval = (rng.random(size) < 0.01).tolist()
    out = []
    for j in range(size // 2):
        seed = start + j
        out.append(EpisodeRecord("A", seed, rets_a[j], 200, success=succ[2 * j], invalid=inval[2 * j], explore=False))
        out.append(EpisodeRecord("B", seed, rets_b[j], 200, success=succ[2 * j + 1], invalid=inval[2 * j + 1],
                                 explore=True))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=1_000_000, help="episodes per path")
    parser.add_argument("--bounded", action="store_true",
                        help="PathStats with return_bounds (hedged betting ∩ asymptotic on the hot path)")
    parser.add_argument("--coverage", action="store_true", help="print the coverage table under peeking instead")
    parser.add_argument("--power", action="store_true",
                        help="print pairs until `differ` vs the fixed-n t-test, width ratios and the betting cost")
    args = parser.parse_args()
    if args.coverage:
        coverage_table()
        return
    if args.power:
        from stats_power import print_power_table

        print_power_table()
        return
    n_total = 2 * args.episodes

    bounds = (-1e6, 1e6) if args.bounded else None
    warm = RunStats(["A", "B"], False, bounds, None)  # scipy's first-call setup
    for r in make_chunk(np.random.default_rng(1), 0, 200):
        warm.add(r)
    warm.paths["A"].summary()
    warm.comparison_summary()

    rng = np.random.default_rng(0)
    run = RunStats(["A", "B"], False, bounds, None)
    add = run.add
    wall = cpu = 0.0
    chunk_rates = []
    done = 0
    gc_was = gc.isenabled()
    while done < n_total:
        size = min(CHUNK, n_total - done)
        chunk = make_chunk(rng, done, size)
        gc.disable()
        w0, c0 = time.perf_counter(), time.process_time()
        for r in chunk:
            add(r)
        c1, w1 = time.process_time(), time.perf_counter()
        if gc_was:
            gc.enable()
        wall += w1 - w0
        cpu += c1 - c0
        chunk_rates.append((w1 - w0) / size)
        done += size
    cpu_us, wall_us = cpu / n_total * 1e6, wall / n_total * 1e6
    best_us = min(chunk_rates) * 1e6
    mode = f"RunStats(return_bounds={bounds})"
    print(f"episodes: {n_total:,} ({n_total // 2:,} per path, same seeds), {mode}; load average {_load()}")
    ok = "OK" if cpu_us <= ADD_TARGET_US else "OVER"
    print(f"RunStats.add (PathStats.add + Comparison.add), amortised over all {n_total:,} "
          f"(target <= {ADD_TARGET_US:g} µs): "
          f"{cpu_us:.2f} µs/episode CPU {ok}; wall {wall_us:.2f} µs, fastest chunk of {CHUNK:,} {best_us:.2f} µs")

    ps = run.paths["A"]

    def refresh_ms() -> tuple[float, float]:
        """(wall, cpu) milliseconds of one refresh: path A's summary and the comparison's."""
        w0, c0 = time.perf_counter(), time.process_time()
        ps.summary()
        run.comparison_summary()
        c1, w1 = time.process_time(), time.perf_counter()
        return (w1 - w0) * 1e3, (c1 - c0) * 1e3

    def grow_one_percent() -> None:  # untimed: makes the IQM cache stale
        nonlocal done
        chunk = make_chunk(rng, done, 2 * (ps.n // 50 + 2))
        for r in chunk:
            add(r)
        done += len(chunk)

    n_cold = ps.n
    cold = refresh_ms()
    stale = []
    for _ in range(5):
        grow_one_percent()
        stale.append(refresh_ms())
    cached = [refresh_ms() for _ in range(20)]
    print(f"summary() of path A + the comparison at n = {n_cold:,} valid returns on path A "
          f"(target <= {SUMMARY_TARGET_MS:g} ms):")
    for label, runs in (("cold", [cold]), ("after 1% new", stale), ("cached", cached)):
        walls = sorted(w for w, _ in runs)
        cpus = sorted(c for _, c in runs)
        w_med, c_med = walls[len(runs) // 2], cpus[len(runs) // 2]
        ok = "OK" if c_med <= SUMMARY_TARGET_MS else "OVER"
        what = "" if len(runs) == 1 else f" (median of {len(runs)})"
        print(f"  {label:>13}: {c_med:6.2f} ms CPU {ok}; wall {w_med:6.2f} ms, best wall {walls[0]:6.2f} ms{what}")

    print(f"peak memory (max RSS): {_max_rss_mb():.0f} MB")


def _max_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def coverage_table(runs: int = 1000, looks: int = 1000, seeds: int = 5) -> None:
    """The README's table: ever-miss under a look after every episode, averaged over `seeds` x `runs`."""
    print("| case | runs x looks | ever-miss | zero width | first shown |")
    print("|---|---|---|---|---|")
    for name in CASES:
        rows = [peeking_row(name, runs, looks, seed=s) for s in range(seeds)]
        miss = sum(r["ever_miss"] for r in rows) / seeds
        zero = sum(r["zero_width"] for r in rows) / seeds
        print(f"| {name} | {seeds * runs:,} x {looks:,} | {miss:.1%} | {zero:.1%} | look {rows[0]['first_look']} |")
    for bounds in (None, (0.0, 500.0)):
        rows = [equivalence_shown(runs, looks, bounds=bounds, seed=s) for s in range(seeds)]
        mean = {k: sum(r[k] for r in rows) / seeds for k in ("equivalent", "false_equivalent", "zero_width",
                                                             "ever_miss", "final_differ")}
        label = "no bounds, margin frozen after 30" if bounds is None else "bounds 0:500, margin 25"
        print(f"| A always 500 vs B capped (A - B = 7.9), {label} | {seeds * runs:,} x {looks:,} | "
              f"{mean['ever_miss']:.1%} | {mean['zero_width']:.1%} | equivalent ever {mean['equivalent']:.1%}, "
              f"falsely {mean['false_equivalent']:.1%}; differ at look {looks} {mean['final_differ']:.1%} |")
    share = sum(exact_equivalent_shown(runs, looks, 0.1, seed=s) for s in range(seeds)) / seeds
    print(f"| deterministic, B differs on 10% of seeds | {seeds * runs:,} x {looks:,} | — | — | "
          f"\"equivalent (exact)\" ever {share:.1%} |")


def _load() -> str:
    try:
        return f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cpus"
    except OSError:
        return "n/a"

if __name__ == "__main__":
    main()
