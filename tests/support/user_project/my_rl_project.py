"""A user's own RLlib project, as people write them: envs registered with Tune, a wrapper, a Learner
subclass, callbacks and a custom module, all in the user's module (not importable from elsewhere)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
from ray.rllib.algorithms.ppo.torch.ppo_torch_learner import PPOTorchLearner
from ray.rllib.callbacks.callbacks import RLlibCallback
from ray.tune.registry import register_env


class RewardScale(gym.RewardWrapper):
    def __init__(self, env: gym.Env, scale: float):
        super().__init__(env)
        self.scale = scale

    def reward(self, reward):
        return reward * self.scale


def make_cartpole(config):
    """The creator checks it gets exactly its own env_config, as RLlib passes it."""
    unexpected = set(config) - {"max_steps", "scale"}
    if unexpected:
        raise ValueError(f"unexpected env_config keys: {sorted(unexpected)}")
    env = gym.make("CartPole-v1", max_episode_steps=config.get("max_steps", 500))
    return RewardScale(env, config.get("scale", 1.0))


class FloatPixels(gym.ObservationWrapper):
    """CarRacing's uint8 frames as float32 in [0, 1]."""

    def __init__(self, env: gym.Env):
        super().__init__(env)
        self.observation_space = gym.spaces.Box(0.0, 1.0, env.observation_space.shape, np.float32)

    def observation(self, observation):
        return (observation / 255.0).astype(np.float32)


def make_float_carracing(config):
    env = gym.make("CarRacing-v3", continuous=False, max_episode_steps=config.get("max_steps", 1000))
    return FloatPixels(env)


register_env("UserCartPole-v0", make_cartpole)
register_env("FloatCarRacing-v0", make_float_carracing)


class UserLearner(PPOTorchLearner):
    pass


class UserCallbacks(RLlibCallback):
    def on_episode_end(self, *, episode, metrics_logger, **kwargs):
        metrics_logger.log_value("user_episode_len", len(episode))


class StrictModule(DefaultPPOTorchRLModule):
    """Its greedy (inference) forward refuses observations outside a narrow range: a policy-side bug."""

    def _forward_inference(self, batch, **kwargs):
        if float(batch["obs"].abs().max()) > 0.01:
            raise ValueError("observation outside the range this module accepts")
        return super()._forward_inference(batch, **kwargs)
