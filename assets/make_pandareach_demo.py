"""Train the bundled PandaReach demo: rsl_rl PPO (rsl-rl-lib 5.x) on panda-gym's PandaReach-v3, on CPU.

    python assets/make_pandareach_demo.py [--out assets/rsl_pandareach] [--iterations 60]

Needs the `robotics` extra (`pip install -e '.[robotics]'`: panda-gym, pybullet). A few minutes on one core.
Writes, in Isaac Lab's layout:
    <out>/model_<it>.pt          OnPolicyRunner.save: actor/critic/optimizer state dicts, iteration
    <out>/params/agent.yaml      the runner cfg (rsl_rl 5 layout) plus `tui_eval_env`, the env id
    <out>/exported/policy.pt     runner.export_policy_to_jit (what Isaac Lab's play script writes)

The worlds are panda-gym envs behind tui-eval's rsl_rl VecEnv adapter (one observation group per key of
the Dict observation). The actor sees the arm (`observation`) and the target (`desired_goal`); the critic
also gets `achieved_goal`, as privileged critics do. Training uses the dense-reward variant of the same
task (PandaReachDense-v3: identical dynamics, observations and success test, reward = -distance), seeded
from the cfg's `seed` counting up (one seed per episode), far below the held-out block tui-eval
evaluates on. The checkpoint names PandaReach-v3, whose success is `info["is_success"]`.
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

TRAIN_ENV_ID = "panda_gym:PandaReachDense-v3"
EVAL_ENV_ID = "panda_gym:PandaReach-v3"
SEED = 42

CFG = {
    "seed": SEED,
    "num_steps_per_env": 32,
    "save_interval": 100,
    "clip_actions": 1.0,
    "obs_groups": {"actor": ["observation", "desired_goal"],
                   "critic": ["observation", "achieved_goal", "desired_goal"]},
    "actor": {
        "class_name": "MLPModel",
        "hidden_dims": [64, 64],
        "activation": "elu",
        "obs_normalization": True,
        "distribution_cfg": {"class_name": "GaussianDistribution", "init_std": 0.6, "std_type": "scalar"},
    },
    "critic": {"class_name": "MLPModel", "hidden_dims": [64, 64], "activation": "elu", "obs_normalization": True},
    "algorithm": {
        "class_name": "PPO",
        "num_learning_epochs": 5,
        "num_mini_batches": 4,
        "learning_rate": 1.0e-3,
        "schedule": "adaptive",
        "desired_kl": 0.01,
        "gamma": 0.95,
        "lam": 0.95,
        "entropy_coef": 0.0,
        "clip_param": 0.2,
        "value_loss_coef": 1.0,
        "max_grad_norm": 1.0,
    },
    # read by tui-eval (rsl_rl saves no env id; Isaac Lab keeps the task name outside the cfg)
    "tui_eval_env": {"id": EVAL_ENV_ID, "config": {}},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(Path(__file__).resolve().parent / "rsl_pandareach"))
    parser.add_argument("--iterations", type=int, default=60)
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

    env = TrainEnv(TRAIN_ENV_ID, {}, args.num_envs, "cpu", clip_actions=CFG["clip_actions"], recent=300)
    env.begin(CountingFeed(SEED))
    runner_cfg = {k: v for k, v in CFG.items() if k != "tui_eval_env"}
    with quiet():
        runner = OnPolicyRunner(env, runner_cfg, log_dir=None, device="cpu")
    started = time.time()
    chunk = 5
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
