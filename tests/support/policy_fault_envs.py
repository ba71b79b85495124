"""A CartPole whose observation changes shape mid-run, registered with Gymnasium on import
(`--env tests.support.policy_fault_envs:ReshapingCartPole-v0`): the vector env cannot stack it, so the path stepping it
fails (a policy-side failure, not an invalid world) after the seeds before BREAK_SEED finished. It is the
only way to make a real path fail partway through a run."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

BREAK_SEED = 10


class ReshapingCartPole(CartPoleEnv):
    """On seed BREAK_SEED, the third step returns 5 numbers where the space says 4."""

    def reset(self, *, seed=None, options=None):
        self._breaks, self._t = seed == BREAK_SEED, 0
        return super().reset(seed=seed, options=options)

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        self._t += 1
        if self._breaks and self._t == 3:
            obs = np.append(obs, np.float32(0.0))
        return obs, reward, terminated, truncated, info


gym.register("ReshapingCartPole-v0", entry_point=ReshapingCartPole, max_episode_steps=500)
