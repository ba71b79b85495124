"""Train the small demo checkpoints bundled in assets/ (CPU, about a minute each; LunarLander a few).

    python assets/make_demo_checkpoints.py            # all
    python assets/make_demo_checkpoints.py cartpole   # one

They are real RLlib (new API stack) PPO checkpoints, deliberately under-trained so that sampling
(explore on) and the deterministic policy (explore off) give visibly different returns.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

ASSETS = Path(__file__).resolve().parent

DEMOS = {
    # name: (env, iterations, extra training settings)
    "ppo_cartpole": ("CartPole-v1", 12, {"lr": 1e-3}),
    "ppo_pendulum": ("Pendulum-v1", 5, {"lr": 1e-3}),
    # a pixel demo for --frames / record: LunarLander renders through rgb_array; an MLP learns to
    # hover and land within a few minutes of CPU
    "ppo_lunarlander": ("LunarLander-v3", 40,
                        {"lr": 1e-3, "train_batch_size_per_learner": 4000, "minibatch_size": 500}),
}
HIDDEN = {"ppo_lunarlander": [64, 64]}


def train(name: str) -> Path:
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig

    env_id, iterations, training = DEMOS[name]
    config = (
        PPOConfig()
        .environment(env_id)
        .env_runners(num_env_runners=0, num_envs_per_env_runner=4)
        .training(**{"train_batch_size_per_learner": 2000, "minibatch_size": 250, "num_epochs": 6, **training})
        .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=HIDDEN.get(name, [32, 32])))
        .debugging(seed=7)
    )
    algo = config.build_algo()
    t0 = time.time()
    for i in range(iterations):
        result = algo.train()
        ret = result["env_runners"].get("episode_return_mean")
        print(f"{name}: iteration {i + 1}/{iterations} return_mean={ret}", flush=True)
    out = ASSETS / name
    if out.exists():
        shutil.rmtree(out)
    algo.save(str(out))
    algo.stop()
    print(f"{name}: saved to {out} in {time.time() - t0:.0f} s", flush=True)
    return out


def main(argv: list[str]) -> None:
    import ray

    names = argv or list(DEMOS)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False)
    for name in names:
        train(name if name.startswith("ppo_") else f"ppo_{name}")
    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
