"""Envs that break on purpose, registered with Gymnasium on import (`--env tests.support.fault_envs:NanCartPole-v0`).

They are real CartPole envs whose world blows up on chosen seeds: the only way to cause these faults.
"""

from __future__ import annotations

import threading

import gymnasium as gym
import numpy as np
from gymnasium.envs.classic_control.cartpole import CartPoleEnv

BREAK_AT_STEP = 5


def breaks(seed: int | None) -> bool:
    """Every third seed breaks."""
    return seed is not None and seed % 3 == 0


class _BreaksOnSomeSeeds(CartPoleEnv):
    """Remembers at reset whether this episode's seed breaks."""

    def reset(self, *, seed=None, options=None):
        self._breaks, self._t = breaks(seed), 0
        return super().reset(seed=seed, options=options)


class NanCartPole(_BreaksOnSomeSeeds):
    """On a breaking seed, the observation turns NaN at step BREAK_AT_STEP."""

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        self._t += 1
        if self._breaks and self._t == BREAK_AT_STEP:
            obs = np.full_like(obs, np.nan)
        return obs, reward, terminated, truncated, info


class RaisingCartPole(_BreaksOnSomeSeeds):
    """On a breaking seed, step BREAK_AT_STEP raises (a simulator crash)."""

    def step(self, action):
        self._t += 1
        if self._breaks and self._t == BREAK_AT_STEP:
            raise RuntimeError("simulated physics blow-up")
        return super().step(action)


#: set by tests at teardown so that frozen steps finally return and their threads end
RELEASE_FROZEN = threading.Event()


class FreezingCartPole(_BreaksOnSomeSeeds):
    """On a breaking seed, step BREAK_AT_STEP never returns (a simulator that hangs)."""

    def step(self, action):
        self._t += 1
        if self._breaks and self._t == BREAK_AT_STEP:
            RELEASE_FROZEN.wait(600)
        return super().step(action)


class UnseededCartPole(CartPoleEnv):
    """Draws its observation noise from numpy's global generator, not from its reset seed (as RLlib's own
    CartPoleWithDictObservationSpace draws a part of its observation): the same seed gives other episodes."""

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs + np.random.normal(0.0, 0.05, size=obs.shape).astype(obs.dtype), reward, terminated, truncated, info


for _name, _cls in (("NanCartPole-v0", NanCartPole), ("RaisingCartPole-v0", RaisingCartPole),
                    ("FreezingCartPole-v0", FreezingCartPole), ("UnseededCartPole-v0", UnseededCartPole)):
    if _name not in gym.registry:
        gym.register(_name, entry_point=_cls, max_episode_steps=500)
