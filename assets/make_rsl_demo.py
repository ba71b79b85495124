"""Train the bundled rsl_rl demo checkpoint: PPO (rsl-rl-lib 5.x) on PointGoal-v0, on CPU, in ~15 s.

    python assets/make_rsl_demo.py [--out assets/rsl_pointgoal] [--iterations 40]

Writes, in Isaac Lab's layout:
    <out>/model_<it>.pt          OnPolicyRunner.save: actor/critic/optimizer state dicts, iteration
    <out>/params/agent.yaml      the runner cfg (rsl_rl 5 layout) plus `tui_eval_env`, the env id
    <out>/exported/policy.pt     runner.export_policy_to_jit (what Isaac Lab's play script writes)

Training worlds are Gymnasium PointGoal-v0 envs behind tui-eval's rsl_rl VecEnv adapter, seeded from
the cfg's `seed` counting up (one seed per episode), far below the held-out block tui-eval evaluates on.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import time
from pathlib import Path

import numpy as np
import torch
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rsl_training import CountingFeed, TrainEnv  # noqa: E402  (beside this script)

from tui_eval.integrations.rsl_rl.paths.model import quiet  # noqa: E402

ENV_ID = "PointGoal-v0"
SEED = 42

CFG = {
    "seed": SEED,
    "num_steps_per_env": 32,
    "save_interval": 50,
    "obs_groups": {"actor": ["policy"], "critic": ["policy"]},
    "actor": {
        "class_name": "MLPModel",
        "hidden_dims": [64, 64],
        "activation": "elu",
        "obs_normalization": True,
        "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 0.8, "std_type": "scalar"},
    },
    "critic": {"class_name": "MLPModel", "hidden_dims": [64, 64], "activation": "elu", "obs_normalization": True},
    "algorithm": {
        "class_name": "PPO",
        "num_learning_epochs": 5,
        "num_mini_batches": 4,
        "learning_rate": 1.0e-3,
        "schedule": "adaptive",
        "desired_kl": 0.01,
        "gamma": 0.99,
        "lam": 0.95,
        "entropy_coef": 0.003,
        "clip_param": 0.2,
        "value_loss_coef": 1.0,
        "max_grad_norm": 1.0,
    },
    # read by tui-eval (rsl_rl saves no env id; Isaac Lab keeps the task name outside the cfg)
    "tui_eval_env": {"id": ENV_ID, "config": {}},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "rsl_pointgoal"))
    parser.add_argument("--iterations", type=int, default=40)
    parser.add_argument("--num-envs", type=int, default=64)
    args = parser.parse_args()

    from rsl_rl.runners import OnPolicyRunner

    torch.manual_seed(SEED)
    np.random.seed(SEED)
    torch.set_num_threads(1)
    out = Path(args.out)
    for old in out.glob("model_*.pt"):  # replace an earlier demo, leave anything else alone
        old.unlink()
    shutil.rmtree(out / "exported", ignore_errors=True)
    (out / "params").mkdir(parents=True, exist_ok=True)

    env = TrainEnv(ENV_ID, {}, args.num_envs, "cpu")
    env.begin(CountingFeed(SEED))
    runner_cfg = {k: v for k, v in CFG.items() if k != "tui_eval_env"}
    with quiet():
        runner = OnPolicyRunner(env, runner_cfg, log_dir=None, device="cpu")
    started = time.time()
    chunk = 10
    for done in range(0, args.iterations, chunk):
        steps = min(chunk, args.iterations - done)
        runner.learn(steps)
        runner.current_learning_iteration = done + steps  # where the next chunk starts
        rate = np.mean(env.recent) if env.recent else 0.0
        print(f"iteration {done + steps:4d}  training success (sampled actions) {rate:5.1%}  "
              f"{time.time() - started:5.1f}s", flush=True)
    iteration = args.iterations - 1  # rsl_rl names the final file by the last iteration's index
    runner.current_learning_iteration = iteration
    runner.save(str(out / f"model_{iteration}.pt"))
    runner.export_policy_to_jit(str(out / "exported"))
    with (out / "params" / "agent.yaml").open("w") as fh:
        yaml.safe_dump(CFG, fh, sort_keys=False)
    env.close()
    size = sum(p.stat().st_size for p in out.rglob("*") if p.is_file())
    print(f"wrote {out} ({size / 1024:.0f} KiB) in {time.time() - started:.1f}s")


if __name__ == "__main__":
    main()
