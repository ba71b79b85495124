"""Small tasks of our own, registered with Gymnasium on import (for the bundled demo checkpoints)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class PointGoalEnv(gym.Env):
    """A point in the unit square steers to a goal; success when it gets within `radius` of it.

    Observation: (x, y, goal_x, goal_y); action: a velocity in [-1, 1]^2 scaled by `speed`.
    Reward: minus the distance to the goal each step, +10 on reaching it (which ends the episode).
    `info["is_success"]` is set at every step, so the flag is there at the episode's end.
    """

    metadata = {"render_modes": []}

    def __init__(self, radius: float = 0.08, speed: float = 0.05):
        self.radius = radius
        self.speed = speed
        self.observation_space = spaces.Box(-1.0, 2.0, shape=(4,), dtype=np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, shape=(2,), dtype=np.float32)
        self._pos = np.zeros(2)
        self._goal = np.zeros(2)

    def _obs(self) -> np.ndarray:
        return np.concatenate([self._pos, self._goal]).astype(np.float32)

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        self._pos = self.np_random.uniform(0.0, 1.0, size=2)
        self._goal = self.np_random.uniform(0.0, 1.0, size=2)
        return self._obs(), {"is_success": False}

    def step(self, action):
        move = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0) * self.speed
        self._pos = np.clip(self._pos + move, 0.0, 1.0)
        distance = float(np.linalg.norm(self._pos - self._goal))
        success = distance < self.radius
        reward = -distance + (10.0 if success else 0.0)
        return self._obs(), reward, success, False, {"is_success": success}


if "PointGoal-v0" not in gym.registry:
    # gymnasium's EnvCreator protocol wants **kwargs; the class takes its keywords by name
    gym.register("PointGoal-v0", entry_point=PointGoalEnv, max_episode_steps=100)  # type: ignore[arg-type]
