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
    """On a breaking seed, step BREAK_AT_STEP never returns (a simulator that hangs). The file named by
    $TUI_EVAL_TEST_FREEZE_MARK, if set, is created as the step freezes: a test knows the step is stuck."""

    def step(self, action):
        self._t += 1
        if self._breaks and self._t == BREAK_AT_STEP:
            import os

            mark = os.environ.get("TUI_EVAL_TEST_FREEZE_MARK")
            if mark:
                open(mark, "a").close()
            RELEASE_FROZEN.wait(600)
        return super().step(action)


#: a generator of its own, seeded from the OS: nothing tui-eval seeds reaches it
_UNSEEDED = np.random.default_rng()


class UnseededCartPole(CartPoleEnv):
    """Draws its observation noise from a generator of its own that no seed reaches (as RLlib's ActionMaskEnv
    samples its spaces): the same seed gives other episodes."""

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs + _UNSEEDED.normal(0.0, 0.05, size=obs.shape).astype(obs.dtype), reward, terminated, truncated, info


class GlobalNoiseCartPole(CartPoleEnv):
    """Draws its observation noise from NumPy's process-wide generator (as RLlib's own
    CartPoleWithDictObservationSpace does): repeatable once that generator follows the episode's seed."""

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs + np.random.normal(0.0, 0.05, size=obs.shape).astype(obs.dtype), reward, terminated, truncated, info


for _name, _cls in (("NanCartPole-v0", NanCartPole), ("RaisingCartPole-v0", RaisingCartPole),
                    ("FreezingCartPole-v0", FreezingCartPole), ("UnseededCartPole-v0", UnseededCartPole)):
    if _name not in gym.registry:
        gym.register(_name, entry_point=_cls, max_episode_steps=500)


#: resets after which a DriftingCartPole drifts, per process: more than the seed probe makes (5)
DRIFT_AFTER = 8
_resets_in_this_process = [0]


class DriftingCartPole(CartPoleEnv):
    """Repeats itself from its seed for its first DRIFT_AFTER resets in a process, then pays 2 per step: an env
    whose episode depends on the process's history (wear, a cache, a counter), which no seed probe can see
    (it plays fewer episodes). Only replaying a differing seed alone shows it."""

    def reset(self, *, seed=None, options=None):
        _resets_in_this_process[0] += 1
        self._drifted = _resets_in_this_process[0] > DRIFT_AFTER
        return super().reset(seed=seed, options=options)

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        return obs, reward * (2.0 if self._drifted else 1.0), terminated, truncated, info


class CrashingCartPole(CartPoleEnv):
    """Crashes its process (SIGSEGV, as a simulator's native code does) at step 3 of seed CRASH_SEED, once: the
    file named by $TUI_EVAL_TEST_CRASH_MARK is created first, and while it exists nothing crashes. Only in a
    path's own process: never the test's."""

    CRASH_SEED = 1000000002

    def reset(self, *, seed=None, options=None):
        self._seed, self._t = seed, 0
        return super().reset(seed=seed, options=options)

    def step(self, action):
        import os
        import signal

        self._t += 1
        mark = os.environ.get("TUI_EVAL_TEST_CRASH_MARK")
        if (self._seed == self.CRASH_SEED and self._t == 3 and mark and not os.path.exists(mark)
                and os.environ.get("TUI_EVAL_PATH_PROCESS")):
            open(mark, "w").close()
            os.kill(os.getpid(), signal.SIGSEGV)
        return super().step(action)


for _name, _cls in (("DriftingCartPole-v0", DriftingCartPole), ("CrashingCartPole-v0", CrashingCartPole),
                    ("GlobalNoiseCartPole-v0", GlobalNoiseCartPole)):
    if _name not in gym.registry:
        gym.register(_name, entry_point=_cls, max_episode_steps=500)
