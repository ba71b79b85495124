"""Trains the user's checkpoints the way RLlib users do (run from the folder holding my_rl_project):

    python train_user_checkpoints.py OUT_DIR [NAME ...]

NAMEs: experiment (a tune.Tuner run), eval_time_limit, strict_module, float_carracing. Each is tiny:
the point is a real checkpoint of each shape, not a good policy.
"""

from __future__ import annotations

import sys
from pathlib import Path

import ray
from ray import tune
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.core.rl_module.rl_module import RLModuleSpec

import my_rl_project


def small(config: PPOConfig, batch: int = 256) -> PPOConfig:
    return (config.env_runners(num_env_runners=0, num_envs_per_env_runner=2)
            .training(train_batch_size_per_learner=batch, minibatch_size=batch // 2, num_epochs=1)
            .debugging(seed=3))


def experiment(out: Path) -> None:
    """A Tune experiment whose config names the user's env, Learner and callbacks."""
    config = (small(PPOConfig().environment("UserCartPole-v0", env_config={"max_steps": 200, "scale": 1.0}))
              .training(learner_class=my_rl_project.UserLearner)
              .callbacks(my_rl_project.UserCallbacks)
              .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
              .evaluation(evaluation_interval=1, evaluation_duration=2, evaluation_config={"explore": False}))
    tuner = tune.Tuner("PPO", param_space=config, run_config=tune.RunConfig(
        name="my_experiment", storage_path=str(out / "ray_storage"), stop={"training_iteration": 1}, verbose=0,
        checkpoint_config=tune.CheckpointConfig(checkpoint_at_end=True)))
    result = tuner.fit()
    assert not result.errors, result.errors


def save(config: PPOConfig, out: Path, iterations: int = 1) -> None:
    algo = config.build_algo()
    for _ in range(iterations):
        algo.train()
    algo.save(str(out.resolve()))
    algo.stop()


def eval_time_limit(out: Path) -> None:
    """evaluation_config cuts Pendulum's episodes to 100 steps; training ran 200."""
    save(small(PPOConfig().environment("Pendulum-v1"))
         .rl_module(model_config=DefaultModelConfig(fcnet_hiddens=[16]))
         .evaluation(evaluation_interval=1, evaluation_duration=1,
                     evaluation_config={"env_config": {"max_episode_steps": 100}}), out / "eval_time_limit")


def strict_module(out: Path) -> None:
    save(small(PPOConfig().environment("UserCartPole-v0"))
         .rl_module(rl_module_spec=RLModuleSpec(module_class=my_rl_project.StrictModule),
                    model_config=DefaultModelConfig(fcnet_hiddens=[16])), out / "strict_module")


def float_carracing(out: Path) -> None:
    """Pixels behind a float32 wrapper, RLlib's default CNN encoder for 96x96 frames."""
    save(small(PPOConfig().environment("FloatCarRacing-v0", env_config={"max_steps": 40}), batch=64)
         .env_runners(num_envs_per_env_runner=1), out / "float_carracing")


BUILDERS = {f.__name__: f for f in (experiment, eval_time_limit, strict_module, float_carracing)}


def main(argv: list[str]) -> None:
    out, names = Path(argv[0]).resolve(), argv[1:] or list(BUILDERS)  # pyarrow needs absolute paths
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    for name in names:
        BUILDERS[name](out)
        print(f"trained {name}", flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
