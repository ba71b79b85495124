"""Env steps/s of the rsl_rl paths `runner` and `jit` against a bare loop, at 64 worlds, on three policies.

    python bench/bench_rsl.py [--num-envs 64] [--episodes 1024] [--rounds 3] [--only mlp,lstm,pandareach]

Contenders: the bundled PointGoal-v0 demo (MLP), an LSTM actor on PointGoal-v0 (trained for one
iteration here: its speed, not its skill, is measured) and the bundled PandaReach-v3 demo (PyBullet).
The bare loop steps the same VecEnv (tui-eval's Gymnasium adapter) through the same seeds with the same
actor forward (the runner's inference policy, resp. the TorchScript export) and keeps no books: no
returns, no records; for the recurrent actor it resets the state of the worlds that are done, as rsl_rl's
play loop does (`policy.reset(dones)`; the export's state rows zeroed). The same seeds give the same
episodes, so every variant does the same env steps; the ratio is bare time / path time (1.0: the
path's bookkeeping costs nothing). Best of `--rounds` interleaved rounds, against a noisy machine.
Target: >= 0.9 for both paths on every policy.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "support"))

from common import ListFeed  # noqa: E402

from tui_eval.config.spec import RunSpec  # noqa: E402
from tui_eval.integrations.rsl_rl.kind import RslRlKind  # noqa: E402


def bare(env, forward, reset, seeds) -> float:
    """The same VecEnv and policy forward, no bookkeeping (`reset(dones)`: a recurrent policy's episode starts)."""
    started = time.perf_counter()
    obs = env.begin(ListFeed(seeds))
    with torch.inference_mode():
        if reset is not None:
            reset(None)
        while env.busy:
            obs, _, dones, _ = env.step(forward(obs))
            if reset is not None:
                reset(dones)
    env.end()
    return time.perf_counter() - started


def path_run(path, seeds) -> tuple[float, int]:
    steps = 0

    def emit(record):
        nonlocal steps
        steps += record.length

    started = time.perf_counter()
    path.run(ListFeed(seeds), emit)
    return time.perf_counter() - started, steps


def bare_policies(runner, jit):
    """(forward, reset) of the runner's policy and of the TorchScript module, as a user's own loop calls them."""
    policy, module, groups = runner.policy, jit.module, jit.groups
    state = list(jit.memory.names)

    def jit_reset(dones):
        for name in state:
            if dones is None:
                getattr(module, name).zero_()
            else:
                getattr(module, name)[:, dones] = 0.0

    recurrent = runner.recurrent
    return {
        "runner": (lambda obs: policy(obs), policy.reset if recurrent else None),
        "jit": (lambda obs: module(torch.cat([obs[g] for g in groups], dim=-1)), jit_reset if recurrent else None),
    }


def lstm_checkpoint(folder: Path) -> Path:
    from rsl_train import recurrent_cfg, train

    return train(folder, recurrent_cfg("lstm", hidden=64), "PointGoal-v0", iterations=1, num_envs=8)


def contender(name: str, folder: Path, num_envs: int) -> tuple[RslRlKind, str]:
    if name == "mlp":
        checkpoint = sorted((ROOT / "assets" / "rsl_pointgoal").glob("model_*.pt"))[-1]
        return RslRlKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=num_envs)), "MLP, PointGoal-v0"
    if name == "lstm":
        checkpoint = lstm_checkpoint(folder)
        spec = RunSpec(checkpoint=str(checkpoint), num_envs=num_envs, env_id="PointGoal-v0")
        return RslRlKind(checkpoint, spec), "LSTM 64, PointGoal-v0"
    checkpoint = sorted((ROOT / "assets" / "rsl_pandareach").glob("model_*.pt"))[-1]
    return RslRlKind(checkpoint, RunSpec(checkpoint=str(checkpoint), num_envs=num_envs)), "MLP, PandaReach-v3"


def measure(kind: RslRlKind, episodes: int, rounds: int) -> tuple[dict[str, float], int]:
    runner = kind.build_path("runner", False)
    jit = kind.build_path("jit", False)
    forwards = bare_policies(runner, jit)
    seeds = range(3_000_000_000, 3_000_000_000 + episodes)
    path_run(runner, seeds[:128]), path_run(jit, seeds[:128])  # warm up
    best = {key: float("inf") for key in ("bare runner", "runner", "bare jit", "jit")}
    steps = 0
    for _ in range(rounds):
        for name, path in (("runner", runner), ("jit", jit)):
            best[f"bare {name}"] = min(best[f"bare {name}"], bare(path.env, *forwards[name], seeds))
            seconds, steps = path_run(path, seeds)
            best[name] = min(best[name], seconds)
    runner.close()
    jit.close()
    return best, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--num-envs", type=int, default=64)
    parser.add_argument("--episodes", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--only", default="mlp,lstm,pandareach")
    args = parser.parse_args()

    from tui_eval.session import share_cpu_threads

    share_cpu_threads(paths=2)  # as in a run of two paths; the same for every contender
    print(f"{args.num_envs} worlds, {args.episodes} episodes per variant, best of {args.rounds}, "
          f"torch threads {torch.get_num_threads()}")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.only.split(","):
            kind, label = contender(name, Path(folder) / name, args.num_envs)
            best, steps = measure(kind, args.episodes, args.rounds)
            print(f"{label}: {steps} env steps per variant")
            for key, seconds in best.items():
                print(f"  {key:<12} {steps / seconds:10,.0f} env steps/s")
            for path in ("runner", "jit"):
                ratio = best[f"bare {path}"] / best[path]
                print(f"  {path:<6} / bare loop: {ratio:.2f}x  {'ok' if ratio >= 0.9 else 'BELOW the 0.9x target'}",
                      flush=True)


if __name__ == "__main__":
    main()
