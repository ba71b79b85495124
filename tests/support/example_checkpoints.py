"""Tiny checkpoints of RLlib's own example scripts, with their envs and modules as the ray wheel ships them:

    python -m tests.support.example_checkpoints OUT_DIR

- `corridor`: `ray/rllib/examples/envs/custom_gym_env.py`'s config (`SimpleCorridor`, `corridor_length` 10):
  an env that seeds Python's process-wide `random` in `reset` and draws from it at the goal.
- `action_mask`: `ray/rllib/examples/rl_modules/action_masking_rl_module.py`'s config (`ActionMaskEnv`, a
  `RandomEnv` that ignores its reset seed, and the example's `ActionMaskingTorchRLModule`).
- `lstm_inference`: `rllib/examples/inference/policy_inference_after_training_w_connector.py`'s config (PPO with
  `use_lstm=True` on `StatelessCartPole`, `num_epochs=6, lr=0.0003, vf_loss_coeff=0.01`); that script is not in
  the wheel, its env is (the script registers it as "stateless-cart"; here the class is the env). Its
  inference loop is `tests/support/doctor_loops.py:policy_inference_example`.
Changed from the scripts only where a test needs speed: no Tune, no remote runners (the mask example's
evaluation runner too), one small training iteration.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ray

SMALL = dict(train_batch_size_per_learner=128, minibatch_size=64, num_epochs=1)


def _fast(config):
    return (config.env_runners(num_env_runners=0, num_envs_per_env_runner=2).learners(num_learners=0)
            .reporting(min_time_s_per_iteration=0, min_sample_timesteps_per_iteration=64).debugging(seed=3))


def corridor():
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.examples.envs.custom_gym_env import SimpleCorridor

    config = PPOConfig().environment(SimpleCorridor, env_config={"corridor_length": 10})
    return _fast(config).training(**SMALL)


def action_mask():
    from gymnasium.spaces import Box, Discrete
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.envs.classes.action_mask_env import ActionMaskEnv
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import ActionMaskingTorchRLModule

    config = (PPOConfig()
              .environment(env=ActionMaskEnv, env_config={"action_space": Discrete(100),
                                                          "observation_space": Box(-1.0, 1.0, (5,))})
              .rl_module(rl_module_spec=RLModuleSpec(module_class=ActionMaskingTorchRLModule,
                                                     model_config={"head_fcnet_hiddens": [64, 64],
                                                                   "head_fcnet_activation": "relu"})))
    return _fast(config).training(**SMALL)


def lstm_inference():
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.examples.envs.classes.stateless_cartpole import StatelessCartPole

    config = (PPOConfig().environment(StatelessCartPole)
              .training(num_epochs=6, lr=0.0003, vf_loss_coeff=0.01)
              .rl_module(model_config=DefaultModelConfig(use_lstm=True)))
    return _fast(config).training(**SMALL)


EXAMPLES = {"corridor": corridor, "action_mask": action_mask, "lstm_inference": lstm_inference}


def main(out: Path) -> None:
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    for name, recipe in EXAMPLES.items():
        algo = recipe().build_algo()
        algo.train()
        algo.save(str((out / name).resolve()))
        algo.stop()
        print("trained", name, flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
