"""Throughput of the RLlib paths on the CartPole demo checkpoint, as ratios taken in one run.

    python bench/bench_rllib.py [--num-envs 8] [--episodes 32] [--rounds 3]

Contenders, all on the same envs count and the same held-out seeds, explore off:
  bare        the same vector env + one RLModule forward per step + argmax, no bookkeeping at all
  connectors  tui-eval's `connectors` path (stock pipelines fused into batched calls)
  generic     the same with --generic-connectors (RLlib's pipelines and episodes, step by step)
  evaluate    tui-eval's `evaluate` path (Algorithm.evaluate() on a local evaluation EnvRunner)
Targets: connectors >= 1.2x evaluate and >= 0.6x bare.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))
warnings.filterwarnings("ignore")
os.environ.setdefault("RAY_AUTH_MODE", "disabled")

from common import ListFeed, interleaved  # noqa: E402

CHECKPOINT = ROOT / "assets" / "ppo_cartpole"
SEED0 = 1_000_000_000


def bare_loop(num_envs: int, episodes: int):
    import numpy as np
    import torch
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.rl_module import RLModule

    from tui_eval.paths.vector_env import make_guarded_vector_env

    module = RLModule.from_checkpoint(str(CHECKPOINT / "learner_group/learner/rl_module/default_policy"))
    module.eval()
    seeds = iter(range(SEED0, 2**31))
    # The same vector env as the paths step (guarded sub-envs seeded from a feed), never idle.
    env = make_guarded_vector_env("CartPole-v1", {}, num_envs, lambda: (next(seeds), 0), None, None)

    def run() -> int:
        obs, _ = env.reset()
        done_episodes = steps = 0
        while done_episodes < episodes:
            with torch.no_grad():
                logits = module._forward_inference({Columns.OBS: torch.from_numpy(obs)})[Columns.ACTION_DIST_INPUTS]
            obs, _, terminated, truncated, _ = env.step(logits.argmax(-1).numpy())
            steps += num_envs
            done_episodes += int(np.count_nonzero(terminated | truncated))
        return steps

    return run


def path_runner(path, episodes: int):
    def run() -> int:
        records = []
        path.run(ListFeed(range(SEED0, SEED0 + episodes)), records.append)
        return sum(r.length for r in records)

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-envs", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from tui_eval.kinds.rllib import RllibKind
    from tui_eval.session import share_cpu_threads
    from tui_eval.spec import RunSpec

    share_cpu_threads(paths=2)  # as in a run of two paths; the same for every contender

    kind = RllibKind(CHECKPOINT, RunSpec(checkpoint=str(CHECKPOINT), num_envs=args.num_envs))
    generic_kind = RllibKind(CHECKPOINT, RunSpec(checkpoint=str(CHECKPOINT), num_envs=args.num_envs,
                                                 generic_connectors=True))
    contenders = {
        "bare": bare_loop(args.num_envs, args.episodes),
        "connectors": path_runner(kind.build_path("connectors", explore=False), args.episodes),
        "generic": path_runner(generic_kind.build_path("connectors", explore=False), args.episodes),
        "evaluate": path_runner(kind.build_path("evaluate", explore=False), args.episodes),
    }
    path_runner(kind.build_path("connectors", explore=False), args.num_envs)()  # warm-up
    rates = interleaved(contenders, rounds=args.rounds)
    print(f"CartPole demo checkpoint, {args.num_envs} envs, {args.episodes} episodes per round, "
          f"median of {args.rounds} interleaved rounds, explore off")
    for name, rate in rates.items():
        print(f"  {name:<11} {rate:9.0f} env steps/s")
    print(f"  connectors / evaluate = {rates['connectors'] / rates['evaluate']:.2f}x  (target >= 1.2)")
    print(f"  connectors / bare     = {rates['connectors'] / rates['bare']:.2f}x  (target >= 0.6)")
    print(f"  evaluate / bare       = {rates['evaluate'] / rates['bare']:.2f}x")
    print(f"  connectors --generic-connectors / bare = {rates['generic'] / rates['bare']:.2f}x "
          "(RLlib's pipelines called step by step)")


if __name__ == "__main__":
    main()
