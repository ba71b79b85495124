"""MultiAgentEnvs that test the paths' multi-agent episodes (registered with Tune on import), both RLlib's
MultiAgentCartPole: one whose world breaks on some seeds (agent 0 gets a NaN observation at step 3 of every
even seed's episode), one whose agent 1 joins mid-episode (its first observation comes at step JOIN_AT), one
whose world hangs on seed FREEZE_SEED (step FREEZE_AT never returns: a simulator that hangs, in a Ray actor),
one whose agents cannot render (no rgb_array)."""

import time

import numpy as np
from ray.rllib.examples.envs.classes.multi_agent import MultiAgentCartPole
from ray.tune.registry import register_env

BREAKING = "BreakingMultiAgentCartPole-v0"
BREAK_AT = 3


class BreakingMultiAgentCartPole(MultiAgentCartPole):
    def reset(self, *, seed=None, options=None):
        self.breaks, self.steps = seed is not None and seed % 2 == 0, 0
        return super().reset(seed=seed, options=options)

    def step(self, action_dict):
        obs, rewards, terminateds, truncateds, infos = super().step(action_dict)
        self.steps += 1
        if self.breaks and self.steps == BREAK_AT and 0 in obs:
            obs[0] = np.full_like(obs[0], np.nan)
        return obs, rewards, terminateds, truncateds, infos


register_env(BREAKING, lambda config: BreakingMultiAgentCartPole(config))


LATE_JOINING = "LateJoiningMultiAgentCartPole-v0"
JOIN_AT = 4


class LateJoiningMultiAgentCartPole(MultiAgentCartPole):
    def reset(self, *, seed=None, options=None):
        obs, infos = super().reset(seed=seed, options=options)
        self.seed_, self.steps = seed, 0
        obs.pop(1), infos.pop(1)
        return obs, infos

    def step(self, action_dict):
        obs, rewards, terminateds, truncateds, infos = super().step(action_dict)
        self.steps += 1
        if self.steps == JOIN_AT:  # agent 1 appears: its own pole, reset now
            obs[1], infos[1] = self.envs[1].reset(seed=self.seed_)
        return obs, rewards, terminateds, truncateds, infos


register_env(LATE_JOINING, lambda config: LateJoiningMultiAgentCartPole(config))


FREEZING = "FreezingMultiAgentCartPole-v0"
FREEZE_SEED, FREEZE_AT = 3, 2


class FreezingMultiAgentCartPole(MultiAgentCartPole):
    def reset(self, *, seed=None, options=None):
        self.freezes, self.steps = seed == FREEZE_SEED, 0
        return super().reset(seed=seed, options=options)

    def step(self, action_dict):
        self.steps += 1
        if self.freezes and self.steps == FREEZE_AT:
            time.sleep(600)  # only in a Ray actor, which the run's watchdog ends
        return super().step(action_dict)


register_env(FREEZING, lambda config: FreezingMultiAgentCartPole(config))


BLIND = "BlindMultiAgentCartPole-v0"


class BlindMultiAgentCartPole(MultiAgentCartPole):
    """Its agents' CartPoles offer no render mode at all (a simulator without a renderer)."""

    def __init__(self, config=None):
        super().__init__(config)
        for env in self.envs:
            env.unwrapped.metadata = {**env.unwrapped.metadata, "render_modes": []}


register_env(BLIND, lambda config: BlindMultiAgentCartPole(config))
