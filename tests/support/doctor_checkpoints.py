"""Tiny real RLlib checkpoints for the doctor's tests, each with one cause built in:

    python doctor_checkpoints.py OUT_DIR

- `meanstd`: CartPole with a MeanStdFilter env-to-module connector (running observation statistics,
  saved with the checkpoint);
- `eval_time_limit`: Pendulum whose evaluation_config cuts episodes to 100 steps (training: 200) and clips
  actions (training does not: unsquashing already keeps them in bounds, so the clip changes no action).
Run in a subprocess (ray.init, training) so that the test process only restores them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.env_to_module import MeanStdFilter
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig


def small(config: PPOConfig) -> PPOConfig:
    return (config.env_runners(num_env_runners=0, num_envs_per_env_runner=2)
            .training(train_batch_size_per_learner=256, minibatch_size=128, num_epochs=1)
            .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
            .debugging(seed=3))


def mean_std_filter(env=None, spaces=None, device=None):
    return MeanStdFilter()


def save(config: PPOConfig, out: Path) -> None:
    algo = config.build_algo()
    algo.train()
    algo.save(str(out.resolve()))
    algo.stop()


def main(out: Path) -> None:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    save(small(PPOConfig().environment("CartPole-v1")).env_runners(env_to_module_connector=mean_std_filter),
         out / "meanstd")
    print("trained meanstd", flush=True)
    save(small(PPOConfig().environment("Pendulum-v1"))
         .evaluation(evaluation_interval=1, evaluation_duration=1,
                     evaluation_config={"env_config": {"max_episode_steps": 100}, "clip_actions": True}),
         out / "eval_time_limit")
    print("trained eval_time_limit", flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
