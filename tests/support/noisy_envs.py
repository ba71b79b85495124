"""A simulator that does not repeat itself, registered with Gymnasium on import
(`--env tests.support.noisy_envs:NoisyPendulum-v0`): Pendulum-v1 whose state gets a push of about 1e-6
from a generator nobody seeds at every step, as a GPU simulator's non-deterministic kernels perturb a rollout."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control.pendulum import PendulumEnv

PUSH = 1e-6


class NoisyPendulum(PendulumEnv):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._noise = np.random.default_rng()  # fresh entropy: no seed reaches it

    def step(self, action):
        self.state = self.state + self._noise.normal(0.0, PUSH, size=2)
        return super().step(action)


if "NoisyPendulum-v0" not in gym.registry:
    gym.register("NoisyPendulum-v0", entry_point=NoisyPendulum, max_episode_steps=200)
