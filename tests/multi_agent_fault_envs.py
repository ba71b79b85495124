"""A MultiAgentEnv whose world breaks on some seeds (registered with Tune on import): RLlib's
MultiAgentCartPole giving agent 0 a NaN observation at step 3 of every even seed's episode."""

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
