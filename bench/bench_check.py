"""What the policy-agreement check costs the paths it checks: a default run's two paths, placed as it places them,
playing the same seeds at once, with the check of a differing seed running beside them and without.

    python bench/bench_check.py [--checkpoint DIR] [--episodes 100] [--num-envs 8] [--cpu-time]
                                [--min-rounds 6] [--max-rounds 20] [--width 0.02] [--budget 300]

The check (tui_eval/isolation/check.py: a fresh process that builds both paths, replays the seed on each, feeds each
policy the other's observations and replays more seeds for the noise floor) runs once per run, from the first
differing seed, while the run goes on. Contenders: `paths` (the host path in this process and the other in a
process of its own, both on the round's seeds at once; the round ends when both are done: a default run of
--episodes seeds), `paths+check` (the same with one check started with the round, the round ending once the check
has too: a run waits for its check) and `paths+checks` (checks one after another for the whole round: the check's
steady cost, the worst case). The rows:
both paths' env steps/s together with the check(s) beside them / without, target >= 0.95 (the check keeps the run
within 5 % of its speed). The check's own duration is printed too. Default: the CartPole demo (evaluate and
connectors); any checkpoint tui-eval opens works (its default paths, the check of `a` = its first path).
How it measures: bench/common.py.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
warnings.filterwarnings("ignore")
from tui_eval.local_ray import prepare_environment  # noqa: E402

prepare_environment()

from common import (  # noqa: E402
    Contender,
    ListFeed,
    Ratio,
    bench_options,
    clocks_of,
    own_process,
    pin_threads,
    process_cpu,
    report,
    run_measure,
    warm_for,
)

THREADS = pin_threads(paths=2)  # as a run of two paths sets them
SEED0 = 1_000_000_000


class Paths:
    """The run's two paths as a default run places them, played on the same seeds at once."""

    def __init__(self, spec, episodes: int):
        from tui_eval.feed import Heartbeat
        from tui_eval.kinds import load_kind
        from tui_eval.session import host_path, processes_line

        self.kind = load_kind(spec)
        self.names = list(self.kind.default_paths)
        host = host_path(spec, self.kind, self.names) or self.names[0]
        self.line = processes_line(spec, self.kind, self.names)
        self.paths = {name: self.kind.build_path(name, False) if name == host else
                      own_process(spec, name, warm_for(spec)) for name in self.names}
        self.seeds = range(SEED0, SEED0 + episodes)
        self.heartbeat = Heartbeat()
        self.records: dict[str, list] = {}

    def play(self) -> int:
        """Both paths on the round's seeds, each in a thread of its own (as the engine runs them); the env steps."""
        records: dict[str, list] = {name: [] for name in self.names}
        threads = [threading.Thread(target=path.run, args=(ListFeed(self.seeds, self.heartbeat), records[name].append))
                   for name, path in self.paths.items()]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        self.records = records
        return sum(r.length for rs in records.values() for r in rs)

    def cpu(self) -> float:
        return process_cpu() + sum(process_cpu(p.pid) for p in self.paths.values() if getattr(p, "pid", None))

    def request(self):
        """The check of the first seed, as the engine asks it (tui_eval/engine/proof.py), from the last round."""
        from tui_eval.stats.exact_proof import CheckRequest

        a, b = self.names
        by_seed = {name: {r.seed: r for r in rs} for name, rs in self.records.items()}
        recorded = {name: (found[SEED0].ret, not found[SEED0].invalid, found[SEED0].success)
                    for name, found in by_seed.items()}
        floor = [(seed, 0, by_seed[a][seed].ret) for seed in list(self.seeds)[1:9]]
        return CheckRequest(a, b, SEED0, 0, recorded, floor, None)


class CheckLoop:
    """Checks one after another in a thread of their own while a round runs (`start`, `stop`), or one per round
    (`once`); their durations."""

    def __init__(self, spec, request, once: bool = False):
        from tui_eval.isolation.check import PolicyCheck

        self.make = lambda: PolicyCheck(spec, {"cwd": os.getcwd(), "threads": 1, "keep_apart": [],
                                               "sys_path": [p for p in sys.path if p]})
        self.request, self.durations, self.once = request, [], once
        self._stop = threading.Event()
        self._check = None
        self._thread: threading.Thread | None = None

    def _loop(self) -> None:
        while not self._stop.is_set():
            self._check = self.make()
            started = time.perf_counter()
            try:
                self._check(self.request)
                self.durations.append(time.perf_counter() - started)
            except Exception:  # ended by `stop` (its process closed): no duration
                pass
            if self.once:
                return

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._loop, name="check-loop", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._check is not None:
            self._check.close()
        if self._thread is not None:
            self._thread.join()


def main() -> None:
    from tui_eval.config.spec import RunSpec

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", type=Path, default=ROOT / "assets" / "ppo_cartpole")
    parser.add_argument("--episodes", type=int, default=100, help="seeds per path per round")
    parser.add_argument("--num-envs", type=int, default=8)
    bench_options(parser, min_rounds=6, max_rounds=20, budget_s=300.0)
    args = parser.parse_args()
    spec = RunSpec(checkpoint=str(args.checkpoint.resolve()), num_envs=args.num_envs)
    paths = Paths(spec, args.episodes)
    paths.play()  # warm-up, and the records the check's request is made of
    request = paths.request()
    loops = {"paths+check": CheckLoop(spec, request, once=True), "paths+checks": CheckLoop(spec, request)}

    def with_checks(checks: CheckLoop):
        def play() -> int:
            checks.start()
            try:
                steps = paths.play()
                if checks.once and checks._thread is not None:  # a run that ends meanwhile waits for its check
                    checks._thread.join()
                return steps
            finally:
                checks.stop()

        return play

    print(f"{args.checkpoint.name}, {args.num_envs} envs, the same {args.episodes} seeds per path per round; "
          f"{THREADS}\na default run places its paths: {paths.line}", flush=True)
    built = [Contender("paths", paths.play, cpu=paths.cpu),
             *(Contender(name, with_checks(loop), cpu=paths.cpu) for name, loop in loops.items())]
    wanted = [Ratio("paths+check", "paths", f"a run of {args.episodes} seeds with its one check / without", 0.95,
                    "the policy-agreement check, as placed:"),
              Ratio("paths+checks", "paths", "both paths with checks one after another beside them / without", None,
                    "the check's steady cost (the worst case: a run checks once):")]
    report(run_measure(built, wanted, args), wanted, clocks_of(args))
    for name, loop in loops.items():
        if loop.durations:
            print(f"  {name}: a check took {statistics.median(loop.durations):.1f} s (median of "
                  f"{len(loop.durations)} that finished within a round)")


if __name__ == "__main__":
    main()
