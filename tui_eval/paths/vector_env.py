"""A Gymnasium vector env of GuardedEnvs that all take their reset seeds from one feed."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.wrappers.vector import DictInfoToList

from tui_eval.envs import GuardedEnv, import_registrations
from tui_eval.feed import FeedRelay


def make_guarded_vector_env(env_id: str, env_config: dict[str, Any], num_envs: int, relay: FeedRelay,
                            success_key: str | None, step_timeout: float | None) -> gym.vector.VectorEnv:
    """`num_envs` sub-envs stepped in sync, autoresetting in NEXT_STEP mode and with per-env info dicts,
    as RLlib's SingleAgentEnvRunner builds them (gym.make_vec + DictInfoToList)."""
    import_registrations()

    def guard(env: gym.Env) -> gym.Wrapper:
        return GuardedEnv(env, feed=relay, success_key=success_key, step_timeout=step_timeout)

    vec = gym.make_vec(env_id, num_envs=num_envs, vectorization_mode="sync", wrappers=[guard], **env_config)
    return DictInfoToList(vec)
