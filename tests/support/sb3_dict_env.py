"""A CartPole whose observation is a Dict (`position`: cart position and pole angle, `velocity`: their rates), for
SB3's MultiInputPolicy. Gymnasium id `tests.support.sb3_dict_env:DictCartPole-v0` (importing this module
registers it)."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

ENV_ID = "tests.support.sb3_dict_env:DictCartPole-v0"


class DictCartPole(gym.ObservationWrapper):
    def __init__(self, **kwargs: Any):
        super().__init__(CartPoleEnv(**kwargs))
        box = self.env.observation_space
        assert isinstance(box, gym.spaces.Box)
        self.observation_space = gym.spaces.Dict({
            "position": gym.spaces.Box(box.low[[0, 2]], box.high[[0, 2]], dtype=np.float32),
            "velocity": gym.spaces.Box(box.low[[1, 3]], box.high[[1, 3]], dtype=np.float32)})

    def observation(self, observation: np.ndarray) -> dict[str, np.ndarray]:
        return {"position": observation[[0, 2]], "velocity": observation[[1, 3]]}


def make_dict_cartpole(**kwargs: Any) -> gym.Env:
    return DictCartPole(**kwargs)


if "DictCartPole-v0" not in gym.registry:
    gym.register("DictCartPole-v0", entry_point=make_dict_cartpole, max_episode_steps=500)
