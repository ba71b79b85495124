"""Episodes/s of the `connectors` path in this process vs in Ray actors (`--workers`), ratios from one run,
and what surviving dead Ray pieces costs.

    python bench/bench_workers.py [--episodes 16] [--work 100] [--rounds 2] [--only-faults]

Contenders (the CartPole demo checkpoint, explore off, every run on its own fresh seeds):
  busy x1       a CPU-bound env (BusyCartPole-v1: each step also does `--work` 48x48 matrix products), --workers 1
  busy x2       the same, --workers 2 (two actors; target >= 1.6x busy x1 on a 2-core machine)
  plain local   plain CartPole, one env, in this process
  plain actor   the same in one Ray actor (--workers 1 --ray-address auto): its extra seconds per episode
                are the actor round trip (offer, poll, record back)
  ft on / off   connectors in 2 actors and evaluate on 2 remote runners, plain CartPole, with the
                fault-tolerance machinery (the step watchdog inside actors, the evaluation-runner watch between
                evaluate() calls) and without it (no --step-timeout; the watch reduced to what it was before:
                reclaiming seeds of a runner RLlib restarted by itself); target >= 0.95x
  kill          SIGKILL of one PathWorker, then of one evaluation runner, mid-run: seconds from the kill until
                every seed it had in flight runs again (its second seeded reset; target <= 10 s)
Loading (actors start, restore the policy) is not timed: each run is timed from engine.start to its end.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path

# Ray starts each actor with OMP_NUM_THREADS=1 (its num_cpus); numpy's BLAS in this process would
# otherwise spin a thread per core on the env's small matrices (seen: 9x slower here). Same for all.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))  # cluster_envs: the CPU-bound env, importable by Ray's workers too
warnings.filterwarnings("ignore")
from tui_eval.local_ray import prepare_environment  # noqa: E402

prepare_environment()

CHECKPOINT = ROOT / "assets" / "ppo_cartpole"


def episodes_per_second(args: list[str], episodes: int, seed0: int, folder: Path, step_timeout: float | None = 30.0,
                        paths: str = "connectors") -> float:
    from tui_eval.cli import build_parser, spec_from_args
    from tui_eval.session import plan_run, start_engine

    argv = [str(CHECKPOINT), "--headless", "--paths", paths, "--seeds", f"{seed0}:{seed0 + episodes}",
            "--log", str(folder / f"run-{seed0}.sqlite"), *args]
    spec = spec_from_args(build_parser().parse_args(argv))
    spec.step_timeout = step_timeout  # None: no watchdog (not reachable from the command line)
    engine = start_engine(plan_run(spec))
    try:
        started = time.perf_counter()
        engine.start()
        assert engine.wait(600), "the run did not finish"
        took = time.perf_counter() - started
    finally:
        engine.close()
    assert engine.log.count() == episodes * len(paths.split(","))
    return episodes / took


def fault_tolerance_rates(episodes: int, rounds: int, folder: Path, seed: int) -> dict[str, float]:
    """Episodes/s of connectors in actors + evaluate on runners, with and without the machinery."""
    from tui_eval.integrations.rllib.paths import eval_runners

    watch_check = eval_runners.RunnerWatch.check
    seen: dict[str, list[float]] = {"ft on": [], "ft off": []}
    args = ["--paths", "evaluate,connectors", "--num-envs", "2", "--workers", "2", "--explore", "evaluate=off"]
    for _ in range(rounds):
        for name in seen:
            off = name == "ft off"
            eval_runners.RunnerWatch.check = (lambda self, lost, notice: self._pump.reclaim()) if off else watch_check
            seen[name].append(episodes_per_second(args, episodes, seed, folder, step_timeout=None if off else 30.0,
                                                  paths="evaluate,connectors"))
            seed += episodes
    eval_runners.RunnerWatch.check = watch_check
    return {name: statistics.median(values) for name, values in seen.items()}


def seconds_to_rerun(path: str, folder: Path, seed0: int, episodes: int = 40) -> tuple[float, float, int]:
    """SIGKILL one of the path's Ray processes mid-run: (seconds until the first, and until the last, of its
    seeds in flight started again, how many there were), from the seeded resets StampedCartPole notes."""
    from tui_eval.cli import build_parser, spec_from_args
    from tui_eval.session import plan_run, start_engine

    stamps = folder / f"stamps-{seed0}.txt"
    argv = [str(CHECKPOINT), "--headless", "--paths", path, "--seeds", f"{seed0}:{seed0 + episodes}", "--workers", "2",
            "--num-envs", "2", "--env", "cluster_envs:StampedCartPole-v1", "--env-config",
            f'{{"stamp_file": "{stamps}"}}', "--log", str(folder / f"kill-{seed0}.sqlite")]
    engine = start_engine(plan_run(spec_from_args(build_parser().parse_args(argv))))
    built = engine.paths[path]
    victim = built._slots[0].info["pid"] if path == "connectors" else int(built.placement[0].rsplit(" ", 1)[1])
    try:
        engine.start()
        while engine.log.count() < 4:
            time.sleep(0.05)
        os.kill(victim, signal.SIGKILL)
        killed = time.time()
        assert engine.wait(600), "the run did not finish"
    finally:
        engine.close()
    assert sorted(r.seed for r in engine.log.records()) == list(range(seed0, seed0 + episodes))
    starts: dict[int, list[float]] = {}
    for line in stamps.read_text().splitlines():
        seed, at = line.split()
        starts.setdefault(int(seed), []).append(float(at))
    again = [times[1] - killed for times in starts.values() if len(times) > 1 and times[0] < killed < times[1]]
    return (min(again), max(again), len(again)) if again else (float("nan"), float("nan"), 0)


def report_faults(opts: argparse.Namespace, folder: Path, seed: int) -> None:
    rate = fault_tolerance_rates(opts.episodes, opts.rounds, folder, seed)
    for name, value in rate.items():
        print(f"{name:>12}: {value:7.2f} episodes/s (evaluate + connectors, 2 workers each)")
    print(f"ft on / ft off: {rate['ft on'] / rate['ft off']:.2f}x (target >= 0.95x)")
    for index, path in enumerate(("connectors", "evaluate")):
        first, last, lost = seconds_to_rerun(path, folder, seed + 10_000_000 * (index + 1))
        what = "a PathWorker" if path == "connectors" else "an evaluation EnvRunner"
        print(f"kill {what}: {lost} seed(s) in flight; running again after {first:.1f} s (first) .. "
              f"{last:.1f} s (last) (target <= 10 s)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--work", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--only-faults", action="store_true", help="only the fault-tolerance contenders")
    opts = parser.parse_args()
    from tui_eval.local_ray import ensure_ray, stop_ray

    busy = ["--env", "cluster_envs:BusyCartPole-v1", "--env-config", f'{{"work": {opts.work}}}', "--num-envs", "4"]
    contenders = {
        "busy x1": busy + ["--workers", "1"],
        "busy x2": busy + ["--workers", "2"],
        "plain local": ["--num-envs", "1", "--workers", "1"],
        "plain actor": ["--num-envs", "1", "--workers", "1", "--ray-address", "auto"],
    }
    ensure_ray(num_cpus=4)  # two paths x two workers in the fault-tolerance contenders
    seen: dict[str, list[float]] = {name: [] for name in contenders}
    seed = 1_000_000_000
    with tempfile.TemporaryDirectory() as folder:
        report_faults(opts, Path(folder), seed + 500_000_000)
        if opts.only_faults:
            stop_ray()
            return
        for _ in range(opts.rounds):  # in turns, so that machine noise hits every contender alike
            for name, args in contenders.items():
                seen[name].append(episodes_per_second(args, opts.episodes, seed, Path(folder)))
                seed += opts.episodes
    stop_ray()
    rate = {name: statistics.median(values) for name, values in seen.items()}
    for name, value in rate.items():
        print(f"{name:>12}: {value:7.2f} episodes/s")
    print(f"busy x2 / busy x1: {rate['busy x2'] / rate['busy x1']:.2f}x (target >= 1.6x)")
    overhead = 1 / rate["plain actor"] - 1 / rate["plain local"]
    print(f"actor round trip: {1000 * overhead:+.1f} ms per episode "
          f"({rate['plain actor'] / rate['plain local']:.2f}x the in-process rate, one env, plain CartPole)")


if __name__ == "__main__":
    main()
