"""Episodes/s of the `connectors` path in this process vs in Ray actors (`--workers`), ratios from one run.

    python bench/bench_workers.py [--episodes 16] [--work 100] [--rounds 2]

Contenders (the CartPole demo checkpoint, explore off, every run on its own fresh seeds):
  busy x1       a CPU-bound env (BusyCartPole-v1: each step also does `--work` 48x48 matrix products), --workers 1
  busy x2       the same, --workers 2 (two actors; target >= 1.6x busy x1 on a 2-core machine)
  plain local   plain CartPole, one env, in this process
  plain actor   the same in one Ray actor (--workers 1 --ray-address auto): its extra seconds per episode
                are the actor round trip (offer, poll, record back)
Loading (actors start, restore the policy) is not timed: each run is timed from engine.start to its end.
"""

from __future__ import annotations

import argparse
import os
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
sys.path.insert(0, str(ROOT / "tests"))  # cluster_envs: the CPU-bound env, importable by Ray's workers too
warnings.filterwarnings("ignore")
from tui_eval.local_ray import prepare_environment  # noqa: E402

prepare_environment()

CHECKPOINT = ROOT / "assets" / "ppo_cartpole"


def episodes_per_second(args: list[str], episodes: int, seed0: int, folder: Path) -> float:
    from tui_eval.cli import build_parser, spec_from_args
    from tui_eval.session import plan_run, start_engine

    argv = [str(CHECKPOINT), "--headless", "--paths", "connectors", "--seeds", f"{seed0}:{seed0 + episodes}",
            "--log", str(folder / f"run-{seed0}.sqlite"), *args]
    engine = start_engine(plan_run(spec_from_args(build_parser().parse_args(argv))))
    try:
        started = time.perf_counter()
        engine.start()
        assert engine.wait(600), "the run did not finish"
        took = time.perf_counter() - started
    finally:
        engine.close()
    assert engine.log.count() == episodes
    return episodes / took


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--episodes", type=int, default=16)
    parser.add_argument("--work", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=2)
    opts = parser.parse_args()
    from tui_eval.local_ray import ensure_ray, stop_ray

    busy = ["--env", "cluster_envs:BusyCartPole-v1", "--env-config", f'{{"work": {opts.work}}}', "--num-envs", "4"]
    contenders = {
        "busy x1": busy + ["--workers", "1"],
        "busy x2": busy + ["--workers", "2"],
        "plain local": ["--num-envs", "1", "--workers", "1"],
        "plain actor": ["--num-envs", "1", "--workers", "1", "--ray-address", "auto"],
    }
    ensure_ray(num_cpus=2)
    seen: dict[str, list[float]] = {name: [] for name in contenders}
    seed = 1_000_000_000
    with tempfile.TemporaryDirectory() as folder:
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
