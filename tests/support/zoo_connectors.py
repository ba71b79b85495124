"""Tiny real PPO checkpoints, one per connector piece / space / module kind of the conformance matrix:

    python -m tests.support.zoo_connectors OUT_DIR [NAME ...]   (from the repository root)

Each trains one iteration on a handful of steps: the point is a real checkpoint of each shape (its
pipelines saved with their state), not a good policy. Run in a subprocess (ray.init, training) so that
the test process only restores them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import ray
from ray.rllib.algorithms.ppo import PPOConfig
from ray.rllib.connectors.env_to_module import FlattenObservations, MeanStdFilter, PrevActionsPrevRewards
from ray.rllib.connectors.env_to_module.frame_stacking import FrameStackingEnvToModule
from ray.rllib.connectors.learner.frame_stacking import FrameStackingLearner
from ray.rllib.core import DEFAULT_MODULE_ID
from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
from ray.rllib.examples.envs.classes.cartpole_with_dict_observation_space import CartPoleWithDictObservationSpace
from ray.rllib.examples.envs.classes.stateless_cartpole import StatelessCartPole

from tests.support import zoo_envs

MLP = DefaultModelConfig(fcnet_hiddens=[8])
CNN = DefaultModelConfig(conv_filters=[[4, [2, 2], 1]], head_fcnet_hiddens=[8])
LSTM = DefaultModelConfig(fcnet_hiddens=[8], use_lstm=True, lstm_cell_size=8, max_seq_len=8)
CNN_LSTM = DefaultModelConfig(conv_filters=[[4, [2, 2], 1]], use_lstm=True, lstm_cell_size=8, max_seq_len=8)



def _pieces(*factories: Callable) -> Callable:
    """An env_to_module_connector callable (env, spaces, device) -> [pieces]."""
    def make(env=None, spaces=None, device=None):
        return [factory() for factory in factories]
    return make


def prev_actions_rewards() -> PrevActionsPrevRewards:
    return PrevActionsPrevRewards(n_prev_actions=1, n_prev_rewards=1)


def flatten() -> FlattenObservations:
    return FlattenObservations()


def mean_std() -> MeanStdFilter:
    return MeanStdFilter()


def frame_stack() -> FrameStackingEnvToModule:
    return FrameStackingEnvToModule(num_frames=3)


def user_scale():
    return zoo_envs.ScaleObservations(factor=0.5)


def structured(obs: str, action: str) -> dict:
    return {"obs": obs, "action": action, "max_steps": 40}


# name -> (env, env_config, env_to_module factories, model config, extra config calls)
ZOO: dict[str, tuple] = {
    "lstm": (zoo_envs.StructuredCartPole, structured("box", "discrete"), (), LSTM),
    "prev_ap_lstm": (StatelessCartPole, {}, (prev_actions_rewards, flatten), LSTM),
    "dict_flatten": (CartPoleWithDictObservationSpace, {}, (flatten,), MLP),
    "framestack": (zoo_envs.StructuredCartPole, structured("channel", "discrete"), (frame_stack,), CNN),
    "framestack_lstm": (zoo_envs.StructuredCartPole, structured("channel", "discrete"), (frame_stack,), CNN_LSTM),
    "meanstd_lstm": ("CartPole-v1", {"max_episode_steps": 60}, (mean_std,), LSTM),
    "meanstd": ("CartPole-v1", {"max_episode_steps": 80}, (mean_std,), MLP),
    "user_module_to_env": (zoo_envs.StructuredCartPole, structured("box", "discrete"), (), MLP),
    "user_connector": (zoo_envs.StructuredCartPole, structured("box", "multidiscrete"), (user_scale,), MLP),
    "tuple_obs_dict_act": (zoo_envs.StructuredCartPole, structured("tuple", "dict"), (flatten,), MLP),
    "dict_act": (zoo_envs.StructuredCartPole, structured("box", "dict"), (), MLP),  # stock pipelines, Dict actions
    "multibinary_obs_tuple_act": (zoo_envs.StructuredCartPole, structured("multibinary", "tuple"), (flatten,), MLP),
    "dict_obs_lstm": (zoo_envs.StructuredCartPole, structured("dict", "discrete"), (flatten,), LSTM),
}


def config_for(name: str) -> PPOConfig:
    env, env_config, factories, model = ZOO[name]
    config = (PPOConfig().environment(env, env_config=env_config)
              .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
              .training(train_batch_size_per_learner=64, minibatch_size=32, num_epochs=1)
              .rl_module(model_config=model)
              .debugging(seed=3))
    if factories:
        config = config.env_runners(env_to_module_connector=_pieces(*factories))
    if name == "user_module_to_env":  # a module-to-env piece of the user's own, from their module
        config = config.env_runners(module_to_env_connector=lambda env=None, spaces=None: zoo_envs.InvertActions())
    if frame_stack in factories:
        config = config.training(learner_connector=lambda *_: FrameStackingLearner(num_frames=3))
    return config


#: checkpoints whose policy head is scaled up after training (then synced to the env runners, as a training
#: step syncs): an untrained small LSTM's logits barely move with its state, so a wrong state would not show
LIVELY, LIVELY_SCALE = {"lstm"}, 8.0


def _liven(algo) -> None:
    import torch

    module = algo.learner_group._learner.module[DEFAULT_MODULE_ID]
    with torch.no_grad():
        for parameter in module.pi.parameters():
            parameter.mul_(LIVELY_SCALE)
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)


def _balance(algo, inverted: bool = False) -> None:
    """Weights that push towards where the pole falls and the cart stands (the sign of the module's input
    angle and position): returns then vary from seed to seed and hang on what the module sees (a filter's
    statistics). `inverted`: the module picks the other action (for a module-to-env piece that inverts it)."""
    import torch

    module = algo.learner_group._learner.module[DEFAULT_MODULE_ID]
    with torch.no_grad():
        first = module.encoder.encoder.net.mlp[0]
        first.weight.zero_(), first.bias.zero_()
        first.weight[0, 0], first.weight[0, 2] = 1.0, 4.0  # not a good controller: it falls, late
        first.weight[1] = -first.weight[0]
        head = module.pi.net.mlp[0]
        head.weight.zero_(), head.bias.zero_()
        head.weight[1 - int(inverted), 0], head.weight[int(inverted), 1] = 1.0, 1.0  # h0 > 0: push right (1)
    algo.env_runner_group.sync_weights(from_worker_or_learner_group=algo.learner_group, inference_only=True)


def train(name: str, out: Path) -> None:
    algo = config_for(name).build_algo()
    algo.train()
    if name in LIVELY:
        _liven(algo)
    if name in ("meanstd", "user_module_to_env"):
        _balance(algo, inverted=name == "user_module_to_env")
    algo.save(str((out / name).resolve()))
    algo.stop()


def main(argv: list[str]) -> None:
    out, names = Path(argv[0]).resolve(), argv[1:] or list(ZOO)
    ray.init(address="local", num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    for name in names:
        train(name, out)
        print(f"trained {name}", flush=True)
    ray.shutdown()


if __name__ == "__main__":
    main(sys.argv[1:])
