"""Env steps/s of tui-eval's mjlab paths against a bare loop of mjlab's own env and inference policy, 16 worlds.

    python bench/bench_mjlab.py [--run RUN_FOLDER] [--task Mjlab-Cartpole-Balance] [--batches 4] [--rounds 3]

The run: `--run` (an mjlab run folder), else a tiny one trained here by mjlab's own `train`
(tests/support/mjlab_run.py, ~20 s). Episodes last `--episode-s` seconds (cartpole balance ends every episode at
its time limit, so every variant does the same env steps).

- **bare**: what a user writes with mjlab alone: `ManagerBasedRlEnv` + `RslRlVecEnvWrapper`, the task's runner
  class with the checkpoint loaded, `get_inference_policy()`; per batch `env.seed(S)`, `env.reset()`, then the
  policy and `env.step` until the episodes end. No books kept.
- **runner**: tui-eval's `runner` path (`MjlabVecEnv`, records with termination and reward terms) on the same
  batches.
- **onnx**: tui-eval's `onnx` path: the run's `<run>.onnx` (batch 1: one onnxruntime call per world and step).

Ratio: bare time / path time (1.0: tui-eval's bookkeeping costs nothing). Best of `--rounds` interleaved rounds.
Target: runner >= 0.9; onnx reported.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")
os.environ.setdefault("MJLAB_WARP_QUIET", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from common import ListFeed  # noqa: E402

from tui_eval.config.spec import RunSpec, SeedBlock  # noqa: E402
from tui_eval.integrations.rsl_rl.mjlab.kind import MjlabKind  # noqa: E402

WORLDS = 16



def bare_loop(task: str, checkpoint: Path, episode_s: float, batches: list[int]) -> float:
    from mjlab.envs import ManagerBasedRlEnv
    from mjlab.rl import MjlabOnPolicyRunner, RslRlVecEnvWrapper
    from mjlab.tasks.registry import load_env_cfg, load_rl_cfg, load_runner_cls

    cfg = load_env_cfg(task)
    cfg.scene.num_envs, cfg.episode_length_s = WORLDS, episode_s
    env = RslRlVecEnvWrapper(ManagerBasedRlEnv(cfg=cfg, device="cpu"))
    runner = (load_runner_cls(task) or MjlabOnPolicyRunner)(env, asdict(load_rl_cfg(task)), device="cpu")
    runner.load(str(checkpoint), load_cfg={"actor": True}, strict=True, map_location="cpu")
    policy = runner.get_inference_policy(device="cpu")
    started = time.perf_counter()
    with torch.inference_mode():
        for batch in batches:
            env.seed(batch)
            env.reset()
            obs = env.get_observations()
            done = torch.zeros(WORLDS, dtype=torch.bool)
            while not bool(done.all()):
                obs, _, dones, _ = env.step(policy(obs))
                done |= dones.bool()
    took = time.perf_counter() - started
    env.close()
    return took


def path_loop(run: Path, task: str, name: str, episode_s: float, seeds: list[int]) -> tuple[float, int]:
    spec = RunSpec(checkpoint=str(run), env_id=task, env_config={"episode_length_s": episode_s}, num_envs=WORLDS,
                   seeds=SeedBlock(seeds[0], seeds[-1] + 1), paths=[name])
    path = MjlabKind(run, spec).build_path(name, False)
    records = []
    started = time.perf_counter()
    path.run(ListFeed(seeds), records.append)
    took = time.perf_counter() - started
    path.close()
    return took, sum(r.length for r in records)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", type=Path)
    parser.add_argument("--task", default="Mjlab-Cartpole-Balance")
    parser.add_argument("--episode-s", type=float, default=5.0)
    parser.add_argument("--batches", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    torch.set_num_threads(1)
    run = args.run
    if run is None:
        from tests.support.mjlab_run import train, write_onnx

        run = train(Path(tempfile.mkdtemp(prefix="bench-mjlab-")))
        write_onnx(run)
    checkpoint = sorted(run.glob("model_*.pt"), key=lambda p: int(p.stem.split("_")[1]))[-1]
    start = 1_000_000_000
    seeds = list(range(start, start + WORLDS * args.batches))
    batches = seeds[::WORLDS]
    best: dict[str, float] = {}
    steps = 0
    for _ in range(args.rounds):
        best["bare"] = min(best.get("bare", float("inf")), bare_loop(args.task, checkpoint, args.episode_s, batches))
        for name in ("runner", "onnx"):
            took, steps = path_loop(run, args.task, name, args.episode_s, seeds)
            best[name] = min(best.get(name, float("inf")), took)
    print(f"{args.task}, {WORLDS} worlds, {args.batches} batches, {steps} env steps (all worlds), best of "
          f"{args.rounds} rounds")
    for name, took in best.items():
        ratio = best["bare"] / took
        print(f"  {name:7s} {took:6.2f} s  {steps / took:8.0f} env steps/s  bare/path {ratio:.2f}x")


if __name__ == "__main__":
    main()
