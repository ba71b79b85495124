"""Env steps/s of the rsl_rl paths `runner` and `jit` against a bare loop, at 64 worlds.

    python bench/bench_rsl.py [--num-envs 64] [--episodes 1024] [--rounds 3]

The bare loop steps the same VecEnv (tui-eval's Gymnasium adapter, PointGoal-v0 of the bundled demo
checkpoint) through the same seeds with the same actor forward (the runner's inference policy, resp.
the TorchScript export) and keeps no books: no returns, no records. The same seeds give the same
episodes, so every variant does the same env steps; the ratio is bare time / path time (1.0: the
path's bookkeeping costs nothing). Best of `--rounds` interleaved rounds, against a noisy machine.
Target: >= 0.8 for both paths.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tui_eval.kinds.rsl_rl import RslRlKind  # noqa: E402
from tui_eval.spec import RunSpec  # noqa: E402


class Feed:
    def __init__(self, seeds):
        self.seeds = iter(seeds)

    def take(self):
        seed = next(self.seeds, None)
        return None if seed is None else (seed, 0)

    cancelled = False
    heartbeat = None


def bare(env, forward, seeds) -> float:
    """The same VecEnv and policy forward, no bookkeeping."""
    started = time.perf_counter()
    obs = env.begin(Feed(seeds))
    with torch.inference_mode():
        while env.busy:
            obs, _, _, _ = env.step(forward(obs))
    env.end()
    return time.perf_counter() - started


def path_run(path, seeds) -> tuple[float, int]:
    steps = 0

    def emit(record):
        nonlocal steps
        steps += record.length

    started = time.perf_counter()
    path.run(Feed(seeds), emit)
    return time.perf_counter() - started, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--episodes", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from tui_eval.session import share_cpu_threads

    share_cpu_threads(paths=2)  # as in a run of two paths; the same for every contender
    checkpoint = sorted((ROOT / "assets" / "rsl_pointgoal").glob("model_*.pt"))[-1]
    kind = RslRlKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=args.num_envs))
    runner = kind.build_path("runner", False)
    jit = kind.build_path("jit", False)
    policy, module, groups = runner.policy, jit.module, jit.groups
    forwards = {
        "runner": lambda obs: policy(obs),
        "jit": lambda obs: module(torch.cat([obs[g] for g in groups], dim=-1)),
    }
    seeds = range(3_000_000_000, 3_000_000_000 + args.episodes)
    path_run(runner, seeds[:128]), path_run(jit, seeds[:128])  # warm up

    best = {key: float("inf") for key in ("bare runner", "runner", "bare jit", "jit")}
    steps = 0
    for _ in range(args.rounds):
        for name, path in (("runner", runner), ("jit", jit)):
            best[f"bare {name}"] = min(best[f"bare {name}"], bare(path.env, forwards[name], seeds))
            seconds, steps = path_run(path, seeds)
            best[name] = min(best[name], seconds)
    runner.close()
    jit.close()

    print(f"{args.num_envs} worlds × PointGoal-v0, {args.episodes} episodes = {steps} env steps per variant, "
          f"best of {args.rounds}, torch threads {torch.get_num_threads()}")
    for key, seconds in best.items():
        print(f"  {key:<12} {steps / seconds:10,.0f} env steps/s")
    for name in ("runner", "jit"):
        ratio = best[f"bare {name}"] / best[name]
        print(f"  {name:<6} / bare loop: {ratio:.2f}x  {'ok' if ratio >= 0.8 else 'BELOW the 0.8x target'}")


if __name__ == "__main__":
    main()
