"""Envs for the cluster tests and benchmark, importable by Ray's workers (`--env tests.support.cluster_envs:ID`).

- `StampedCartPole-v1`: CartPole that appends "seed wall-clock-time" to `stamp_file` at every seeded reset,
  so a test can tell when each episode started, whichever process ran it.
- `BusyCartPole-v1`: CartPole whose step also does `work` matrix products (CPU-bound, like a simulator).
"""

from __future__ import annotations

import time

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

NODE_CPUS = 2  # per worker node of the cluster tests' cluster: two nodes hold the four actors of 2 paths x 2 workers


class StampedCartPole(CartPoleEnv):
    def __init__(self, stamp_file: str = "", **kwargs):
        super().__init__(**kwargs)
        self.stamp_file = stamp_file

    def reset(self, *, seed=None, options=None):
        if self.stamp_file and seed is not None:
            with open(self.stamp_file, "a") as fh:
                fh.write(f"{seed} {time.time():.6f}\n")
        return super().reset(seed=seed, options=options)


class BusyCartPole(CartPoleEnv):
    def __init__(self, work: int = 20, **kwargs):
        super().__init__(**kwargs)
        self.work = work
        self._matrix = np.random.default_rng(0).standard_normal((48, 48))

    def step(self, action):
        m = self._matrix
        for _ in range(self.work):  # a simulator's inner loop: real arithmetic, no sleeping
            m = np.tanh(m @ self._matrix)
        return super().step(action)


for _id, _entry in (("StampedCartPole-v1", StampedCartPole), ("BusyCartPole-v1", BusyCartPole)):
    if _id not in gym.registry:
        gym.register(_id, entry_point=_entry, max_episode_steps=500)  # type: ignore[arg-type]
